/* The memory keeper: a process of its own that owns every tensor's memory (the cuda
 * backend's cudaMalloc blocks, the host backend's shared-memory objects) and supervises the
 * daemon, so that a crash of the daemon loses no tensor (docs/crash.md).
 *
 * Layout: the process that will serve forks once, before CUDA starts; the parent becomes
 * the keeper, the child the daemon. They talk over a socketpair made for each daemon, so no
 * other process can reach the keeper. The keeper has no FUSE, no JSON and no Redis: it
 * allocates, frees, exports handles and lists what it holds.
 *
 * Lifetime of the memory: the keeper frees a block only when the daemon asks for it
 * (FREE: the tensor's last reference went, or adoption found no record naming it), or when
 * it ends on an explicit stop: the daemon said goodbye (it unmounted), or the keeper got
 * SIGTERM, SIGINT or SIGHUP. Nothing else does: when the daemon dies without saying goodbye
 * (a signal, a crash, a start that failed, Redis unreachable), the keeper starts it again
 * (fork and exec of the same program with the same arguments) after a back-off, for as long
 * as the keeper lives; the new daemon adopts the memory through the keeper's inventory and
 * the node's Redis records (adopt.c). The back-off: the first restart after a daemon that
 * served KEEPER_BACKOFF_RESET seconds goes at once, each further one waits twice as long as
 * the one before, from KEEPER_BACKOFF_MIN_MS up to conf->delay_max_ms. The only start whose
 * failure ends the keeper is the first one, before any daemon served and while the keeper
 * holds nothing: its exit status tells the terminal why.
 *
 * Protocol: one fixed-size request, one fixed-size reply, on a SOCK_SEQPACKET socket; a
 * reply for the host backend carries the object's file descriptor (SCM_RIGHTS), as does the
 * REDIS notice (a pidfd). Requests come from one daemon thread at a time (the client's
 * mutex). */
#ifndef TFS_FS_KEEPER_H
#define TFS_FS_KEEPER_H

#include <stdint.h>
#include <sys/types.h>

#include "tensorfs.h"      /* TFS_IPC_HANDLE_SIZE */

/* The restart back-off (see above); conf->delay_max_ms is the option restart_delay_max. */
#define KEEPER_BACKOFF_MIN_MS 100
#define KEEPER_BACKOFF_MAX_S 30             /* restart_delay_max's default */
#define KEEPER_BACKOFF_LIMIT_S 3600         /* the most restart_delay_max may be */
#define KEEPER_BACKOFF_RESET 60             /* seconds of serving that reset it */

/* The daemon's exit status when its start failed because Redis did not answer: the keeper
 * logs it as such and retries; like any exit before serving it is not a crash. */
#define TFS_EXIT_REDIS 75                   /* EX_TEMPFAIL */

enum tfs_keeper_op {
	TFS_KEEPER_ALLOC = 1,   /* size, device, uid/gid/mode (, dst_id, dst_off: a link,
				 * below) -> id, handle (+ fd) */
	TFS_KEEPER_FREE,        /* id -> rc */
	TFS_KEEPER_LIST,        /* id: the entry with the next larger id -> id, size, device,
				 * handle (+ fd); rc -ENOENT after the last */
	TFS_KEEPER_READY,       /* the daemon serves: later deaths are crashes to restart */
	TFS_KEEPER_BYE,         /* the daemon ends on purpose: do not restart it */
	TFS_KEEPER_COPY,        /* size bytes of allocation id at src_off to allocation
				 * dst_id at dst_off, finished when the reply comes -> rc
				 * (-ENOTSUP: the memory cannot copy itself, e.g. host) */
	TFS_KEEPER_REDIS,       /* with a pidfd (SCM_RIGHTS): the private redis-server the
				 * daemon runs now, which the keeper stops when it ends on a
				 * stop the daemon did not carry out; a notice, no reply */
};

/* ALLOC with dst_id set: the new allocation continues allocation dst_id at byte dst_off
 * of the memory they make together (a --memory vmm tensor grown in place, docs/vmm.md),
 * on the same device. The keeper writes both, little-endian, into bytes
 * TFS_KEEPER_LINK_AT.. of the new allocation's handle (-EINVAL where its memory's handles
 * use them), so that LIST and a new keeper (handover.h) give them back and a new daemon
 * finds every part of a tensor. */
