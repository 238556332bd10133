/* This node's tensors served to other daemons (net.h): the challenge's server half, and
 * reads and writes checked as this node's mount would check them. Each network thread
 * serves its own worker with a lane of its own (sessions, answers in flight, waiting
 * requests) that only it touches, so the lanes need no lock; the bounds below are the
 * server's, shared out evenly between the lanes. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "log.h"
#include "mem/backend.h"
#include "net/auth.h"
#include "net/net.h"
#include "net/stage.h"
#include "store/conn.h"
#include "tensors/tensors.h"
#include "util/clock.h"
#include "util/guard.h"
#include "util/stats.h"

/* Sessions this node keeps; a peer beyond them makes the least recently used one go
 * (whose daemon then meets -EACCES and says hello again). */
#define SESSIONS 128
/* Bytes of staged answers and of rendezvous writes held at once; past it a request is
 * answered -EAGAIN (peers are daemons that proved the key, but a bound holds for them
 * too). */
#define HELD_MAX (512ull << 20)
/* Answers sent straight from a tensor's memory at once, each holding its io lock shared
 * until UCX is done with the bytes; past it an answer is staged. */
#define ZC_MAX 256
/* Requests waiting for the namespace lock or a tensor's io (jobs below). */
#define JOBS_MAX 1024

struct session {
	uint64_t sid;
	int proven;
	int64_t used_ns;
	uint8_t nc[TFS_NET_NONCE], ns[TFS_NET_NONCE], sk[TFS_SHA256_LEN];
};

/* An answer on its way, or a write's bytes arriving by rendezvous. */
struct pending {
	struct tfs_net_hdr hdr;      /* the answer's header, or the request's */
	ucp_ep_h ep;
	char *name;
	size_t len;                  /* bytes of data[] (counted in held) */
	int zc;                      /* an answer from a tensor's memory, lent to UCX: */
	struct tfs_guard_span span;  /* that memory (mem/backend.h host_span) */
	struct tfs_net_stage stage;  /* a staged answer: its copy on a staging thread, */
	struct tfs_net_hdr q;        /* of the request q */
	struct pending *fprev, *fnext;  /* in flight */
	uint8_t data[];
};

/* A request that could not be served at once. This thread waits for neither the
 * namespace lock nor a tensor's io: a holder of the first may wait for the io of a
 * tensor that a pull fills (fuse/ops_pull.c holds it shared while this thread receives
 * into it), and a mover holds the second exclusively and takes the first to end. So a request that would wait is kept, and served again from the
 * network thread's loop, outside UCX's progress (tfs_net_serve_pending). */
struct job {
	struct tfs_net_hdr q;
	ucp_ep_h ep;
	void *data;                  /* a write's bytes (owned) or UCX's rendezvous descriptor */
	size_t len;
	int rndv;
	struct job *next;
	char name[];
};

/* One network thread's server. */
struct lane {
	int idx;
	struct session s[SESSIONS];
	uint64_t held;
	int zc;                      /* answers from tensors' memory in flight */
	void *worker;
	struct job *jobs, **jobs_tail;
	int njobs;
	int in_cb;                   /* inside UCX's callback of a request's arrival */
	int inflight;                /* UCX requests of ours not yet completed, */
	struct pending *flight;      /* those of these (answers, writes arriving) */
};

static struct lane lanes[TFS_NET_THREADS_MAX];
static __thread struct lane *sv;     /* this network thread's (tfs_net_serve_thread) */

/* What every lane shares, set at start. */
static struct {
	int zero_copy;               /* answers sent from tensors' memory (not -o net_staged) */
	int staging;                 /* staging threads run (stage.h) */
	int nlanes;
	uint64_t held_max;           /* a lane's share of HELD_MAX, ZC_MAX and JOBS_MAX */
	int zc_max, jobs_max;
} srv;

/* A rendezvous's descriptor not received: inside the arrival's callback UCX drops it
 * itself (the callback answers UCS_OK); a kept one is given back. */
