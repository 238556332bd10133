/* tensorfs: mounts a directory whose files are tensors in GPU (or shared host) memory,
 * with metadata in Redis. Usage: tensorfs [options] MOUNTPOINT (see usage() and
 * docs/options.md). */
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "tensors/adopt.h"
#include "handles/server.h"
#include "mem/keeper/keeper.h"
#include "store/conn.h"
#include "mem/devices.h"
#include "store/dircache.h"
#include "store/lease.h"
#include "transport/loop.h"
#include "transport/loop_uring.h"
#include "queue/queue.h"
#include "queue/users.h"
#include "store/password.h"
#include "store/private_redis.h"
#include "log.h"
#include "keeper_start.h"
#include "mountpoint.h"
#include "notify.h"
#include "options.h"
#include "fuse/ops.h"
#include "util/stats.h"
#include "util/nofile.h"
#include "secret.h"
#include "tensors/tensors.h"
#include "net/net.h"

struct tfs_daemon tfs_d;


/* A daemon whose memory its keeper holds for a later start (one the keeper restarted, or
 * one that served) ends here when its start fails or its request loop breaks, before any
 * clean-up: that would free the tensors it adopted and delete their records, and stop the
 * private redis-server, whose append-only file goes with it. The keeper starts a daemon
 * again after a back-off, which adopts them (keeper.h). status: the exit status, 1 if 0. */
static void __attribute__((noreturn)) leave_to_keeper(int status)
{
	tfs_log(LOG_ERR, "leaving the tensors to the memory keeper, which starts a daemon again");
	_exit(status ? status : 1);
}

/* Forks into the background; the parent waits for the child's verdict so that a failure
 * after the fork (CUDA init, say) still reaches the terminal as an exit status. */
