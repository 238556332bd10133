/* The network threads: each one's UCX context and worker, its connections to other
 * daemons' workers and their challenge, the requests in flight and their answers (net.h;
 * the callers' side is request.c). */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "log.h"
#include "meta.h"
#include "net/auth.h"
#include "net/net.h"
#include "net/net_int.h"
#include "net/peer_rec.h"
#include "store/conn.h"
#include "store/lease.h"
#include "store/peer.h"
#include "util/clock.h"
#include "util/guard.h"

_Static_assert(TFS_NET_THREADS_MAX == TFS_NET_ADDRS_MAX, "one address per network thread");

struct tfs_net_thread tfs_nt = { .mu = PTHREAD_MUTEX_INITIALIZER };
/* The network thread this is, on one (tfs_net_carried). */
static __thread struct tfs_net_worker *me;

int64_t tfs_net_now_ms(void)
{
	return tfs_mono_ns() / 1000000;
}

void tfs_net_op_put(struct op *o)
{
	int last;

	pthread_mutex_lock(&tfs_nt.mu);
	last = --o->refs == 0;
	pthread_mutex_unlock(&tfs_nt.mu);
	if (last) {
		pthread_cond_destroy(&o->cv);
		free(o->hdr);
		if (!o->ext)
			free(o->data);
		free(o);
	}
}

/* Ends o with result r: its caller wakes. Network thread; drops the thread's reference. */
static void op_finish(struct op *o, ssize_t r)
{
	struct tfs_net_worker *wk = o->wk;

	if (o->in_flight) {
		struct op **pp;

		for (pp = &wk->flight; *pp && *pp != o; pp = &(*pp)->all_next)
			;
		if (*pp)
			*pp = o->all_next;
		o->in_flight = 0;
		wk->nflight--;
	}
	if (r > 0 && !o->handshake)
		atomic_fetch_add_explicit(&wk->bytes, (uint64_t)r, memory_order_relaxed);
	pthread_mutex_lock(&tfs_nt.mu);
	if (!o->done) {
		o->done = 1;
		o->result = r;
		pthread_cond_signal(&o->cv);
	}
	pthread_mutex_unlock(&tfs_nt.mu);
	tfs_net_op_put(o);
}

static void send_done(void *req, ucs_status_t st, void *user)
{
	struct op *o = user;

	(void)st;
	ucp_request_free(req);
	tfs_net_op_put(o);
}

/* Sends o to its peer, and keeps it in flight. */
static void op_send(struct op *o)
{
	ucp_request_param_t p = { 0 };
	ucs_status_ptr_t r;

	o->hdr->sid = o->peer->sid;
	if (!o->handshake)
		tfs_net_mac_request(o->peer->sk, o->hdr, sizeof(*o->hdr), o->hdr + 1,
				    o->hlen - sizeof(*o->hdr), o->hdr->mac);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
			 UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = UCP_AM_SEND_FLAG_REPLY;
	p.cb.send = send_done;
	p.user_data = o;
	o->in_flight = 1;
	o->all_next = o->wk->flight;
	o->wk->flight = o;
	o->wk->nflight++;
	pthread_mutex_lock(&tfs_nt.mu);
	o->refs++;                   /* the send's, until UCX is done with the bytes */
	pthread_mutex_unlock(&tfs_nt.mu);
	r = ucp_am_send_nbx(o->peer->ep, TFS_NET_AM_REQ, o->hdr, o->hlen,
			    o->write ? o->data : NULL, o->write ? o->len : 0, &p);
	if (r == NULL) {
		tfs_net_op_put(o);
	} else if (UCS_PTR_IS_ERR(r)) {
		tfs_net_op_put(o);
		op_finish(o, -ECONNRESET);
	}
}

struct op *tfs_net_op_new(size_t namelen, size_t datalen)
{
	struct op *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->hdr = calloc(1, sizeof(*o->hdr) + namelen);
	o->data = datalen ? malloc(datalen) : NULL;
	if (!o->hdr || (datalen && !o->data)) {
		free(o->hdr);
		free(o->data);
		free(o);
		return NULL;
	}
	o->hlen = sizeof(*o->hdr) + namelen;
	o->len = datalen;
	o->refs = 1;
	o->hdr->magic = TFS_NET_MAGIC;
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&o->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	return o;
}