static void drop_desc(void *data)
{
	if (!sv->in_cb)
		ucp_am_data_release(sv->worker, data);
}

static void reply_done(void *req, ucs_status_t st, void *user);

static void flight_add(struct pending *p)
{
	sv->inflight++;
	p->fprev = NULL;
	p->fnext = sv->flight;
	if (sv->flight)
		sv->flight->fprev = p;
	sv->flight = p;
}

static void flight_del(struct pending *p)
{
	sv->inflight--;
	if (p->fprev)
		p->fprev->fnext = p->fnext;
	else
		sv->flight = p->fnext;
	if (p->fnext)
		p->fnext->fprev = p->fprev;
}

/* Tells the requester whether an answer sent from a tensor's memory held the tensor's
 * bytes (its pages may have been truncated away meanwhile): its requester finishes the
 * request on this, not on the bytes' arrival. */
static void confirm(struct pending *p, int64_t status)
{
	struct pending *c;
	ucp_request_param_t rp = { 0 };
	ucs_status_ptr_t r;

	if (!(c = calloc(1, sizeof(*c))))
		return;              /* the requester's deadline ends it */
	c->ep = p->ep;
	c->hdr.magic = TFS_NET_MAGIC;
	c->hdr.op = TFS_NET_CONFIRM;
	c->hdr.req = p->hdr.req;
	c->hdr.status = status;
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.send = reply_done;
	rp.user_data = c;
	r = ucp_am_send_nbx(c->ep, TFS_NET_AM_REP, &c->hdr, sizeof(c->hdr), NULL, 0, &rp);
	if (UCS_PTR_IS_PTR(r))
		flight_add(c);
	else
		reply_done(NULL, UCS_OK, c);
}

static void reply_done(void *req, ucs_status_t st, void *user)
{
	struct pending *p = user;

	if (req) {
		ucp_request_free(req);
		flight_del(p);
	}
	if (p->zc) {
		int bad = tfs_mem.ops->host_span_end(tfs_mem.be, &p->span);

		sv->zc--;
		if (bad)
			tfs_log(LOG_WARNING, "%s lost pages while they were sent to another node "
				"(truncated by a process that may write it?): that read fails with "
				"EIO", p->name ? p->name : "a tensor");
		if (st == UCS_OK)
			confirm(p, bad ? -EIO : p->hdr.status);
		if (st == UCS_OK && !bad) {
			tfs_stats_add(TFS_ST_NET_INPLACE_BYTES, p->span.len);
			tfs_net_carried(p->span.len);
		}
	} else if (st == UCS_OK) {
		tfs_net_carried(p->len);
	}
	sv->held -= p->len;
	free(p->name);
	free(p);
}

/* Sends p (its hdr the answer, and its bytes: len of data after it, or the tensor's
 * span) and frees it when UCX is done. */
static void reply_send(struct pending *p)
{
	ucp_request_param_t rp = { 0 };
	ucs_status_ptr_t r;
	const void *buf = p->zc ? (const void *)p->span.p : p->data;
	size_t n = p->zc ? p->span.len : p->len;

	p->hdr.magic = TFS_NET_MAGIC;
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.send = reply_done;
	rp.user_data = p;
	r = ucp_am_send_nbx(p->ep, TFS_NET_AM_REP, &p->hdr, sizeof(p->hdr), n ? buf : NULL, n,
			    &rp);
	if (UCS_PTR_IS_PTR(r))
		flight_add(p);
	else if (r == NULL)
		reply_done(NULL, UCS_OK, p);
	else if (UCS_PTR_IS_ERR(r))
		reply_done(NULL, UCS_PTR_STATUS(r), p);
}

static void reply_status(ucp_ep_h ep, const struct tfs_net_hdr *q, int64_t status)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p)
		return;
	p->ep = ep;
	p->hdr.req = q->req;
	p->hdr.status = status;
	reply_send(p);
}

