/* FUSE requests over io_uring (Linux 6.14+, /sys/module/fuse/parameters/enable_uring=Y),
 * with `-o io_uring`; libfuse 3.14 knows nothing of it, so this drives the kernel
 * interface itself (fuse_uring_abi.h); the rings are liburing's (2.2+: 128-byte SQEs).
 *
 * Why: over /dev/fuse a request costs a read() and its reply a writev(), each a system
 * call and a wake-up of whichever worker waits; over a ring the reply and the wait for the
 * next request are one io_uring_enter, and the request is served on the CPU that made it.
 *
 * How the kernel does it (fs/fuse/dev_uring.c): the INIT reply must carry
 * FUSE_OVER_IO_URING (offered by the kernel only when enable_uring is Y); then each entry
 * is registered with a header buffer and a payload buffer of at least max_write bytes on
 * a queue qid, one queue per possible CPU. Until every queue has an entry the kernel
 * holds new requests back; a REGISTER that fails turns the ring off for the connection and
 * lets them go over /dev/fuse. A request then goes to the queue of the CPU that issued it.
 * Forgets, interrupts and notifications stay on /dev/fuse: the classic loop keeps running.
 *
 * The session's I/O goes through fuse_session_custom_io: the read hook notes the INIT
 * request, the writev hook patches the INIT reply and, on a ring thread, turns the reply
 * to the request being served into a COMMIT_AND_FETCH instead of a write to /dev/fuse.
 * libfuse's fuse_session_process_buf wants a request in one piece, [fuse_in_header][op
 * args][payload]: each payload buffer has a preamble before it into which the header and
 * op args are copied, so a write's bytes are never moved. A read's reply is copied into
 * the payload buffer (the kernel copies it from there into the reader's pages).
 *
 * One thread per queue, pinned to its CPU, with an io_uring of its own: a thread alone
 * touches its ring, so no locks. The threads stop at the eventfd tfs_uring_stop writes,
 * or when the kernel ends their commands (unmount, abort: -ENOTCONN). */

#include <errno.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transport/fuse_uring_abi.h"
#include "transport/loop_uring.h"
#include "util/guard.h"
#include "util/stats.h"
#include "store/writer.h"
#include "log.h"
#ifdef TFS_LOCK_STATS
#include "tensors/tensors.h"
#endif

#define MAX_DEPTH 8
#define HDR_BYTES 4096           /* the entry's struct fuse_uring_req_header, page-aligned */
#define PREAMBLE 4096            /* room for fuse_in_header + op args before the payload */
#define PAYLOAD ((size_t)1 << 20)     /* >= max_write, max_read (ops_table.c) */
#define ENT_BYTES (HDR_BYTES + PREAMBLE + PAYLOAD)
#define SQE_BYTES 128            /* IORING_SETUP_SQE128: the command area is 80 bytes */
#define STOP_TAG 1               /* user_data of the eventfd poll; entries are pointers */

struct queue;

struct ent {
	struct queue *q;
	struct fuse_uring_req_header *hdr;
	char *payload;
	struct iovec iov[2];
	uint64_t unique;         /* of the request being served */
	uint64_t commit_id;
	uint32_t last_cmd;       /* to send again when the kernel says EAGAIN */
	int replied;
};

struct queue {
	int qid;
	pthread_t thread;
	int started;
	int efd;
	int ring_ok;             /* r was set up: io_uring_queue_exit it */
	struct io_uring r;
	struct ent ent[MAX_DEPTH];
};

static struct {
	struct fuse_session *se;
	int depth, nq;
	struct queue *qs;
	char *mem;               /* nq * depth entries of ENT_BYTES */
	int mem_mapped;          /* mmapped here, not the backend's region */
	size_t mem_bytes;
	uint64_t init_unique;
	int offered;             /* the kernel's INIT offered FUSE_OVER_IO_URING */
	int ready;               /* rings and buffers set up: INIT reply may ask for the ring */
} ur;

/* The entry whose request this thread serves (ring threads only). */
static _Thread_local struct ent *cur;