#define TFS_KEEPER_LINK_AT 48

static inline void tfs_keeper_link_put(uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t head,
				       uint64_t off)
{
	for (int i = 0; i < 8; i++) {
		handle[TFS_KEEPER_LINK_AT + i] = (uint8_t)(head >> (8 * i));
		handle[TFS_KEEPER_LINK_AT + 8 + i] = (uint8_t)(off >> (8 * i));
	}
}

/* 1 with *head and *off when handle says it continues another allocation, else 0. */
static inline int tfs_keeper_link_get(const uint8_t handle[TFS_IPC_HANDLE_SIZE],
				      uint64_t *head, uint64_t *off)
{
	uint64_t h = 0, o = 0;

	for (int i = 7; i >= 0; i--) {
		h = h << 8 | handle[TFS_KEEPER_LINK_AT + i];
		o = o << 8 | handle[TFS_KEEPER_LINK_AT + 8 + i];
	}
	*head = h;
	*off = o;
	return h != 0;
}

struct tfs_keeper_req {
	uint32_t op;
	int32_t device;
	uint64_t id;
	uint64_t size;
	uint32_t uid, gid, mode;
	uint32_t pad;
	uint64_t dst_id, src_off, dst_off;     /* COPY; ALLOC's link (dst_id, dst_off) */
};

struct tfs_keeper_rep {
	int32_t rc;             /* 0 or a negative errno */
	int32_t device;
	uint64_t id;
	uint64_t size;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
};

/* What the keeper allocates memory with: the backend's half that runs in the keeper
 * (keeper_host.c, fs/mem/cuda/keeper_mem.c). alloc fills handle (and *fd for memory
 * another process maps by descriptor, else -1) and *priv (its own per-allocation state); free
 * releases it. They run in the keeper only, after the fork (CUDA starts at the first
 * alloc). */
struct tfs_keeper_mem {
	const char *name;
	int (*alloc)(uint64_t size, int device, uid_t uid, gid_t gid, mode_t mode,
		     uint8_t handle[TFS_IPC_HANDLE_SIZE], int *fd, void **priv);
	void (*free)(void *priv, uint64_t size, int device);
	/* The descriptor to send again for a listed allocation, or -1. Owned by priv. */
	int (*fd)(void *priv);
	/* Copies len bytes from src at src_off to dst at dst_off (ranges checked by the
	 * caller), returning once done: 0, -EIO. The owner of both allocations copies between
	 * devices over peer access, where a process that imported them through IPC handles
	 * gets a copy staged through host memory (tests/bench/RESULTS-gpu.md, issue 18).
	 * May be NULL. */
	int (*copy)(void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t len);
	/* A new keeper takes an allocation a dead one made (handover.h): fd (taken over, even
	 * on error), the handle, size and device its record had; fills *priv as alloc does.
	 * 0, or -errno (the allocation is not taken). adopt_done runs once after the last.
	 * NULL for memory that dies with its allocator: no keeper is started again then. */
	int (*adopt)(int fd, const uint8_t handle[TFS_IPC_HANDLE_SIZE], uint64_t size,
		     int device, void **priv);
	void (*adopt_done)(void);
};

extern const struct tfs_keeper_mem tfs_keeper_mem_host;
#ifdef TFS_HAVE_CUDA
extern const struct tfs_keeper_mem tfs_keeper_mem_cuda;
extern const struct tfs_keeper_mem tfs_keeper_mem_vmm;    /* --memory vmm */
#endif

/* --- the keeper's side (keeper.c) --- */