/* The peer's connection is gone or refused: every request on it ends with err. */
static void peer_reset(struct peer *pr, int err)
{
	ucp_request_param_t p = { 0 };
	struct tfs_net_worker *wk = pr->wk;
	struct op *o, *next, **pp;

	for (o = pr->waiting; o; o = next) {
		next = o->next;
		op_finish(o, err);
	}
	pr->waiting = NULL;
	for (pp = &wk->flight; *pp;) {
		o = *pp;
		if (o->peer == pr) {
			*pp = o->all_next;
			o->in_flight = 0;
			wk->nflight--;
			op_finish(o, err);
		} else {
			pp = &o->all_next;
		}
	}
	if (pr->ep) {
		ucs_status_ptr_t r;

		p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		p.flags = UCP_EP_CLOSE_FLAG_FORCE;
		r = ucp_ep_close_nbx(pr->ep, &p);
		if (UCS_PTR_IS_PTR(r)) {
			int64_t end = tfs_net_now_ms() + 1000;

			while (ucp_request_check_status(r) == UCS_INPROGRESS && tfs_net_now_ms() < end)
				ucp_worker_progress(wk->w);
			ucp_request_free(r);
		}
	}
	pr->ep = NULL;
	pr->state = P_NONE;
	pr->err = 0;
	pthread_mutex_lock(&tfs_nt.mu);
	tfs_nt.nodes[pr->node].has_rec = 0;  /* read it again: the daemon may have restarted */
	pthread_mutex_unlock(&tfs_nt.mu);
}

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t st)
{
	struct peer *pr = arg;

	(void)ep;
	if (!pr->err)
		tfs_log(LOG_WARNING, "node %s: the connection to its daemon failed: %s",
			tfs_nt.nodes[pr->node].node, ucs_status_string(st));
	pr->err = -ECONNRESET;
}

/* Connects pr to the worker at addr, of the daemon of epoch, and says hello. */
static int peer_connect(struct peer *pr, const void *addr, uint64_t epoch)
{
	ucp_ep_params_t ep = { 0 };
	const char *node = tfs_nt.nodes[pr->node].node;
	struct op *h;
	ucs_status_t st;

	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)addr;
	ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
	ep.err_handler.cb = ep_error;
	ep.err_handler.arg = pr;
	st = ucp_ep_create(pr->wk->w, &ep, &pr->ep);
	if (st == UCS_ERR_UNREACHABLE) {
		/* Shared memory has no peer failure detection in UCX: without it, a dead peer
		 * is noticed at the request's deadline instead (sweep). */
		ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
		st = ucp_ep_create(pr->wk->w, &ep, &pr->ep);
		if (st == UCS_OK)
			tfs_log(LOG_INFO, "node %s: reached over a transport without failure "
				"detection: a dead daemon is noticed after %d ms", node,
				tfs_nt.timeout_ms);
	}
	if (st != UCS_OK) {
		pr->ep = NULL;
		tfs_log(LOG_WARNING, "node %s: cannot reach its daemon over UCX: %s", node,
			ucs_status_string(st));
		return -ECONNREFUSED;
	}
	pr->epoch = epoch;
	pr->sid = 0;
	h = tfs_net_op_new(0, 0);
	if (!h || tfs_net_random(pr->nc, sizeof(pr->nc))) {
		if (h)
			tfs_net_op_put(h);
		return -ENOMEM;
	}
	h->handshake = 1;
	h->peer = pr;
	h->wk = pr->wk;
	h->deadline_ms = tfs_net_now_ms() + tfs_nt.timeout_ms;
	h->hdr->op = TFS_NET_HELLO;
	h->hdr->req = __atomic_add_fetch(&tfs_nt.next_req, 1, __ATOMIC_RELAXED);
	memcpy(h->hdr->nonce, pr->nc, sizeof(pr->nc));
	pr->state = P_HELLO;
	op_send(h);
	return 0;
}