/* An io_uring with 128-byte SQEs and room for entries commands. 0 or -errno. */
static int ring_open(struct io_uring *r, unsigned entries)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
	p.cq_entries = entries * 2;
	return io_uring_queue_init_params(entries, r, &p);
}

/* The next SQE, zeroed, queued for the next submit. Never full: each entry has at most
 * one command in flight, and the ring has room for all of them and the eventfd poll; were
 * it full, what is queued goes to the kernel first. */
static struct io_uring_sqe *ring_sqe(struct io_uring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);

	if (!sqe) {
		io_uring_submit(r);
		sqe = io_uring_get_sqe(r);
		if (!sqe) {
			tfs_log(LOG_CRIT, "io_uring: the submission queue stays full");
			abort();
		}
	}
	memset(sqe, 0, SQE_BYTES);
	return sqe;
}

static void ent_cmd(struct ent *e, uint32_t op)
{
	struct io_uring_sqe *sqe = ring_sqe(&e->q->r);
	struct fuse_uring_cmd_req *cmd = (struct fuse_uring_cmd_req *)sqe->cmd;
	int reg = op == FUSE_IO_URING_CMD_REGISTER;

	/* cmd_op shares its word with the offset, so it goes after prep_rw. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fuse_session_fd(ur.se),
			 reg ? e->iov : NULL, reg ? 2 : 0, 0);
	sqe->cmd_op = op;
	io_uring_sqe_set_data(sqe, e);
	e->last_cmd = op;
	cmd->qid = (uint16_t)e->q->qid;
	if (!reg)
		cmd->commit_id = e->commit_id;
}

/* Sends the reply in iov (fuse_out_header first) for the request e serves: the header
 * into the entry's header, the rest into its payload buffer, where it may already be. */
static ssize_t ring_reply(struct ent *e, const struct iovec *iov, int count)
{
	struct fuse_out_header oh;
	size_t len = 0, total = 0;
	int i;

	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	for (i = 0; i < count; i++) {
		const char *base = iov[i].iov_base;
		size_t n = iov[i].iov_len;

		total += n;
		if (i == 0) {            /* whatever follows the header in iov[0] is payload */
			base += sizeof(oh);
			n -= sizeof(oh);
		}
		if (len + n > PAYLOAD) {
			tfs_log(LOG_ERR, "io_uring: a reply of over %zu bytes", PAYLOAD);
			oh.error = -EIO;
			len = 0;
			break;
		}
		/* A read's reply comes out of the tensor's memory (read_mem), which its owner
		 * may have truncated under us. */
		if (n && base != e->payload + len && tfs_guarded_copy(e->payload + len, base, n)) {
			oh.error = -EIO;
			len = 0;
			break;
		}
		len += n;
	}
	oh.len = (uint32_t)(sizeof(oh) + len);
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	ent_cmd(e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	e->replied = 1;
	return (ssize_t)total;
}

static void reply_err(struct ent *e, int err)
{
	struct fuse_out_header oh = { .len = sizeof(oh), .error = -err, .unique = e->unique };
	struct iovec iov = { &oh, sizeof(oh) };

	ring_reply(e, &iov, 1);
}

/* A request arrived in e: put it in one piece before the payload and serve it. */
static void serve(struct ent *e)
{
	struct fuse_in_header in;
	size_t pay = e->hdr->ring_ent_in_out.payload_sz, oplen;
	struct fuse_buf b = { 0 };
	char *start;

	memcpy(&in, e->hdr->in_out, sizeof(in));
	e->unique = in.unique;
	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	e->replied = 0;
	if (pay > PAYLOAD || in.len < sizeof(in) + pay ||
	    (oplen = in.len - sizeof(in) - pay) > FUSE_URING_OP_IN_OUT_SZ) {
		tfs_log(LOG_ERR, "io_uring: request %llu (opcode %u) of %u bytes with a %zu-byte "
			"payload does not add up", (unsigned long long)in.unique, in.opcode, in.len, pay);
		reply_err(e, EIO);
		return;
	}
	start = e->payload - oplen - sizeof(in);
	memcpy(start, &in, sizeof(in));
	memcpy(start + sizeof(in), e->hdr->op_in, oplen);
	b.mem = start;
	b.size = in.len;
	tfs_stats_add(TFS_ST_REQUESTS, 1);
	tfs_stats_add(TFS_ST_URING_REQUESTS, 1);
	cur = e;
	tfs_writer_defer_wakes(1);
#ifdef TFS_LOCK_STATS
	tfs_ns_tag = in.opcode;
#endif
	fuse_session_process_buf(ur.se, &b);
#ifdef TFS_LOCK_STATS
	tfs_ns_tag = 0;
#endif
	tfs_writer_defer_wakes(0);
	cur = NULL;
	if (!e->replied) {
		/* The kernel waits for a commit of every request it sent over the ring. */
		tfs_log(LOG_ERR, "io_uring: no reply to request %llu (opcode %u)",
			(unsigned long long)in.unique, in.opcode);
		reply_err(e, EIO);
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* A CPU outside the daemon's cpuset serves unpinned: the queue works the same. */
	if (sched_setaffinity(0, sizeof(set), &set))
		tfs_log(LOG_DEBUG, "io_uring: queue %d not pinned: %s", cpu, strerror(errno));
}

static void *queue_main(void *arg)
{
	struct queue *q = arg;
	struct io_uring_sqe *sqe;
	int i, live, stop = 0, n;
	char name[16];


	snprintf(name, sizeof(name), "tfs-ring-%d", q->qid);
	pthread_setname_np(pthread_self(), name);
	pin(q->qid);
	for (i = 0; i < ur.depth; i++)
		ent_cmd(&q->ent[i], FUSE_IO_URING_CMD_REGISTER);
	sqe = ring_sqe(&q->r);
	io_uring_prep_poll_add(sqe, q->efd, POLLIN);
	io_uring_sqe_set_data64(sqe, STOP_TAG);
	live = ur.depth;
	while (!stop && live > 0) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;

		/* The replies queued since, and the wait for the next request, in one enter. */
		n = io_uring_submit_and_wait(&q->r, 1);
		if (n < 0) {
			if (n == -EINTR)
				continue;
			tfs_log(LOG_ERR, "io_uring: queue %d: io_uring_enter: %s", q->qid,
				strerror(-n));
			break;
		}
		io_uring_for_each_cqe(&q->r, head, cqe) {
			struct ent *e = io_uring_cqe_get_data(cqe);
			int res = cqe->res;

			seen++;
			if (cqe->user_data == STOP_TAG) {
				stop = 1;
				continue;
			}
			if (res == 0) {
				serve(e);
				continue;
			}
			if (res == -EAGAIN || res == -EINTR) {
				/* A commit's header and payload are still as the reply left them. */
				ent_cmd(e, e->last_cmd);
				continue;
			}
			live--;
			if (res == -ENOTCONN || res == -ECONNABORTED || res == -ECANCELED)
				continue;     /* unmounted or aborted */
			if (res == -EOPNOTSUPP)
				tfs_log(LOG_NOTICE, "io_uring: the kernel refused the ring (is "
					"/sys/module/fuse/parameters/enable_uring Y?): serving over "
					"/dev/fuse");
			else
				tfs_log(LOG_ERR, "io_uring: queue %d: an entry failed: %s", q->qid,
					strerror(-res));
		}
		io_uring_cq_advance(&q->r, seen);
	}
	return NULL;
}

/* The number of queues the kernel makes: one per possible CPU (num_possible_cpus). */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	char buf[256], *p;
	long last = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			p = strrchr(buf, '-');
			if (!p)
				p = strrchr(buf, ',');
			last = strtol(p ? p + 1 : buf, NULL, 10);
		}
		fclose(f);
	}
	return last >= 0 && last < 4096 ? (int)last + 1 : get_nprocs_conf();
}

