/* This daemon's requests for other nodes' bytes (net.h): a call's chunks made, queued
 * round the network threads (net.c) and round the owner's worker addresses, and waited
 * for, each with the call's deadline. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "net/net.h"
#include "net/net_int.h"
#include "store/peer.h"

/* node's entry (tfs_nt.nodes), with a record fresh enough: 0 with its index, epoch and
 * number of addresses, or -EREMOTE (logged), -EAGAIN (no room for another node). */
static int peer_get(const char *node, int *out, uint64_t *epoch, int *naddr)
{
	/* Under rec_mu: 16 KiB and 33 KiB are not for the stack. */
	static struct tfs_peer_rec rec;
	static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
	static char buf[TFS_NET_REC_MAX];
	struct node_rec *nr;
	int rc = 0, i;

	pthread_mutex_lock(&tfs_nt.mu);
	i = tfs_net_node_find(node, 1);
	nr = i < 0 ? NULL : &tfs_nt.nodes[i];
	if (nr && nr->has_rec && tfs_net_now_ms() - nr->rec_ms < REC_FRESH_MS) {
		*out = i;
		*epoch = nr->rec.epoch;
		*naddr = nr->rec.naddr;
		pthread_mutex_unlock(&tfs_nt.mu);
		return 0;
	}
	pthread_mutex_unlock(&tfs_nt.mu);
	if (!nr)
		return -EAGAIN;
	pthread_mutex_lock(&rec_mu);
	rc = tfs_store_peer_get(node, buf, sizeof(buf));
	if (rc == 0)
		rc = tfs_peer_rec_parse(buf, strlen(buf), &rec);
	if (rc == 0) {
		pthread_mutex_lock(&tfs_nt.mu);
		nr->rec = rec;
		nr->has_rec = 1;
		nr->rec_ms = tfs_net_now_ms();
		*epoch = rec.epoch;
		*naddr = rec.naddr;
		pthread_mutex_unlock(&tfs_nt.mu);
		*out = i;
	}
	pthread_mutex_unlock(&rec_mu);
	if (rc == -ENOENT || rc == -EINVAL || rc == -E2BIG) {
		int64_t now = tfs_net_now_ms();

		if (now - tfs_nt.said_ms > 10000) {
			tfs_log(LOG_WARNING, "node %s publishes %s UCX address: its tensors' bytes "
				"are EREMOTE here (is its daemon started with --cluster-key?)", node,
				rc == -ENOENT ? "no" : rc == -E2BIG ?
				"a record of too many or too long addresses for its" :
				"an unreadable");
			tfs_nt.said_ms = now;
		}
		return -EREMOTE;
	}
	return rc;
}

/* Every request of a call: wbuf a write's bytes, dst where a read's land (UCX receives
 * into it), else sink. */