int tfs_net_node_find(const char *node, int make)
{
	for (int i = 0; i < tfs_nt.nnodes; i++)
		if (!strcmp(tfs_nt.nodes[i].node, node))
			return i;
	if (!make || tfs_nt.nnodes == MAX_PEERS)
		return -1;
	snprintf(tfs_nt.nodes[tfs_nt.nnodes].node, TFS_NODE_MAX, "%s", node);
	return tfs_nt.nnodes++;
}

/* wk's connection to node's worker aidx, made (unconnected) when there is none: NULL
 * when the table is full. */
static struct peer *conn_find(struct tfs_net_worker *wk, int node, int aidx)
{
	struct peer *pr;

	for (int i = 0; i < wk->nconns; i++)
		if (wk->conns[i].node == node && wk->conns[i].aidx == aidx)
			return &wk->conns[i];
	if (wk->nconns == MAX_CONNS)
		return NULL;
	pr = &wk->conns[wk->nconns++];
	memset(pr, 0, sizeof(*pr));
	pr->wk = wk;
	pr->node = node;
	pr->aidx = aidx;
	return pr;
}

/* A caller's request, on its network thread: onto the connection to its worker of the
 * node, made first if there is none or it was to an older daemon of the node. */
static void dispatch(struct op *o)
{
	struct peer *pr = conn_find(o->wk, o->node, o->aidx);

	if (!pr) {
		op_finish(o, -EAGAIN);
		return;
	}
	o->peer = pr;
	if (pr->ep && pr->epoch != o->epoch)
		peer_reset(pr, -ECONNRESET);
	if (!pr->ep) {
		uint8_t *addr = malloc(TFS_NET_ADDR_MAX);
		int rc = addr ? 0 : -ENOMEM;

		if (addr) {
			const struct node_rec *nr = &tfs_nt.nodes[o->node];

			pthread_mutex_lock(&tfs_nt.mu);
			if (nr->has_rec && nr->rec.epoch == o->epoch && o->aidx < nr->rec.naddr)
				memcpy(addr, nr->rec.addr + nr->rec.off[o->aidx],
				       nr->rec.len[o->aidx]);
			else
				rc = -ECONNRESET;
			pthread_mutex_unlock(&tfs_nt.mu);
		}
		if (!rc)
			rc = peer_connect(pr, addr, o->epoch);
		free(addr);
		if (rc) {
			op_finish(o, rc);
			return;
		}
	}
	if (pr->state != P_READY) {
		o->next = pr->waiting;
		pr->waiting = o;
		return;
	}
	op_send(o);
}

/* The answer to a HELLO or PROVE. */
static void handshake_reply(struct op *o, const struct tfs_net_hdr *r)
{
	struct peer *pr = o->peer;
	uint8_t mac[TFS_SHA256_LEN];
	struct op *p, *next;

	if (r->status < 0) {
		tfs_log(LOG_ERR, "node %s refused this daemon: %s (is the --cluster-key the same "
			"on both?)", tfs_nt.nodes[pr->node].node, strerror((int)-r->status));
		pr->err = r->status == -EACCES ? -EACCES : -ECONNREFUSED;
		op_finish(o, pr->err);
		return;
	}
	if (o->hdr->op == TFS_NET_HELLO) {
		tfs_net_mac_server(pr->nc, r->nonce, mac);
		if (!tfs_mac_equal(mac, r->mac, sizeof(mac))) {
			tfs_log(LOG_ERR, "node %s: its daemon does not prove the cluster key: "
				"refused (a different --cluster-key, or not a daemon of this cluster)",
				tfs_nt.nodes[pr->node].node);
			pr->err = -EACCES;
			op_finish(o, -EACCES);
			return;
		}
		memcpy(pr->ns, r->nonce, sizeof(pr->ns));
		pr->sid = r->sid;
		op_finish(o, 0);
		p = tfs_net_op_new(0, 0);
		if (!p) {
			pr->err = -ENOMEM;
			return;
		}
		p->handshake = 1;
		p->peer = pr;
		p->wk = pr->wk;
		p->deadline_ms = tfs_net_now_ms() + tfs_nt.timeout_ms;
		p->hdr->op = TFS_NET_PROVE;
		p->hdr->req = __atomic_add_fetch(&tfs_nt.next_req, 1, __ATOMIC_RELAXED);
		tfs_net_mac_client(pr->nc, pr->ns, p->hdr->mac);
		pr->state = P_PROVE;
		op_send(p);
		return;
	}
	tfs_net_session_key(pr->nc, pr->ns, pr->sk);
	pr->state = P_READY;
	op_finish(o, 0);
	for (p = pr->waiting, pr->waiting = NULL; p; p = next) {
		next = p->next;
		op_send(p);
	}
}

