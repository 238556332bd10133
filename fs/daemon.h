/* The daemon's options (main.c's fuse_opt table), private to main.c. What the layers
 * below need of them is theirs, set by main at start-up: tfs_schema (store/schema.h),
 * tfs_redis (store/conn.h), tfs_mem (mem/backend.h), tfs_fuse (fuse/ops.h). The lock
 * order is written down in tensors/tensors.h. */
#ifndef TFS_DAEMON_H
#define TFS_DAEMON_H

struct tfs_opts {
	char *redis;             /* URL, NULL: start a private redis-server */
	char *redis_password_file;   /* --redis-password-file: the password's file */
	char *backend;           /* "auto", "host", "cuda" */
	char *memory;            /* -o memory: "ipc" (default) or "vmm" (cuda only) */
	char *node;
	char *prefix;
	char *queue;
	char *queue_users;       /* --user-queues: names or uids with a queue of their own */
	char *max_bytes;         /* text: 64G, 512M, ... */
	char *preallocate;       /* text: 0:40G,cpu:64G (docs/tiers.md#preallocation) */
	char *queue_max_command; /* -o queue_max_command=SIZE: a larger command is refused */
	char *host_pack;         /* -o host_pack=SIZE: host tensors packed into blocks */
	char *queue_max_batch;   /* -o queue_max_batch=SIZE: bytes of commands taken at once */
	int queue_max_forward;       /* -o queue_max_forward=N: commands waiting for a node */
	char *devices;           /* --devices: "cpu,0,2,3", NULL: every device */
	char *log;               /* log file; default stderr (foreground) or syslog */
	int device;
	int device_given;            /* --device was given (else: --devices' lowest GPU, or 0) */
	int host_devices;            /* -o host_devices=N: the host backend's stand-in GPUs */
	int threads;                 /* FUSE workers (--threads) */
	int restarts;                /* -o restarts=N: obsolete, accepted and ignored */
	int restart_delay_max;       /* -o restart_delay_max=S: the keeper's back-off cap */
	int foreground;
	int debug;
	int allow_other;
	char *handle_socket;         /* -o handle_socket=PATH: the handle socket's path */
	int page_cache;              /* --page-cache: no direct_io (measurement only) */
	double entry_timeout;        /* -o entry_timeout: seconds the kernel keeps a name */
	int io_uring;                /* -o io_uring: serve over io_uring where the kernel allows */
	int io_uring_depth;          /* -o io_uring_depth=N: entries per queue */
	char *cluster_key;       /* --cluster-key FILE: trust between daemons (net/auth.h) */
	int net_timeout;             /* -o net_timeout=S: a wait for another node's daemon */
	int net_staged;              /* -o net_staged: no zero copy over UCX (net.h) */
	int net_threads;             /* -o net_threads=N: UCX workers, one thread each */
	int show_help;
	int show_version;
	/* The bounds (tensors/quota.h struct tfs_limits), as given: NULL for the default. */
	char *max_holds, *max_user_holds, *max_path, *max_depth, *max_xattr_file,
	     *max_xattr_user, *max_user_tensors;
};

struct tfs_daemon {
	struct tfs_opts o;
};

extern struct tfs_daemon tfs_d;

#endif