/* At the INIT request (a classic worker, before any other request): the rings and their
 * buffers, so that the reply asks for the ring only when it can be served. 0 or -errno. */
static int rings_prepare(void)
{
	size_t need = (size_t)ur.nq * (size_t)ur.depth * ENT_BYTES;
	int i, j, rc;

	if (!ur.mem) {
		ur.mem = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		if (ur.mem == MAP_FAILED) {
			ur.mem = NULL;
			return -errno;
		}
		ur.mem_mapped = 1;
		ur.mem_bytes = need;
	}
	ur.qs = calloc((size_t)ur.nq, sizeof(*ur.qs));
	if (!ur.qs)
		return -ENOMEM;
	for (i = 0; i < ur.nq; i++)
		ur.qs[i].efd = -1;
	for (i = 0; i < ur.nq; i++) {
		struct queue *q = &ur.qs[i];

		q->qid = i;
		q->efd = eventfd(0, EFD_CLOEXEC);
		if (q->efd < 0)
			return -errno;
		rc = ring_open(&q->r, (unsigned)ur.depth + 2);
		if (rc)
			return rc;
		q->ring_ok = 1;
		for (j = 0; j < ur.depth; j++) {
			struct ent *e = &q->ent[j];
			char *base = ur.mem + ((size_t)i * (size_t)ur.depth + (size_t)j) * ENT_BYTES;

			e->q = q;
			e->hdr = (struct fuse_uring_req_header *)base;
			e->payload = base + HDR_BYTES + PREAMBLE;
			e->iov[0].iov_base = e->hdr;
			e->iov[0].iov_len = sizeof(*e->hdr);
			e->iov[1].iov_base = e->payload;
			e->iov[1].iov_len = PAYLOAD;
		}
	}
	return 0;
}