static struct op *flight_find(struct tfs_net_worker *wk, uint64_t req)
{
	for (struct op *o = wk->flight; o; o = o->all_next)
		if (o->hdr->req == req)
			return o;
	return NULL;
}

/* A read whose bytes are in ends now, or on its CONFIRM when one is due (which may come
 * first, over another lane). */
static void read_progress(struct op *o)
{
	if (!o->data_in || (o->want_confirm && !o->confirmed))
		return;
	if (o->confirmed && !o->want_confirm)
		op_finish(o, -EIO);          /* a CONFIRM that no answer announced */
	else if (o->confirmed)
		op_finish(o, o->cstatus < 0 || o->cstatus != o->got ? -EIO : o->got);
	else
		op_finish(o, o->got);
}

static void unbusy(struct op *o)
{
	pthread_mutex_lock(&tfs_nt.mu);
	o->busy = 0;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&tfs_nt.mu);
}

/* The rendezvous's reference: o may have been ended meanwhile (its peer failed). */
static void recv_done(void *req, ucs_status_t st, size_t length, void *user)
{
	struct op *o = user;

	ucp_request_free(req);
	unbusy(o);
	if (o->in_flight) {
		if (st != UCS_OK) {
			op_finish(o, -ECONNRESET);
		} else {
			o->data_in = 1;
			o->got = (ssize_t)length;
			read_progress(o);
		}
	}
	tfs_net_op_put(o);
}

static ucs_status_t on_reply(void *arg, const void *header, size_t hlen, void *data,
			     size_t len, const ucp_am_recv_param_t *param)
{
	struct tfs_net_hdr hdr;
	const struct tfs_net_hdr *r = &hdr;
	ucp_request_param_t p = { 0 };
	ucs_status_ptr_t q;
	struct tfs_net_worker *wk = arg;
	struct op *o;

	/* UCX hands the header wherever it lies in its receive buffer, aligned or not:
	 * copied out before its fields are read. */
	if (hlen != sizeof(hdr))
		return UCS_OK;
	memcpy(&hdr, header, sizeof(hdr));
	if (r->magic != TFS_NET_MAGIC || !(o = flight_find(wk, r->req)))
		return UCS_OK;
	/* Taken out of flight now; finished below or when the rendezvous ends. */
	if (o->handshake) {
		handshake_reply(o, r);
		return UCS_OK;
	}
	if (r->op == TFS_NET_CONFIRM) {
		if (o->write || o->confirmed) {
			op_finish(o, -EIO);
			return UCS_OK;
		}
		o->confirmed = 1;
		o->cstatus = r->status;
		read_progress(o);
		return UCS_OK;
	}
	if (o->data_in || o->busy) {
		op_finish(o, -EIO);          /* a second answer to one request */
		return UCS_OK;
	}
	if (r->status < 0 || o->write) {
		int64_t s = r->status;

		if (s < -4095 || s > (int64_t)o->len)
			s = -EIO;
		op_finish(o, (ssize_t)s);
		return UCS_OK;
	}
	if (len > o->len || (uint64_t)r->status != len) {
		op_finish(o, -EIO);
		return UCS_OK;
	}
	o->want_confirm = !!(r->flags & TFS_NET_F_CONFIRM);
	if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
		memcpy(o->data, data, len);
		o->data_in = 1;
		o->got = (ssize_t)len;
		read_progress(o);
		return UCS_OK;
	}
	/* Stays in flight (a failed peer finishes it) until the bytes are in. */
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv_am = recv_done;
	p.user_data = o;
	pthread_mutex_lock(&tfs_nt.mu);
	o->refs++;
	o->busy = 1;
	pthread_mutex_unlock(&tfs_nt.mu);
	q = ucp_am_recv_data_nbx(wk->w, data, o->data, len, &p);
	if (q == NULL || UCS_PTR_IS_ERR(q)) {
		unbusy(o);
		if (q == NULL) {
			o->data_in = 1;
			o->got = (ssize_t)len;
			read_progress(o);
		} else {
			op_finish(o, -EIO);
		}
		tfs_net_op_put(o);
	}
	return UCS_OK;
}