static int daemonize(int *notify_fd)
{
	int pfd[2];
	pid_t pid;
	char status = 1;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(pfd[1]);
		if (read(pfd[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(pfd[0]);
	setsid();
	if (chdir("/"))
		tfs_log(LOG_WARNING, "cannot chdir to /");
	*notify_fd = pfd[1];
	return 0;
}

static void notify_parent(int *fd, char status)
{
	int null;

	if (*fd < 0)
		return;
	if (write(*fd, &status, 1) != 1)
		tfs_log(LOG_WARNING, "cannot report start-up status");
	close(*fd);
	*fd = -1;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (!tfs_d.o.log)
			dup2(null, 2);
		close(null);
	}
}


/* Start-up step: the memory backend (CUDA, when it is cuda). 0, or -1 after logging why
 * (nothing started). */
static int start_backend(const struct tfs_opts *o)
{
	int rc = tfs_mem_start(o->device);

	if (rc && !o->device_given && o->devices && tfs_mem.devmask &&
	    (rc == -EINVAL || rc == -ENODEV)) {
		tfs_log(LOG_ERR, "--devices %s: no device %d: the %s backend cannot start on it "
			"(%s)", o->devices, o->device, tfs_mem.ops->name, strerror(-rc));
		return -1;
	}
	if (rc) {
		tfs_log(LOG_ERR, "the %s backend failed to start on device %d: %s",
			tfs_mem.ops->name, o->device, strerror(-rc));
		return -1;
	}
	return 0;
}

/* Start-up step: the devices the options name are among those the started backend has.
 * 0, or -1 after logging why; the backend stays started (the caller's ladder stops it, or
 * leaves it to the keeper). */
static int check_devices(const struct tfs_opts *o)
{
	int ndev = tfs_mem.ops->device_count(tfs_mem.be);

	/* --devices first: without --device, the default device is its first. */
	if (!o->devices) {
		tfs_mem.devmask = ~0ull;
	} else if (ndev < TFS_DEVICES_MAX && tfs_mem.devmask >> ndev) {
		tfs_log(LOG_ERR, "--devices %s: no device %d (%d present)", o->devices,
			ndev + __builtin_ctzll(tfs_mem.devmask >> ndev), ndev);
		return -1;
	}
	if (o->device >= ndev) {
		tfs_log(LOG_ERR, "--device %d: only %d device(s)", o->device, ndev);
		return -1;
	}
	if (ndev < TFS_DEVICES_MAX && tfs_mem.prealloc.devmask >> ndev) {
		tfs_log(LOG_ERR, "--preallocate: no device %d",
			ndev + __builtin_ctzll(tfs_mem.prealloc.devmask >> ndev));
		return -1;
	}
	if (!o->device_given && o->devices && !tfs_mem.devmask) {
		tfs_log(LOG_ERR, "--devices %s names no GPU: new tensors need one as their "
			"default device", o->devices);
		return -1;
	}
	if (!tfs_device_served(o->device)) {
		tfs_log(LOG_ERR, "--device %d is not one of --devices %s", o->device, o->devices);
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	/* The arguments as spelled (tfs_opts_spell), kept to the end: the words opt_proc keeps
	 * (nonopts) point into them, so parsing gets a view it does not own. */
	struct fuse_args spelled = FUSE_ARGS_INIT(0, NULL);
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_cmdline_opts cmd = { 0 };
	struct tfs_opts *o = &tfs_d.o;
	struct fuse_session *se = NULL;
	char url[512], shown[512], err[256], mntopts[128];
	char pw[TFS_PASSWORD_MAX + 1];
	int rc = 1, notify_fd = -1, restart, release_lease = 0, inline_pw, keep;
	dev_t beneath_dev = 0;
	int dead;
	redisContext *c;

	/* Before anything holds a descriptor, in every process this program becomes. */
	tfs_nofile_raise();
	/* A keeper the daemon started in place of one that died (handover.h): nothing else. */
	tfs_keeper_exec_main(argv);
	/* Secrets first: passwords out of argv (/proc/PID/cmdline shows it to every user;
	 * parsing reads the copies spell_args makes), out of the environment. */
	if (tfs_opts_spell(argc, argv, &spelled))
		return 1;
	inline_pw = tfs_argv_scrub(argc, argv);
	tfs_password_take_env();
	/* Started again by a keeper after a crash: already in the background, the keeper
	 * holds the memory to adopt. */
	restart = tfs_keeper_from_env();
	/* Whether a failure must leave everything to the keeper (leave_to_keeper). */
	keep = restart;
	if (tfs_lease_init(restart))
		goto out_args;

	rc = tfs_opts_parse(&spelled, &args, &cmd, argv[0]);
	if (rc != 0) {
		rc = rc > 0 ? 0 : 1;     /* --help and --version end here, done */
		goto out_args;
	}
	rc = 1;
	if (tfs_opts_check(o, restart))
		goto out_args;
	/* Before the daemon leaves its working directory: the file may be named from it. */
	if (o->cluster_key && tfs_net_key_load(o->cluster_key))
		goto out_args;
	if (tfs_table_init(&tfs_tensors.table))
		goto out_args;

	if (tfs_password_get(o->redis_password_file, inline_pw, pw, sizeof(pw)))
		goto out_table;
	if (o->redis) {
		snprintf(url, sizeof(url), "%s", o->redis);
	} else if (tfs_spawn_redis(url, sizeof(url), pw)) {
		goto out_table;
	}
	if (tfs_url_parse(url, &tfs_redis.url, err, sizeof(err))) {
		tfs_log(LOG_ERR, "bad --redis URL '%s': %s", tfs_url_redact(url, shown,
			sizeof(shown)), err);
		goto out_redis;
	}
	if (pw[0])
		snprintf(tfs_redis.url.password, sizeof(tfs_redis.url.password), "%s", pw);
	explicit_bzero(pw, sizeof(pw));
	c = tfs_redis_connect(&tfs_redis.url, 2000, &rc, err, sizeof(err));
	if (!c) {
		tfs_log(LOG_ERR, "%s", err);
		rc = restart ? TFS_EXIT_REDIS : 1;
		goto out_redis;
	}
	redisFree(c);
	rc = 1;
	/* Before anything of the node is touched: two daemons with one node name would sweep
	 * each other's records. */
	if ((rc = tfs_lease_acquire())) {
		rc = restart && rc != -EBUSY ? TFS_EXIT_REDIS : 1;
		goto out_redis;
	}
	rc = 1;
	release_lease = !restart;

	snprintf(mntopts, sizeof(mntopts), "-odefault_permissions,fsname=tensorfs,subtype=tensorfs,"
		 "max_read=%d%s", 1 << 20, o->allow_other ? ",allow_other" : "");
	fuse_opt_add_arg(&args, mntopts);
	if (tfs_node_init())
		goto out_redis;
	se = fuse_session_new(&args, &tfs_ops, sizeof(tfs_ops), NULL);
	if (!se)
		goto out_nodes;
	dead = tfs_mnt_dead(cmd.mountpoint, restart);
	if (dead && tfs_mnt_beneath(se, cmd.mountpoint, &beneath_dev) == 0) {
		tfs_log(LOG_NOTICE, "%s: mounted beneath the mount of a daemon that died, which "
			"was then detached", cmd.mountpoint);
	} else if ((dead ? tfs_mnt_clear_dead(cmd.mountpoint) : (void)0),
		   fuse_session_mount(se, cmd.mountpoint)) {
		tfs_log(LOG_ERR, "cannot mount on %s", cmd.mountpoint);
		goto out_fuse;
	}
	if (o->io_uring && (rc = tfs_uring_setup(se, o->io_uring_depth))) {
		tfs_log(LOG_ERR, "io_uring: cannot take over the session's I/O: %s", strerror(-rc));
		rc = 1;
		goto out_unmount;
	}
	rc = 1;
	tfs_conn_close_thread();     /* the forked child makes its own connection */
	if (!cmd.foreground && !restart) {
		if (daemonize(&notify_fd))
			goto out_unmount;
	}
	if (!cmd.foreground && !o->log)
		tfs_log_to_syslog("tensorfs");
	/* The keeper forks before CUDA starts: it starts CUDA itself, in its own process. */
	if (tfs_start_keeper(argv, &(struct tfs_keeper_start){ .mountpoint = cmd.mountpoint,
			.foreground = cmd.foreground, .log_to_file = o->log != NULL,
			.restart_delay_max = o->restart_delay_max, .fuse_fd = fuse_session_fd(se),
			.notify_fd = notify_fd }, restart))
		goto out_unmount;
	/* Renewed from now on by a thread of its own: CUDA's start, pinning a preallocation
	 * and a keeper busy with either can each outlast the lease's lifetime. */
	if (tfs_lease_keep())
		goto out_unmount;
	/* CUDA (and so the backend) starts only now, in the process that will serve. */
	if (start_backend(o))
		goto out_unmount;
	if (check_devices(o))
		goto out_backend;
	/* Now that the keeper runs: its pid in the lease, and the lease still ours. */
	if (tfs_lease_check() == -EBUSY) {
		tfs_log(LOG_ERR, "lost the lease of node %s while starting", o->node);
		rc = 1;
		goto out_backend;
	}
	/* Only once the mount is there: a start that fails (a stale mountpoint, say) must not
	 * take the records of this node's last run with it. Nothing is served before the
	 * request loop starts. */
	rc = tfs_adopt(!restart);
	if (rc) {
		/* On a restart nothing adopted is freed (out_backend leaves it to the keeper). */
		tfs_log(LOG_ERR, "cannot %s this node's Redis records: %s",
			restart ? "adopt the tensors of" : "prepare", strerror(-rc));
		rc = restart && rc == -EIO ? TFS_EXIT_REDIS : 1;
		goto out_backend;
	}
	rc = 1;
	if (tfs_qusers_setup())
		goto out_backend;
	if (fuse_set_signal_handlers(se))
		goto out_backend;
	if (tfs_kcache_start(se, o->page_cache ? 0 : o->entry_timeout))
		goto out_signals;
	if (tfs_spawn_supervise())
		tfs_log(LOG_WARNING, "the private redis-server is not supervised");
	if (tfs_writer_start() || tfs_dircache_start())
		goto out_signals;
	if (tfs_queue_start())
		goto out_signals;
	if (tfs_net_start((o->net_timeout > 0 ? o->net_timeout : 15) * 1000, !o->net_staged,
			  o->net_threads))
		goto out_signals;
	/* Optional: without it, handles are opened by name as before. */
	tfs_handles_start(o->handle_socket, cmd.mountpoint, o->allow_other);
	__atomic_store_n(&tfs_queue.hsock, tfs_handles_path(), __ATOMIC_RELEASE);
	tfs_log(LOG_INFO, "mounted %s: node %s, backend %s, redis %s", cmd.mountpoint, o->node,
		tfs_mem.ops->name, tfs_url_redact(url, shown, sizeof(shown)));
	tfs_stats_start();
	if ((rc = tfs_notify_ready()))
		tfs_log(LOG_WARNING, "cannot tell systemd the mount is ready: %s", strerror(-rc));
	notify_parent(&notify_fd, 0);
	tfs_keeper_tell(TFS_KEEPER_READY);
	keep = tfs_keeper_present();

	if (cmd.singlethread) {
		rc = fuse_session_loop(se);
	} else {
		rc = tfs_loop_run(se, o->threads);
	}
	tfs_uring_stop();
	/* libfuse reports the signal that ended the loop: SIGINT/SIGTERM/SIGHUP are the
	 * clean way to stop a daemon, not a failure. */
	if (rc < 0)
		rc = -rc;
	rc = rc == 0 || rc == SIGINT || rc == SIGTERM || rc == SIGHUP ? 0 : 1;
	if (rc && keep) {
		/* Not an unmount nor a stop: a crash, which the keeper survives. */
		tfs_log(LOG_ERR, "the request loop failed");
		leave_to_keeper(rc);
	}
	tfs_keeper_tell(TFS_KEEPER_BYE);
	keep = 0;
	release_lease = 1;
	tfs_log(LOG_INFO, "unmounting %s", cmd.mountpoint);
	tfs_handles_stop();
	tfs_net_stop();
	tfs_queue_stop();
	tfs_ns_lock();
	tfs_tensor_shutdown();
	tfs_ns_unlock();
out_signals:
	if (keep)
		leave_to_keeper(rc);
	tfs_net_stop();
	tfs_dircache_stop();
	tfs_kcache_stop();
	tfs_ns_stats_log();
	tfs_writer_stop();       /* sends the shutdown's record deletes */
	tfs_conn_close_thread();
	/* After the writer sent the record deletes (the next daemon of this node must not see
	 * them arrive after its own writes), while SIGPIPE is still ignored. */
	if (release_lease)
		tfs_lease_release();
	fuse_remove_signal_handlers(se);
out_backend:
	if (keep)
		leave_to_keeper(rc);
	if (tfs_tensors.table.buckets) {
		tfs_ns_lock();
		tfs_tensor_shutdown();
		tfs_ns_unlock();
		tfs_conn_close_thread();
	}
	tfs_mem.ops->fini(tfs_mem.be);
out_unmount:
	if (keep)
		leave_to_keeper(rc);
	tfs_qusers_cleanup();
	fuse_session_unmount(se);
	if (beneath_dev) {
		/* libfuse unmounts where it mounted (the staging folder): ours is at the mount
		 * point, unless someone unmounted it already. */
		if (tfs_mnt_dev(cmd.mountpoint, NULL) == beneath_dev)
			umount2(cmd.mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW);
	}
out_fuse:
	fuse_session_destroy(se);
out_nodes:
	tfs_node_fini();
out_redis:
	if (keep)
		leave_to_keeper(rc);
	tfs_conn_close_thread();
	/* A start that failed lets the lease go (if it is still ours); a keeper's restart
	 * that fails leaves it to the next restart, which has its token. */
	if (release_lease)
		tfs_lease_release();
	tfs_stop_redis();
out_table:
	free(tfs_tensors.table.buckets);
	free(tfs_tensors.table.by_ino);
	tfs_tensors.table.buckets = tfs_tensors.table.by_ino = NULL;
out_args:
	notify_parent(&notify_fd, (char)rc);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	fuse_opt_free_args(&spelled);
	free(o->redis); free(o->redis_password_file); free(o->backend); free(o->node); free(o->prefix); free(o->queue); free(o->queue_users);
	free(o->max_bytes); free(o->memory); free(o->preallocate); free(o->queue_max_command); free(o->queue_max_batch); free(o->host_pack); free(o->log); free(o->devices);
	free(o->cluster_key); free(o->handle_socket);
	return rc;
}