static void rings_free(void)
{
	int i;

	for (i = 0; ur.qs && i < ur.nq; i++) {
		if (ur.qs[i].ring_ok)
			io_uring_queue_exit(&ur.qs[i].r);
		if (ur.qs[i].efd >= 0)
			close(ur.qs[i].efd);
	}
	free(ur.qs);
	ur.qs = NULL;
	if (ur.mem_mapped)
		munmap(ur.mem, ur.mem_bytes);
	ur.mem = NULL;
	ur.mem_mapped = 0;
}

/* After the INIT reply asked for the ring: a thread per queue. Were one missing, the
 * kernel would hold every request back for good: a REGISTER it refuses (an iovec count
 * of 1) turns the ring off for the connection instead. */
static void rings_start(void)
{
	sigset_t all, old;
	int i, e = 0;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < ur.nq; i++) {
		e = pthread_create(&ur.qs[i].thread, NULL, queue_main, &ur.qs[i]);
		if (e)
			break;
		ur.qs[i].started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (i == ur.nq) {
		tfs_log(LOG_INFO, "io_uring: serving over %d queues of %d entries", ur.nq, ur.depth);
		return;
	}
	tfs_log(LOG_ERR, "io_uring: cannot start queue %d's thread: %s: serving over /dev/fuse",
		i, strerror(e));
	{
		struct queue *q = &ur.qs[i];
		struct io_uring_sqe *sqe = ring_sqe(&q->r);
		struct fuse_uring_cmd_req *cmd = (struct fuse_uring_cmd_req *)sqe->cmd;
		int rc;

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fuse_session_fd(ur.se),
				 q->ent[0].iov, 1, 0);
		sqe->cmd_op = FUSE_IO_URING_CMD_REGISTER;
		cmd->qid = (uint16_t)q->qid;
		rc = io_uring_submit_and_wait(&q->r, 1);
		if (rc < 0)
			tfs_log(LOG_ERR, "io_uring: cannot turn the ring off: %s", strerror(-rc));
	}
}

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;
	uint32_t flags, flags2 = 0;

	(void)userdata;
	if (n >= (ssize_t)(sizeof(*in) + TFS_INIT_IN_FLAGS2 + 4) &&
	    in->opcode == TFS_FUSE_INIT_OPCODE) {
		memcpy(&flags, (const char *)(in + 1) + TFS_INIT_IN_FLAGS, 4);
		if (flags & TFS_FUSE_INIT_EXT)
			memcpy(&flags2, (const char *)(in + 1) + TFS_INIT_IN_FLAGS2, 4);
		ur.init_unique = in->unique;
		ur.offered = (flags & TFS_FUSE_INIT_EXT) &&
			(flags2 & (uint32_t)(TFS_FUSE_OVER_IO_URING >> 32));
	}
	return n;
}