static ucs_status_t on_request(void *arg, const void *header, size_t hlen, void *data,
			       size_t len, const ucp_am_recv_param_t *param)
{
	struct tfs_net_worker *wk = arg;

	if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
		return UCS_OK;
	return tfs_net_serve_request(wk->w, param->reply_ep, header, hlen, data, len,
				     !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) ?
	       UCS_INPROGRESS : UCS_OK;
}

/* Peers whose connection failed, requests past their deadline (the peer is then taken
 * as gone: a network that went away answers nothing, and nothing else would end them). */
static void sweep(struct tfs_net_worker *wk)
{
	int64_t now = tfs_net_now_ms();

	for (int i = 0; i < wk->nconns; i++)
		if (wk->conns[i].err)
			peer_reset(&wk->conns[i], wk->conns[i].err);
	for (struct op *o = wk->flight; o; o = o->all_next)
		if (now > o->deadline_ms) {
			tfs_log(LOG_WARNING, "node %s: no answer from its daemon in %d ms: "
				"connection dropped", tfs_nt.nodes[o->peer->node].node,
				tfs_nt.timeout_ms);
			peer_reset(o->peer, -ETIMEDOUT);
			return;
		}
}

static void publish(void)
{
	static int64_t last;
	int64_t now = tfs_net_now_ms();
	int rc;

	if (now - last < 1000)
		return;
	last = now;
	rc = tfs_store_peer_publish(tfs_lease_token(), tfs_nt.rec, TFS_LEASE_MS);
	if (rc && rc != -EBUSY && now - tfs_nt.said_ms > 60000) {
		tfs_log(LOG_WARNING, "cannot publish this node's UCX address in Redis: %s",
			strerror(-rc));
		tfs_nt.said_ms = now;
	}
}

static void *thread_main(void *arg)
{
	struct tfs_net_worker *wk = arg;
	int waiting = 0;

	me = wk;
	tfs_net_serve_thread(wk->idx);
	/* UCX copies into and out of tensors' mappings on this thread (util/guard.h spans). */
	tfs_guard_thread();
	while (!tfs_nt.stop) {
		struct pollfd pf[2] = { { wk->efd, POLLIN, 0 }, { wk->wake, POLLIN, 0 } };
		struct op *o, *next;
		uint64_t v;

		pthread_mutex_lock(&tfs_nt.mu);
		o = wk->submit;
		wk->submit = NULL;
		wk->submit_tail = &wk->submit;
		pthread_mutex_unlock(&tfs_nt.mu);
		for (; o; o = next) {
			next = o->next;
			dispatch(o);
		}
		/* Bounded: under a steady stream progress never runs dry, and the address's
		 * renewal (publish) and the deadlines (sweep) must still come round. */
		int64_t until = tfs_net_now_ms() + 20;

		while (ucp_worker_progress(wk->w) && tfs_net_now_ms() < until)
			;
		waiting = tfs_net_serve_pending();
		waiting |= tfs_net_serve_staged();
		sweep(wk);
		if (wk->idx == 0)
			publish();
		if (ucp_worker_arm(wk->w) == UCS_ERR_BUSY)
			continue;
		/* UCX's events and the callers' wake it; 100 ms is the deadlines' cadence. */
		if (poll(pf, 2, waiting ? 1 : 100) > 0 && (pf[1].revents & POLLIN))
			(void)!read(wk->wake, &v, sizeof(v));
	}
	tfs_net_serve_close(wk->w);
	for (int i = 0; i < wk->nconns; i++)
		peer_reset(&wk->conns[i], -ESHUTDOWN);
	tfs_conn_close_thread();
	return NULL;
}