static struct session *session_find(uint64_t sid)
{
	for (int i = 0; i < SESSIONS; i++)
		if (sv->s[i].sid == sid && sid)
			return &sv->s[i];
	return NULL;
}

static void hello(ucp_ep_h ep, const struct tfs_net_hdr *q)
{
	struct session *s = &sv->s[0];
	struct pending *p;

	for (int i = 1; i < SESSIONS && s->sid; i++)
		if (!sv->s[i].sid || sv->s[i].used_ns < s->used_ns)
			s = &sv->s[i];
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	memset(s, 0, sizeof(*s));
	if (tfs_net_random(&s->sid, sizeof(s->sid)) || tfs_net_random(s->ns, sizeof(s->ns))) {
		free(p);
		s->sid = 0;
		return;
	}
	s->used_ns = tfs_mono_ns();
	memcpy(s->nc, q->nonce, sizeof(s->nc));
	p->ep = ep;
	p->hdr.req = q->req;
	p->hdr.sid = s->sid;
	memcpy(p->hdr.nonce, s->ns, sizeof(s->ns));
	tfs_net_mac_server(s->nc, s->ns, p->hdr.mac);
	reply_send(p);
}

static void prove(ucp_ep_h ep, const struct tfs_net_hdr *q)
{
	struct session *s = session_find(q->sid);
	uint8_t mac[TFS_SHA256_LEN];

	if (s)
		tfs_net_mac_client(s->nc, s->ns, mac);
	if (!s || s->proven || !tfs_mac_equal(mac, q->mac, sizeof(mac))) {
		tfs_log(LOG_WARNING, "a daemon failed the cluster key's challenge: refused (a "
			"different --cluster-key?)");
		if (s)
			memset(s, 0, sizeof(*s));
		reply_status(ep, q, -EACCES);
		return;
	}
	tfs_net_session_key(s->nc, s->ns, s->sk);
	s->proven = 1;
	s->used_ns = tfs_mono_ns();
	reply_status(ep, q, 0);
}

/* May q's requester do what it asks (4 read, 2 write) to t, as this node's mount would
 * let it (default_permissions: the mode bits; root anything)? */
static int permitted(const struct tfsd_tensor *t, const struct tfs_net_hdr *q, unsigned want)
{
	unsigned mode = t->meta.mode;

	if (q->uid == 0)
		return 1;
	if (q->uid == t->meta.uid)
		return ((mode >> 6) & want) == want;
	if (q->gid == t->meta.gid)
		return ((mode >> 3) & want) == want;
	for (unsigned i = 0; i < q->ngids && i < TFS_NET_GIDS; i++)
		if (q->gids[i] == t->meta.gid)
			return ((mode >> 3) & want) == want;
	return (mode & want) == want;
}

/* q's tensor, with its io held shared: 0 with *out and *n (the bytes of the request that
 * lie inside it), or -errno; -EWOULDBLOCK when the namespace lock or the tensor's io is
 * not to be had without waiting, which this thread may not do (struct job). */
static int tensor_get(const struct tfs_net_hdr *q, const char *name, int wr,
		      struct tfsd_tensor **out, uint64_t *n, int wait_ns)
{
	struct tfsd_tensor *t;

	if (__atomic_load_n(&tfs_redis.lease_lost, __ATOMIC_ACQUIRE))
		return -ESTALE;          /* another daemon holds this node now */
	if (wait_ns)
		tfs_ns_lock();
	else if (tfs_ns_trylock())
		return -EWOULDBLOCK;
	t = tfs_table_find(name);
	if (!t || t->meta.ino != q->ino) {
		tfs_ns_unlock();
		return t ? -ESTALE : -ENOENT;
	}
	if (!permitted(t, q, wr ? 2 : 4)) {
		tfs_ns_unlock();
		return -EACCES;
	}
	/* io taken under ns: the tensor cannot go before it is let go (tensor_free waits for
	 * it); ns is not held while copying or sending. */
	if (pthread_rwlock_tryrdlock(&t->io)) {
		tfs_ns_unlock();
		return -EWOULDBLOCK;
	}
	tfs_ns_unlock();
	*n = q->len;
	if (q->off >= t->meta.bytes)
		*n = 0;
	else if (*n > t->meta.bytes - q->off)
		*n = t->meta.bytes - q->off;
	*out = t;
	return 0;
}