/* The INIT reply, about to be written: asks for the ring when the kernel offered it and
 * the rings are ready. */
static void patch_init(struct iovec *iov, int count)
{
	uint32_t flags, flags2;
	int rc;

	if (!ur.offered) {
		tfs_log(LOG_NOTICE, "io_uring: the kernel does not offer FUSE over io_uring "
			"(/sys/module/fuse/parameters/enable_uring is N, or Linux < 6.14): serving "
			"over /dev/fuse");
		return;
	}
	if (count < 2 || iov[1].iov_len < TFS_INIT_OUT_FLAGS2 + 4)
		return;
	rc = rings_prepare();
	if (rc) {
		tfs_log(LOG_ERR, "io_uring: cannot set up the rings: %s: serving over /dev/fuse",
			strerror(-rc));
		rings_free();
		return;
	}
	memcpy(&flags, (char *)iov[1].iov_base + TFS_INIT_OUT_FLAGS, 4);
	memcpy(&flags2, (char *)iov[1].iov_base + TFS_INIT_OUT_FLAGS2, 4);
	flags |= TFS_FUSE_INIT_EXT;
	flags2 |= (uint32_t)(TFS_FUSE_OVER_IO_URING >> 32);
	memcpy((char *)iov[1].iov_base + TFS_INIT_OUT_FLAGS, &flags, 4);
	memcpy((char *)iov[1].iov_base + TFS_INIT_OUT_FLAGS2, &flags2, 4);
	ur.ready = 1;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct ent *e = cur;
	int init;
	ssize_t n;

	(void)userdata;
	if (count < 1 || iov[0].iov_len < sizeof(*oh))
		return writev(fd, iov, count);
	if (e && !e->replied && oh->unique == e->unique)
		return ring_reply(e, iov, count);
	init = ur.init_unique && oh->unique == ur.init_unique && oh->error == 0 && !ur.ready;
	if (init)
		patch_init(iov, count);
	n = writev(fd, iov, count);
	if (init && ur.ready) {
		if (n < 0) {
			rings_free();
			ur.ready = 0;
		} else {
			rings_start();
		}
	}
	return n;
}

int tfs_uring_setup(struct fuse_session *se, int depth)
{
	static const struct fuse_custom_io io = { .read = io_read, .writev = io_writev };
	int rc;

	if (depth < 1 || depth > MAX_DEPTH)
		return -EINVAL;
	ur.se = se;
	ur.depth = depth;
	ur.nq = possible_cpus();
	rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
	return rc > 0 ? -rc : rc;
}

size_t tfs_uring_region_bytes(void)
{
	return ur.se ? (size_t)ur.nq * (size_t)ur.depth * ENT_BYTES : 0;
}

void tfs_uring_give_region(void *mem)
{
	if (ur.se && !ur.mem && mem) {
		ur.mem = mem;
		ur.mem_bytes = tfs_uring_region_bytes();
	}
}

void tfs_uring_stop(void)
{
	uint64_t one = 1;
	int i;

	if (!ur.qs)
		return;
	for (i = 0; i < ur.nq; i++)
		if (ur.qs[i].started && write(ur.qs[i].efd, &one, sizeof(one)) != sizeof(one))
			tfs_log(LOG_ERR, "io_uring: cannot wake queue %d: %s", i, strerror(errno));
	for (i = 0; i < ur.nq; i++)
		if (ur.qs[i].started)
			pthread_join(ur.qs[i].thread, NULL);
	rings_free();
	ur.ready = 0;
}