static ssize_t request(const char *node, const char *name, uint64_t ino, int wr,
		       const void *wbuf, void *dst, size_t len, uint64_t off,
		       const struct tfs_net_cred *cr, tfs_net_sink sink, void *arg)
{
	size_t namelen = strlen(name), nops = (len + TFS_NET_CHUNK - 1) / TFS_NET_CHUNK, i;
	struct op **ops;
	int ni, naddr;
	uint64_t epoch, lane;
	int woke[TFS_NET_THREADS_MAX] = { 0 };
	int64_t deadline;
	ssize_t total = 0, rc = 0;
	uint64_t one = 1;

	if (!tfs_nt.running) {
		int64_t now = tfs_net_now_ms();

		if (now - tfs_nt.said_ms > 10000) {
			tfs_log(LOG_NOTICE, "%s is node %s's: its bytes are EREMOTE here, since this "
				"daemon has no --cluster-key", name, node);
			tfs_nt.said_ms = now;
		}
		return -EREMOTE;
	}
	if (namelen > TFS_NET_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 0)
		return 0;
	if ((rc = peer_get(node, &ni, &epoch, &naddr)))
		return rc;
	/* Chunk k goes to thread (lane + k) and the owner's worker (lane + k), both round:
	 * one large call uses every thread of both sides, and calls of one chunk take turns. */
	lane = __atomic_fetch_add(&tfs_nt.next_lane, nops, __ATOMIC_RELAXED);
	ops = calloc(nops, sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	deadline = tfs_net_now_ms() + tfs_nt.timeout_ms;
	for (i = 0; i < nops; i++) {
		size_t at = i * TFS_NET_CHUNK, n = len - at < TFS_NET_CHUNK ? len - at : TFS_NET_CHUNK;
		struct op *o = tfs_net_op_new(namelen, dst ? 0 : n);

		if (!o) {
			rc = -ENOMEM;
			break;
		}
		if (dst) {
			o->data = (char *)dst + at;
			o->len = n;
			o->ext = 1;
		}
		o->write = wr;
		o->wk = &tfs_nt.wk[(lane + i) % (uint64_t)tfs_nt.nthreads];
		o->node = ni;
		o->aidx = (int)((lane + i) % (uint64_t)naddr);
		o->epoch = epoch;
		o->deadline_ms = deadline;
		o->hdr->op = wr ? TFS_NET_WRITE : TFS_NET_READ;
		o->hdr->ino = ino;
		o->hdr->off = off + at;
		o->hdr->len = n;
		o->hdr->uid = cr->uid;
		o->hdr->gid = cr->gid;
		o->hdr->ngids = (uint16_t)(cr->ngids < TFS_NET_GIDS ? cr->ngids : TFS_NET_GIDS);
		memcpy(o->hdr->gids, cr->gids, o->hdr->ngids * sizeof(uint32_t));
		o->hdr->namelen = (uint32_t)namelen;
		memcpy(o->hdr + 1, name, namelen);
		if (wr)
			memcpy(o->data, (const char *)wbuf + at, n);
		ops[i] = o;
	}
	pthread_mutex_lock(&tfs_nt.mu);
	for (size_t k = 0; k < i; k++) {
		struct tfs_net_worker *wk = ops[k]->wk;

		ops[k]->hdr->req = __atomic_add_fetch(&tfs_nt.next_req, 1, __ATOMIC_RELAXED);
		ops[k]->refs++;              /* the network thread's */
		ops[k]->next = NULL;
		*wk->submit_tail = ops[k];
		wk->submit_tail = &ops[k]->next;
		woke[wk->idx] = 1;
	}
	pthread_mutex_unlock(&tfs_nt.mu);
	for (int t = 0; t < tfs_nt.nthreads; t++)
		if (woke[t])
			(void)!write(tfs_nt.wk[t].wake, &one, sizeof(one));
	for (size_t k = 0; k < i; k++) {
		struct op *o = ops[k];
		struct timespec ts;
		/* A little past the network thread's own deadline, which ends the request. */
		int64_t end = deadline + 2000;

		ts.tv_sec = end / 1000;
		ts.tv_nsec = (end % 1000) * 1000000;
		pthread_mutex_lock(&tfs_nt.mu);
		while (!o->done)
			if (pthread_cond_timedwait(&o->cv, &tfs_nt.mu, &ts) == ETIMEDOUT)
				break;
		if (!o->done && rc == 0)
			rc = -ETIMEDOUT;
		/* dst is the caller's again only once UCX let go of it: the network thread ends
		 * a request past its deadline by closing its connection, which ends its receive. */
		while (o->ext && (o->busy || (!o->done && tfs_nt.running))) {
			ts.tv_sec += 10;
			if (pthread_cond_timedwait(&o->cv, &tfs_nt.mu, &ts) == ETIMEDOUT)
				tfs_log(LOG_WARNING, "node %s: a receive into %s is not over yet past "
					"its deadline: still waiting for UCX to let go of it", node,
					name);
		}
		pthread_mutex_unlock(&tfs_nt.mu);
		if (o->done && o->result < 0 && rc == 0)
			rc = o->result;
		if (o->done && o->result >= 0 && rc == 0) {
			if (!wr && !dst && o->result)
				rc = sink(arg, k * TFS_NET_CHUNK, o->data, (size_t)o->result);
			total += o->result;
			if (rc == 0 && (size_t)o->result < o->len)
				rc = 1;          /* short: the end of the tensor */
		}
		tfs_net_op_put(o);
	}
	free(ops);
	return rc < 0 ? rc : total;
}

ssize_t tfs_net_io(const char *node, const char *name, uint64_t ino, int wr, void *buf,
		   size_t len, uint64_t off, const struct tfs_net_cred *cr)
{
	if (wr)
		return request(node, name, ino, 1, buf, NULL, len, off, cr, NULL, NULL);
	return request(node, name, ino, 0, NULL, buf, len, off, cr, NULL, NULL);
}

ssize_t tfs_net_read_into(const char *node, const char *name, uint64_t ino, void *dst,
			  size_t len, uint64_t off, const struct tfs_net_cred *cr)
{
	return request(node, name, ino, 0, NULL, dst, len, off, cr, NULL, NULL);
}

ssize_t tfs_net_read_each(const char *node, const char *name, uint64_t ino, int wr,
			  const void *buf, size_t len, uint64_t off,
			  const struct tfs_net_cred *cr, tfs_net_sink sink, void *arg)
{
	if (!wr && !sink)
		return -EINVAL;
	return request(node, name, ino, wr, buf, NULL, len, off, cr, sink, arg);
}