static int set_handler(struct tfs_net_worker *wk, unsigned id, ucp_am_recv_callback_t cb)
{
	ucp_am_handler_param_t h = { 0 };

	h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
		       UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UCP_AM_HANDLER_PARAM_FIELD_ARG;
	h.id = id;
	h.cb = cb;
	h.arg = wk;
	h.flags = UCP_AM_FLAG_WHOLE_MSG;
	return ucp_worker_set_am_recv_handler(wk->w, &h) == UCS_OK ? 0 : -EIO;
}

static void wake_thread(int lane)
{
	uint64_t one = 1;

	(void)!write(tfs_nt.wk[lane].wake, &one, sizeof(one));
}

int tfs_net_zero_copy(void)
{
	return tfs_nt.zero_copy;
}

/* Ends what worker_open made of wk. */
static void worker_close(struct tfs_net_worker *wk)
{
	if (wk->wake >= 0)
		close(wk->wake);
	wk->wake = -1;
	if (wk->w)
		ucp_worker_destroy(wk->w);
	if (wk->ctx)
		ucp_cleanup(wk->ctx);
	wk->w = NULL;
	wk->ctx = NULL;
	free(wk->conns);
	wk->conns = NULL;
}

/* wk's own UCX context and worker, its address added to rec. A context per thread, not
 * one shared by all workers: each is then used by one thread only, as
 * UCS_THREAD_MODE_SINGLE needs, with no lock of UCX's between the threads (a shared one
 * needs mt_workers_shared, which puts its memory registration cache behind a lock every
 * send and receive takes). 0 or -errno, logged; worker_close ends what it made. */
