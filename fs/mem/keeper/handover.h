/* Two holders of the memory (docs/crash.md, "Two holders"): the daemon keeps a descriptor
 * of every allocation the keeper sent it, so that memory that lives as long as a
 * descriptor of it does (the host backend's shared-memory objects) survives the keeper's
 * death too. When the keeper dies, the daemon starts a new one (an exec of the same
 * program: the daemon may have CUDA running, which must not be forked) and hands it every
 * descriptor with the keeper's record of it (id, size, device, handle); the new keeper
 * supervises the daemon from then on, and starts it again when it dies as the first one
 * did.
 *
 * The new keeper is not the daemon's child (a double fork): it follows the daemon through a
 * pidfd, and the daemon need not reap it. It marks each /dev/shm directory of a dead keeper
 * whose objects it took with ".keeper.<its pid>" (TFS_HOST_KEEPER_MARK), so that the
 * start-up sweep (shm_sweep.c) never removes a directory whose objects a live keeper
 * holds.
 *
 * Protocol on a new SOCK_SEQPACKET pair, daemon to new keeper: one struct tfs_handover_conf,
 * then one struct tfs_handover_item per allocation with its descriptor (SCM_RIGHTS), then an
 * item with op TFS_HANDOVER_END; the keeper answers with a struct tfs_keeper_rep whose rc
 * is 0 and id its pid, and the pair is the keeper's socket from then on (keeper.h). */
#ifndef TFS_FS_KEEPER_HANDOVER_H
#define TFS_FS_KEEPER_HANDOVER_H

#include <stdint.h>
#include <sys/types.h>

#include "mem/keeper/keeper.h"
#include "secret.h"        /* TFS_PASSWORD_MAX */

/* The environment variable naming the new keeper's end of the pair. */
#define TFS_HANDOVER_ENV "TFS_KEEPER_ADOPT"
#define TFS_HANDOVER_MAGIC 0x54465348u      /* "TFSH" */
/* How long either side waits for the other during the handover: a wedged peer must not
 * hold the daemon's keeper calls for ever. */
#define TFS_HANDOVER_TIMEOUT_S 30

enum { TFS_HANDOVER_ITEM = 1, TFS_HANDOVER_END = 2 };

#define TFS_HANDOVER_LOG_SYSLOG 1u
#define TFS_HANDOVER_DETACH_STDIO 2u
#define TFS_HANDOVER_STDERR_IS_LOG 4u

struct tfs_handover_conf {
	uint32_t magic;
	uint32_t flags;                 /* TFS_HANDOVER_LOG_SYSLOG ... */
	uint32_t delay_max_ms;
	int32_t daemon;                 /* the daemon's pid */
	char mem[16];                   /* the keeper memory's name (struct tfs_keeper_mem) */
	char mountpoint[4096];
	char rundir[4096];
	char lease[64];
	char secret[TFS_PASSWORD_MAX + 1];
};

struct tfs_handover_item {
	uint32_t op;                    /* TFS_HANDOVER_ITEM, TFS_HANDOVER_END */
	int32_t device;
	uint64_t id, size;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
};

/* --- the daemon's side; the registry's mutex is a leaf under the keeper client's --- */

/* What a new keeper is started with (main.c, in every daemon, before the backend starts).
 * conf and what it points to stay valid while the daemon runs. */
void tfs_keeper_set_conf(const struct tfs_keeper_conf *conf);
/* A new keeper may be started when this one dies: the keeper's memory outlives its
 * allocator while a descriptor of it is held (the host keeper memory, whose adopt is set;
 * CUDA legacy IPC memory dies with the keeper). 0, or -ENOTSUP (nothing changed) when the
 * keeper's memory (tfs_keeper_set_conf) cannot be handed over. */
int tfs_handover_enable(void);
int tfs_handover_enabled(void);
/* The registry: a copy (dup) of fd for allocation id, noted from the keeper's ALLOC and
 * LIST replies; forgotten (closed) at FREE. note does nothing with fd < 0 or when not
 * enabled (0); else 0, or -errno when no copy is kept (-EMFILE, -ENFILE: out of
 * descriptors, not logged here; -ENOMEM and others logged): that allocation would be lost
 * with the keeper, so the caller gives an ALLOC's back. */
int tfs_handover_note(const struct tfs_keeper_rep *rep, int fd);
void tfs_handover_forget(uint64_t id);
/* Starts a new keeper and hands it the registry: 0 with *sock (the new keeper's socket,
 * close-on-exec) and *pid, or -errno (nothing started that lives on). Called with the keeper
 * client's mutex held, by one thread at a time. */
int tfs_handover_spawn(int *sock, pid_t *pid);

/* --- the new keeper's side --- */

/* In main() before anything else: a process started by tfs_handover_spawn (TFS_HANDOVER_ENV
 * set) becomes the keeper and never returns; it exits 1 when the handover fails. mems: the
 * keeper memories this build has, NULL-terminated (the daemon names one). Returns 0 in
 * any other process. */
int tfs_handover_keeper_main(char **argv, const struct tfs_keeper_mem *const *mems);

#endif