/* What the keeper needs to know besides its memory. */
struct tfs_keeper_conf {
	const struct tfs_keeper_mem *mem;
	char **argv;            /* the program's arguments, run again for a restart */
	const char *mountpoint; /* detached when the keeper stops while no daemon runs */
	const char *rundir;     /* the private redis-server's folder, "" when none */
	int close_fd;           /* the FUSE device, -1 if none: not the keeper's */
	int notify_fd;          /* the start-up pipe to the foreground process, -1 if none */
	unsigned delay_max_ms;  /* the back-off's cap (KEEPER_BACKOFF_MIN_MS or more) */
	int detach_stdio;       /* in the background: stdin, stdout (and stderr when it is
				 * not the log) become /dev/null, as the daemon's do */
	int stderr_is_log;
	const char *lease;      /* the node lease's token, passed to a restarted daemon
				 * (TFS_LEASE) so that it takes the lease over (lease.h) */
	const char *secret;     /* the Redis password, NULL or "" when none: passed to a
				 * restarted daemon on a pipe (secret.h), never in argv */
	int syslog;             /* the daemon logs to syslog: a keeper started by exec does
				 * too (handover.h) */
};

/* Called by the process that is about to serve, after it forked into the background and
 * before the backend starts. Forks: returns 0 in the child (the daemon), with the client
 * side connected; the parent never returns (it keeps the memory, restarts the daemon after
 * a crash, and exits with the daemon's exit status at the end, 0 when stopped by a signal
 * while no daemon ran). The keeper's pid names the host backend's objects. -errno when the
 * fork fails (nothing changed). */
int tfs_keeper_fork(const struct tfs_keeper_conf *conf);

/* A keeper started by a daemon whose keeper died (handover.h): closes every descriptor
 * above 2 but keep, which it inherited from the daemon. */
void tfs_keeper_close_inherited(int keep);

struct tfs_handover_item;
/* Runs the keeper for a daemon that is not its child (handover.h): sock is its socket to
 * the daemon, items[i] with fds[i] the allocations the daemon handed over (taken by
 * conf->mem->adopt; the ids stay). Answers the daemon with its pid, then serves as
 * tfs_keeper_fork's parent does, following the daemon through a pidfd until it dies.
 * Never returns. */
void __attribute__((noreturn)) tfs_keeper_resume(const struct tfs_keeper_conf *conf, int sock,
						 pid_t daemon,
						 const struct tfs_handover_item *items,
						 const int *fds, size_t n);

/* Detaches the mount at mnt, never one a symlink there leads to (umount2 with
 * UMOUNT_NOFOLLOW, else fusermount3 -u -z for a user who may not); nothing when it
 * cannot. Used by the keeper when it stops while no daemon runs and by a daemon that
 * finds a dead mount. */
void tfs_detach_mount(const char *mnt);

/* --- the daemon's side (keeper_client.c); each call takes the client's mutex --- */

/* A daemon started by a keeper (after a crash) finds its socket in the environment:
 * returns 1 and connects, or 0 when there is none. */
int tfs_keeper_from_env(void);
/* 1 when the daemon has a keeper. */
int tfs_keeper_present(void);
/* The keeper's pid (names of host objects), or our own pid without a keeper. */
pid_t tfs_keeper_pid(void);
/* One request and its reply; *fd (may be NULL) receives a descriptor sent with it (the
 * caller owns it) or -1. -EPIPE when the keeper is gone, else the reply's rc. */
int tfs_keeper_call(const struct tfs_keeper_req *req, struct tfs_keeper_rep *rep, int *fd);
/* COPY (see enum tfs_keeper_op): 0, -ENOTSUP without a keeper or where its memory cannot
 * copy itself, -ENOENT/-EINVAL for unknown ids or ranges, -EIO, -EPIPE. Holds the client's
 * mutex until the copy is done, so other keeper calls wait for it. */
int tfs_keeper_copy(uint64_t dst_id, uint64_t dst_off, uint64_t src_id, uint64_t src_off,
		    uint64_t len);
/* Two holders (handover.h): the daemon keeps a descriptor of each allocation the keeper
 * sends, and a thread starts a new keeper when this one dies. For memory that outlives its
 * allocator while a descriptor of it is held (the host backend). Nothing without a
 * keeper. */
void tfs_keeper_two_holders(void);
/* READY and BYE (see enum tfs_keeper_op); nothing without a keeper. After BYE no keeper
 * is started again. */
void tfs_keeper_tell(uint32_t op);
/* REDIS (see enum tfs_keeper_op): sends a copy of pidfd, which stays the caller's;
 * nothing without a keeper or with pidfd < 0. */
void tfs_keeper_tell_redis(int pidfd);

#endif