/* Copies data into q's tensor: the bytes written, or -errno (-EWOULDBLOCK: tensor_get). */
static int64_t tensor_write(const struct tfs_net_hdr *q, const char *name, const void *data)
{
	struct tfsd_tensor *t;
	uint64_t n;
	int64_t rc = tensor_get(q, name, 1, &t, &n, 0);
	struct timespec now;

	if (rc)
		return rc;
	if (n < q->len) {
		/* another node's tensor does not grow from here */
		pthread_rwlock_unlock(&t->io);
		return n ? (int64_t)n : -EFBIG;
	}
	rc = tfs_mem.ops->copy_in(tfs_mem.be, t->alloc, q->off, data, n);
	if (rc == 0) {
		rc = (int64_t)n;
		tfs_stats_add(TFS_ST_NET_STAGED_BYTES, n);
		tfs_net_carried(n);
		clock_gettime(CLOCK_REALTIME, &now);
		__atomic_store_n(&t->wtime_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&t->dirty, 1, __ATOMIC_RELAXED);
	}
	pthread_rwlock_unlock(&t->io);
	return rc;
}

/* A read's answer: straight from the tensor's memory where it is host memory (its io
 * held until UCX is done, and a confirmation after it), else staged through a buffer. */
static int do_read(ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name)
{
	struct tfsd_tensor *t;
	struct pending *p;
	uint64_t n;
	int rc = tensor_get(q, name, 0, &t, &n, 0);

	if (rc == -EWOULDBLOCK)
		return rc;
	if (rc) {
		reply_status(ep, q, rc);
		return 0;
	}
	if (n && srv.zero_copy && tfs_mem.ops->host_span && sv->zc < srv.zc_max &&
	    (p = calloc(1, sizeof(*p)))) {
		if (tfs_mem.ops->host_span(tfs_mem.be, t->alloc, q->off, n, 0, &p->span) == 0) {
			/* The span keeps the memory mapped (its free put off, resizes and moves
			 * refused) until UCX is done: the tensor's io is let go now. */
			pthread_rwlock_unlock(&t->io);
			p->ep = ep;
			p->zc = 1;
			p->name = strdup(name);  /* for the log; NULL is fine */
			p->hdr.req = q->req;
			p->hdr.status = (int64_t)n;
			p->hdr.flags = TFS_NET_F_CONFIRM;
			sv->zc++;
			reply_send(p);
			return 0;
		}
		free(p);
	}
	if (sv->held + n > srv.held_max || !(p = malloc(sizeof(*p) + n))) {
		pthread_rwlock_unlock(&t->io);
		reply_status(ep, q, -EAGAIN);
		return 0;
	}
	memset(p, 0, sizeof(*p));
	p->ep = ep;
	p->hdr.req = q->req;
	if (n && srv.staging && (p->name = strdup(name))) {
		/* Copied out on a staging thread while this one sends. */
		p->q = *q;
		p->len = n;
		p->stage.arg = p;
		p->stage.lane = sv->idx;
		sv->held += n;
		if (tfs_net_stage_put(&p->stage) == 0) {
			pthread_rwlock_unlock(&t->io);
			return 0;
		}
		sv->held -= n;
		p->len = 0;
		free(p->name);
		p->name = NULL;
	}
	rc = n ? tfs_mem.ops->copy_out(tfs_mem.be, t->alloc, q->off, p->data, n) : 0;
	pthread_rwlock_unlock(&t->io);
	if (rc == 0)
		tfs_stats_add(TFS_ST_NET_STAGED_BYTES, n);
	p->hdr.status = rc ? rc : (int64_t)n;
	p->len = rc ? 0 : n;
	sv->held += p->len;
	reply_send(p);
	return 0;
}

