/* This node's tensors served to other daemons (net.h): the challenge's server half, and
 * reads and writes checked as this node's mount would check them. Runs on the network
 * thread only, so its tables need no lock. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ucp/api/ucp.h>

#include "log.h"
#include "mem/backend.h"
#include "net/auth.h"
#include "net/net.h"
#include "store/conn.h"
#include "tensors/tensors.h"
#include "util/clock.h"

/* Sessions this node keeps; a peer beyond them makes the least recently used one go
 * (whose daemon then meets -EACCES and says hello again). */
#define SESSIONS 128
/* Bytes of answers and of rendezvous writes held at once; past it a request is answered
 * -EAGAIN (peers are daemons that proved the key, but a bound holds for them too). */
#define HELD_MAX (512ull << 20)

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
	size_t len;
	uint8_t data[];
};

static struct {
	struct session s[SESSIONS];
	uint64_t held;
} sv;

static void reply_done(void *req, ucs_status_t st, void *user)
{
	struct pending *p = user;

	(void)st;
	if (req)
		ucp_request_free(req);
	sv.held -= p->len;
	free(p);
}

/* Sends p (its hdr the answer, len bytes of data after it) and frees it when UCX is done. */
static void reply_send(struct pending *p)
{
	ucp_request_param_t rp = { 0 };
	ucs_status_ptr_t r;

	p->hdr.magic = TFS_NET_MAGIC;
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.send = reply_done;
	rp.user_data = p;
	r = ucp_am_send_nbx(p->ep, TFS_NET_AM_REP, &p->hdr, sizeof(p->hdr),
			    p->len ? p->data : NULL, p->len, &rp);
	if (r == NULL || UCS_PTR_IS_ERR(r))
		reply_done(NULL, UCS_OK, p);
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
		if (sv.s[i].sid == sid && sid)
			return &sv.s[i];
	return NULL;
}

static void hello(ucp_ep_h ep, const struct tfs_net_hdr *q)
{
	struct session *s = &sv.s[0];
	struct pending *p;

	for (int i = 1; i < SESSIONS && s->sid; i++)
		if (!sv.s[i].sid || sv.s[i].used_ns < s->used_ns)
			s = &sv.s[i];
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

/* Copies between data and q's tensor: the bytes moved, or -errno. */
static int64_t tensor_io(const struct tfs_net_hdr *q, const char *name, void *data, int wr)
{
	struct tfsd_tensor *t;
	uint64_t n = q->len;
	int64_t rc;

	if (tfs_redis.lease_lost)
		return -ESTALE;          /* another daemon holds this node now */
	tfs_ns_lock();
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
	 * it); ns is not held while copying. */
	pthread_rwlock_rdlock(&t->io);
	tfs_ns_unlock();
	if (q->off >= t->meta.bytes)
		n = 0;
	else if (n > t->meta.bytes - q->off)
		n = t->meta.bytes - q->off;
	if (wr && n < q->len)
		rc = n ? (int64_t)n : -EFBIG;  /* another node's tensor does not grow from here */
	else
		rc = (int64_t)n;
	if (rc > 0)
		rc = wr ? tfs_mem.ops->copy_in(tfs_mem.be, t->alloc, q->off, data, n) :
		     tfs_mem.ops->copy_out(tfs_mem.be, t->alloc, q->off, data, n);
	if (rc == 0)
		rc = (int64_t)n;
	if (wr && rc > 0) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		__atomic_store_n(&t->wtime_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&t->dirty, 1, __ATOMIC_RELAXED);
	}
	pthread_rwlock_unlock(&t->io);
	return rc;
}

static void do_read(ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name)
{
	struct pending *p;
	int64_t rc;

	if (sv.held + q->len > HELD_MAX) {
		reply_status(ep, q, -EAGAIN);
		return;
	}
	p = malloc(sizeof(*p) + q->len);
	if (!p) {
		reply_status(ep, q, -ENOMEM);
		return;
	}
	memset(&p->hdr, 0, sizeof(p->hdr));
	p->ep = ep;
	p->hdr.req = q->req;
	rc = tensor_io(q, name, p->data, 0);
	p->hdr.status = rc;
	p->len = rc > 0 ? (size_t)rc : 0;
	sv.held += p->len;
	reply_send(p);
}