static int worker_open(struct tfs_net_worker *wk, struct tfs_peer_rec *rec)
{
	ucp_params_t cp = { 0 };
	ucp_worker_params_t wp = { 0 };
	ucp_config_t *cfg;
	ucp_address_t *addr;
	size_t alen;
	ucs_status_t st;

	wk->submit_tail = &wk->submit;
	if (!(wk->conns = calloc(MAX_CONNS, sizeof(*wk->conns))))
		return -ENOMEM;
	if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
		return -EIO;
	cp.field_mask = UCP_PARAM_FIELD_FEATURES;
	cp.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	st = ucp_init(&cp, cfg, &wk->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) {
		wk->ctx = NULL;
		tfs_log(LOG_ERR, "UCX: cannot start: %s", ucs_status_string(st));
		return -EIO;
	}
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if ((st = ucp_worker_create(wk->ctx, &wp, &wk->w)) != UCS_OK) {
		wk->w = NULL;
		tfs_log(LOG_ERR, "UCX: cannot make a worker: %s", ucs_status_string(st));
		return -EIO;
	}
	if (ucp_worker_get_efd(wk->w, &wk->efd) != UCS_OK ||
	    (wk->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    set_handler(wk, TFS_NET_AM_REQ, on_request) ||
	    set_handler(wk, TFS_NET_AM_REP, on_reply) ||
	    ucp_worker_get_address(wk->w, &addr, &alen) != UCS_OK)
		return -EIO;
	if (tfs_peer_rec_add(rec, addr, alen)) {
		tfs_log(LOG_ERR, "UCX: the worker's address (%zu bytes) is too long for the "
			"record (%d bytes for all of them)", alen, TFS_NET_ADDRS_BYTES);
		ucp_worker_release_address(wk->w, addr);
		return -E2BIG;
	}
	ucp_worker_release_address(wk->w, addr);
	return 0;
}

int tfs_net_start(int timeout_ms, int zero_copy, int nthreads)
{
	struct tfs_peer_rec *rec = NULL;
	int rc = -EIO, n = 0;

	if (!tfs_net_key_present()) {
		tfs_log(LOG_INFO, "no --cluster-key: other nodes' tensor bytes stay EREMOTE, and "
			"this node's are served to no other");
		return 0;
	}
	if (nthreads < 1 || nthreads > TFS_NET_THREADS_MAX)
		return -EINVAL;
	tfs_nt.timeout_ms = timeout_ms;
	tfs_nt.zero_copy = zero_copy;
	tfs_nt.nthreads = nthreads;
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	rec = calloc(1, sizeof(*rec));
	if (!rec || tfs_net_random(&tfs_nt.epoch, sizeof(tfs_nt.epoch)))
		goto fail;
	for (n = 0; n < nthreads; n++) {
		tfs_nt.wk[n].idx = n;
		tfs_nt.wk[n].wake = -1;
		if ((rc = worker_open(&tfs_nt.wk[n], rec))) {
			n++;
			goto fail;
		}
	}
	rec->epoch = tfs_nt.epoch;
	tfs_peer_rec_format(rec, tfs_nt.rec, sizeof(tfs_nt.rec));
	tfs_net_serve_start(wake_thread, zero_copy, nthreads);
	for (n = 0; n < nthreads; n++) {
		if (pthread_create(&tfs_nt.wk[n].th, NULL, thread_main, &tfs_nt.wk[n]))
			break;
		tfs_nt.wk[n].started = 1;
	}
	if (n < nthreads) {
		tfs_log(LOG_ERR, "UCX: cannot start network thread %d of %d", n + 1, nthreads);
		tfs_nt.running = 1;
		tfs_net_stop();
		free(rec);
		return -EAGAIN;
	}
	tfs_nt.running = 1;
	tfs_log(LOG_INFO, "UCX: serving this node's tensors to daemons with the cluster key "
		"(%d network threads, worker addresses %d bytes together; %s)", nthreads,
		(int)(rec->off[nthreads - 1] + rec->len[nthreads - 1]), zero_copy ?
		"host memory sent and received in place, device memory staged" :
		"-o net_staged: every answer and pull staged through buffers");
	free(rec);
	return 0;
fail:
	tfs_log(LOG_ERR, "UCX: cannot start the network threads' workers");
	for (int i = 0; i < n; i++)
		worker_close(&tfs_nt.wk[i]);
	free(rec);
	return rc;
}

/* Set when tfs_net_stop leaves a UCX worker to the process's exit. */
static int left_to_exit;

#ifdef __SANITIZE_ADDRESS__
/* LeakSanitizer asks for these when it checks, at the exit. A worker left to the exit
 * keeps objects to which only the kernel (UCX's epoll entries) points: leaks to it, though
 * the worker itself is still reachable. The libraries' other leaks are reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return left_to_exit ? "leak:libucs.so\nleak:libucp.so\nleak:libuct.so\n" : "";
}

/* Its count of what was suppressed would be a report of its own (tests/run.sh takes every
 * sanitizer file for one). */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif

void tfs_net_stop(void)
{
	if (!tfs_nt.running)
		return;
	tfs_nt.stop = 1;
	for (int i = 0; i < tfs_nt.nthreads; i++)
		if (tfs_nt.wk[i].started) {
			wake_thread(i);
			pthread_join(tfs_nt.wk[i].th, NULL);
			tfs_nt.wk[i].started = 0;
		}
	tfs_nt.running = 0;
	tfs_net_serve_fini();
	for (int i = 0; i < tfs_nt.nthreads; i++) {
		struct tfs_net_worker *wk = &tfs_nt.wk[i];

		if (tfs_net_serve_inflight(i)) {
			/* UCX refuses to destroy a worker whose endpoints carry requests (it
			 * aborts): answers to a daemon that took none are left to the process's
			 * exit, with the tensors' memory they were lent. */
			tfs_log(LOG_NOTICE, "UCX: %d answers to other daemons never taken: left to "
				"the exit", tfs_net_serve_inflight(i));
			left_to_exit = 1;
			close(wk->wake);
			wk->wake = -1;
		} else {
			worker_close(wk);
		}
	}
}

int tfs_net_on(void)
{
	return tfs_nt.running;
}

int tfs_net_thread_bytes(uint64_t *out, int max)
{
	int n = tfs_nt.running ? tfs_nt.nthreads : 0;

	for (int i = 0; i < n && i < max; i++)
		out[i] = atomic_load_explicit(&tfs_nt.wk[i].bytes, memory_order_relaxed);
	return n;
}

void tfs_net_carried(uint64_t n)
{
	if (me)
		atomic_fetch_add_explicit(&me->bytes, n, memory_order_relaxed);
}