/* A staged answer's copy, on a staging thread: the tensor looked up again (the network
 * thread let its io go), waiting for the namespace lock as a FUSE request would, but not
 * for the io a mover holds (it takes the namespace lock to end). The bytes copied, or
 * -errno. */
static int64_t stage_work(void *arg)
{
	struct pending *p = arg;
	struct tfsd_tensor *t;
	uint64_t n;
	int64_t rc;

	for (int i = 0;; i++) {
		rc = tensor_get(&p->q, p->name, 0, &t, &n, 1);
		if (rc != -EWOULDBLOCK)
			break;
		if (i == 5000)
			return -EAGAIN;  /* five seconds of a move: the requester tries again */
		usleep(1000);
	}
	if (rc)
		return rc;
	if (n > p->len)
		n = p->len;          /* it grew meanwhile: the bytes held for it */
	rc = n ? tfs_mem.ops->copy_out(tfs_mem.be, t->alloc, p->q.off, p->data, n) : 0;
	pthread_rwlock_unlock(&t->io);
	if (rc == 0)
		tfs_stats_add(TFS_ST_NET_STAGED_BYTES, n);
	return rc ? rc : (int64_t)n;
}

int tfs_net_serve_staged(void)
{
	struct tfs_net_stage *it = tfs_net_stage_take(sv->idx), *next;
	int any = !!it;

	for (; it; it = next) {
		struct pending *p = it->arg;
		int64_t rc = it->result;

		next = it->next;
		free(p->name);
		p->name = NULL;
		p->hdr.status = rc;
		if (rc < 0 || (uint64_t)rc < p->len) {
			sv->held -= p->len - (rc < 0 ? 0 : (uint64_t)rc);
			p->len = rc < 0 ? 0 : (size_t)rc;
		}
		reply_send(p);
	}
	return any;
}

static void stage_drop(struct tfs_net_stage *it)
{
	struct pending *p = it->arg;

	free(p->name);
	free(p);
}

int tfs_net_serve_start(void (*wake)(int lane), int zero_copy, int nlanes)
{
	srv.zero_copy = zero_copy;
	srv.nlanes = nlanes;
	srv.held_max = HELD_MAX / (uint64_t)nlanes;
	srv.zc_max = ZC_MAX / nlanes;
	srv.jobs_max = JOBS_MAX / nlanes;
	for (int i = 0; i < nlanes; i++) {
		lanes[i].idx = i;
		lanes[i].jobs_tail = &lanes[i].jobs;
	}
	/* Without the threads answers are staged on the network thread, as before. */
	srv.staging = tfs_net_stage_start(stage_work, wake) == 0;
	return 0;
}

static void job_add(struct job *j);

static void write_arrived(void *req, ucs_status_t st, size_t length, void *user)
{
	struct pending *p = user;
	int64_t rc = st == UCS_OK && length == p->hdr.len ?
		     tensor_write(&p->hdr, p->name, p->data) : -EIO;
	struct job *j;

	if (req) {
		ucp_request_free(req);
		flight_del(p);
	}
	if (rc == -EWOULDBLOCK) {
		/* The bytes are here: the job carries them until the tensor can be had. */
		j = malloc(sizeof(*j) + strlen(p->name) + 1);
		if (j) {
			j->q = p->hdr;
			j->ep = p->ep;
			j->data = p;         /* the pending, whose data the job writes */
			j->len = p->len;
			j->rndv = 2;
			strcpy(j->name, p->name);
			job_add(j);
			return;
		}
		rc = -ENOMEM;
	}
	reply_status(p->ep, &p->hdr, rc);
	sv->held -= p->len;
	free(p->name);
	free(p);
}