static void write_arrived(void *req, ucs_status_t st, size_t length, void *user)
{
	struct pending *p = user;
	int64_t rc = st == UCS_OK && length == p->hdr.len ?
		     tensor_io(&p->hdr, p->name, p->data, 1) : -EIO;

	if (req)
		ucp_request_free(req);
	reply_status(p->ep, &p->hdr, rc);
	sv.held -= p->len;
	free(p->name);
	free(p);
}

static void do_write(void *worker, ucp_ep_h ep, const struct tfs_net_hdr *q, const char *name,
		     void *data, size_t len, int rndv)
{
	ucp_request_param_t rp = { 0 };
	struct pending *p;
	ucs_status_ptr_t r;

	if (len != q->len) {
		reply_status(ep, q, -EINVAL);
		return;
	}
	if (!rndv) {
		reply_status(ep, q, tensor_io(q, name, data, 1));
		return;
	}
	if (sv.held + len > HELD_MAX || !(p = malloc(sizeof(*p) + len))) {
		reply_status(ep, q, -EAGAIN);
		return;
	}
	p->hdr = *q;
	p->ep = ep;
	p->len = len;
	p->name = strdup(name);
	if (!p->name) {
		free(p);
		reply_status(ep, q, -ENOMEM);
		return;
	}
	sv.held += len;
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp.cb.recv_am = write_arrived;
	rp.user_data = p;
	r = ucp_am_recv_data_nbx(worker, data, p->data, len, &rp);
	if (r == NULL)
		write_arrived(NULL, UCS_OK, len, p);
	else if (UCS_PTR_IS_ERR(r))
		write_arrived(NULL, UCS_PTR_STATUS(r), 0, p);
}

void tfs_net_serve_request(void *worker, void *reply_ep, const void *hdr, size_t hlen,
			   void *data, size_t len, int rndv)
{
	struct tfs_net_hdr q;
	struct tfs_net_hdr z;
	struct session *s;
	uint8_t mac[TFS_SHA256_LEN];
	char name[TFS_NET_NAME_MAX + 1];
	ucp_ep_h ep = reply_ep;

	/* Everything checked before it is used: the peer may be anyone until it proved the
	 * key, and a proven one is still bounded. */
	if (hlen < sizeof(q))
		return;
	memcpy(&q, hdr, sizeof(q));
	if (q.magic != TFS_NET_MAGIC || q.namelen > TFS_NET_NAME_MAX ||
	    hlen != sizeof(q) + q.namelen)
		return;
	if (q.op == TFS_NET_HELLO) {
		hello(ep, &q);
		return;
	}
	if (q.op == TFS_NET_PROVE) {
		prove(ep, &q);
		return;
	}
	s = session_find(q.sid);
	z = q;
	memset(z.mac, 0, sizeof(z.mac));
	if (s && s->proven)
		tfs_net_mac_request(s->sk, &z, sizeof(z), (const char *)hdr + sizeof(q), q.namelen,
				    mac);
	if (!s || !s->proven || !tfs_mac_equal(mac, q.mac, sizeof(mac))) {
		reply_status(ep, &q, -EACCES);
		return;
	}
	s->used_ns = tfs_mono_ns();
	memcpy(name, (const char *)hdr + sizeof(q), q.namelen);
	name[q.namelen] = '\0';
	if (q.namelen == 0 || strlen(name) != q.namelen || q.len > TFS_NET_CHUNK ||
	    q.ngids > TFS_NET_GIDS || q.off > INT64_MAX) {
		reply_status(ep, &q, -EINVAL);
		return;
	}
	if (q.op == TFS_NET_READ)
		do_read(ep, &q, name);
	else if (q.op == TFS_NET_WRITE)
		do_write(worker, ep, &q, name, data, len, rndv);
	else
		reply_status(ep, &q, -EOPNOTSUPP);
}

void tfs_net_serve_fini(void)
{
	explicit_bzero(sv.s, sizeof(sv.s));
}