static int do_write(void *worker, ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name,
		    void *data, size_t len, int rndv)
{
	ucp_request_param_t rp = { 0 };
	struct pending *p;
	ucs_status_ptr_t r;
	int64_t rc;

	if (len != q->len) {
		if (rndv)
			drop_desc(data);
		reply_status(ep, q, -EINVAL);
		return 0;
	}
	if (!rndv) {
		rc = tensor_write(q, name, data);
		if (rc == -EWOULDBLOCK)
			return (int)rc;
		reply_status(ep, q, rc);
		return 0;
	}
	if (sv->held + len > srv.held_max || !(p = malloc(sizeof(*p) + len))) {
		drop_desc(data);
		reply_status(ep, q, -EAGAIN);
		return 0;
	}
	memset(p, 0, sizeof(*p));
	p->hdr = *q;
	p->ep = ep;
	p->len = len;
	p->name = strdup(name);
	if (!p->name) {
		free(p);
		drop_desc(data);
		reply_status(ep, q, -ENOMEM);
		return 0;
	}
	sv->held += len;
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.recv_am = write_arrived;
	rp.user_data = p;
	r = ucp_am_recv_data_nbx(worker, data, p->data, len, &rp);
	if (UCS_PTR_IS_PTR(r))
		flight_add(p);
	else if (r == NULL)
		write_arrived(NULL, UCS_OK, len, p);
	else if (UCS_PTR_IS_ERR(r))
		write_arrived(NULL, UCS_PTR_STATUS(r), 0, p);
	return 0;
}

/* A checked request served, or -EWOULDBLOCK: to be served again later (struct job). */
static int serve(ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name, void *data,
		 size_t len, int rndv)
{
	if (q->op == TFS_NET_READ)
		return do_read(ep, q, name);
	if (rndv == 2) {
		/* A rendezvous write whose bytes arrived (write_arrived's job). */
		struct pending *p = data;
		int64_t rc = tensor_write(q, name, p->data);

		if (rc == -EWOULDBLOCK)
			return (int)rc;
		reply_status(ep, q, rc);
		sv->held -= p->len;
		free(p->name);
		free(p);
		return 0;
	}
	return do_write(sv->worker, ep, q, name, data, len, rndv);
}

static void job_add(struct job *j)
{
	j->next = NULL;
	if (!sv->jobs_tail)
		sv->jobs_tail = &sv->jobs;
	*sv->jobs_tail = j;
	sv->jobs_tail = &j->next;
	sv->njobs++;
}

/* Keeps a request for later: 1 when UCX's descriptor of its bytes is kept with it. */
static int defer(ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name, void *data,
		 size_t len, int rndv)
{
	struct job *j = NULL;

	if (sv->njobs < srv.jobs_max && (rndv || sv->held + len <= srv.held_max))
		j = malloc(sizeof(*j) + q->namelen + 1);
	if (j && !rndv && len && q->op == TFS_NET_WRITE && !(j->data = malloc(len))) {
		free(j);
		j = NULL;
	}
	if (!j) {
		if (rndv)
			drop_desc(data);
		reply_status(ep, q, -EAGAIN);
		return 0;
	}
	j->q = *q;
	j->ep = ep;
	j->len = q->op == TFS_NET_WRITE ? len : 0;
	j->rndv = rndv;
	if (rndv)
		j->data = data;
	else if (j->len)
		memcpy(j->data, data, len);
	else
		j->data = NULL;
	if (!rndv)
		sv->held += j->len;
	memcpy(j->name, name, q->namelen + 1);
	job_add(j);
	return rndv;
}

int tfs_net_serve_pending(void)
{
	while (sv->jobs) {
		struct job *j = sv->jobs;

		if (serve(j->ep, &j->q, j->name, j->data, j->len, j->rndv) == -EWOULDBLOCK)
			return 1;
		sv->jobs = j->next;
		if (!sv->jobs)
			sv->jobs_tail = &sv->jobs;
		sv->njobs--;
		if (!j->rndv) {
			sv->held -= j->len;
			free(j->data);
		}
		free(j);
	}
	return 0;
}

int tfs_net_serve_request(void *worker, void *reply_ep, const void *hdr, size_t hlen,
			  void *data, size_t len, int rndv)
{
	struct tfs_net_hdr q;
	struct tfs_net_hdr z;
	struct session *s;
	uint8_t mac[TFS_SHA256_LEN];
	char name[TFS_NET_NAME_MAX + 1];
	ucp_ep_h ep = reply_ep;
	int kept = 0;

	sv->worker = worker;
	sv->in_cb = 1;
	/* Everything checked before it is used: the peer may be anyone until it proved the
	 * key, and a proven one is still bounded. */
	if (hlen < sizeof(q))
		goto drop;
	memcpy(&q, hdr, sizeof(q));
	if (q.magic != TFS_NET_MAGIC || q.namelen > TFS_NET_NAME_MAX ||
	    hlen != sizeof(q) + q.namelen)
		goto drop;
	if (q.op == TFS_NET_HELLO) {
		hello(ep, &q);
		goto drop;
	}
	if (q.op == TFS_NET_PROVE) {
		prove(ep, &q);
		goto drop;
	}
	s = session_find(q.sid);
	z = q;
	memset(z.mac, 0, sizeof(z.mac));
	if (s && s->proven)
		tfs_net_mac_request(s->sk, &z, sizeof(z), (const char *)hdr + sizeof(q), q.namelen,
				    mac);
	if (!s || !s->proven || !tfs_mac_equal(mac, q.mac, sizeof(mac))) {
		reply_status(ep, &q, -EACCES);
		goto drop;
	}
	s->used_ns = tfs_mono_ns();
	memcpy(name, (const char *)hdr + sizeof(q), q.namelen);
	name[q.namelen] = '\0';
	if (q.namelen == 0 || strlen(name) != q.namelen || q.len > TFS_NET_CHUNK_MAX ||
	    q.ngids > TFS_NET_GIDS || q.off > INT64_MAX) {
		reply_status(ep, &q, -EINVAL);
		goto drop;
	}
	if (q.op != TFS_NET_READ && q.op != TFS_NET_WRITE) {
		reply_status(ep, &q, -EOPNOTSUPP);
		goto drop;
	}
	/* Behind requests already waiting, or waiting itself. */
	if (sv->jobs || serve(ep, &q, name, data, len, rndv) == -EWOULDBLOCK)
		kept = defer(ep, &q, name, data, len, rndv);
drop:
	sv->in_cb = 0;
	return kept;
}

void tfs_net_serve_thread(int lane)
{
	sv = &lanes[lane];
}

int tfs_net_serve_inflight(int lane)
{
	return lanes[lane].inflight;
}

void tfs_net_serve_close(void *worker)
{
	ucp_request_param_t cp = { 0 };

	cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	while (sv->flight) {
		struct pending *first = sv->flight;
		ucs_status_ptr_t r = ucp_ep_close_nbx(first->ep, &cp);

		if (UCS_PTR_IS_PTR(r)) {
			int64_t end = tfs_mono_ns() / 1000000 + 1000;

			while (ucp_request_check_status(r) == UCS_INPROGRESS &&
			       tfs_mono_ns() / 1000000 < end)
				ucp_worker_progress(worker);
			ucp_request_free(r);
		}
		if (sv->flight == first)
			break;           /* UCX did not end them: left to the exit */
	}
}

void tfs_net_serve_fini(void)
{
	if (srv.staging)
		tfs_net_stage_stop(stage_drop);
	srv.staging = 0;
	/* UCX is closed: what waited is dropped. */
	for (int i = 0; i < srv.nlanes; i++) {
		struct lane *l = &lanes[i];

		while (l->jobs) {
			struct job *j = l->jobs;

			l->jobs = j->next;
			if (j->rndv == 2) {
				struct pending *p = j->data;

				free(p->name);
				free(p);
			} else if (j->rndv) {
				ucp_am_data_release(l->worker, j->data);
			} else {
				free(j->data);
			}
			free(j);
		}
		l->jobs_tail = &l->jobs;
		l->njobs = 0;
		explicit_bzero(l->s, sizeof(l->s));
	}
}
