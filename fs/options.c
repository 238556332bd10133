/* The daemon's command line (options.h): the fuse_opt table, --help, and the checks that
 * turn what was given into the options the layers start with. */
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "tensors/quota.h"
#include "mem/keeper/keeper.h"
#include "mem/tiers.h"
#include "mem/tiers_backend.h"
#include "queue/queue.h"
#include "queue/users.h"
#include "log.h"
#include "fuse/ops.h"
#include "net/net.h"
#include "strutil.h"
#include "options.h"

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG };

#define OPT(t, p) { t, offsetof(struct tfs_opts, p), 1 }
/* fuse_opt applies every template that matches, in order, and "--name %s" matches
 * "--name=value" too (taking "=value"): "--name=%s" comes after it, so its value stays. */
#define LONG_OPT(name, field) OPT("--" name " %s", field), OPT("--" name "=%s", field), \
	OPT(name "=%s", field)
/* --max-a-b N, --max-a-b=N and -o max_a_b=N. */
#define LIMIT_OPT(dashed, under, field) LONG_OPT("max-" dashed, field), \
	OPT("max_" under "=%s", field)
static const struct fuse_opt opt_table[] = {
	LONG_OPT("redis", redis),
	/* --redis-password-file: spell_args (it begins with "--redis"). */
	OPT("redis_password_file=%s", redis_password_file),
	LONG_OPT("backend", backend),
	LONG_OPT("memory", memory),
	LONG_OPT("node", node),
	LONG_OPT("prefix", prefix),
	LONG_OPT("queue", queue),
	/* Not "--queue-users": fuse_opt takes any argument starting "--queue" for --queue. */
	LONG_OPT("user-queues", queue_users),
	OPT("user_queues=%s", queue_users),
	LONG_OPT("max-bytes", max_bytes),
	OPT("max_bytes=%s", max_bytes),
	LONG_OPT("preallocate", preallocate),
	OPT("queue_max_command=%s", queue_max_command),
	OPT("queue_max_batch=%s", queue_max_batch),
	OPT("host_pack=%s", host_pack),
	OPT("queue_max_forward=%d", queue_max_forward),
	LONG_OPT("log", log),
	LONG_OPT("cluster-key", cluster_key),
	OPT("net_timeout=%d", net_timeout), OPT("net_staged", net_staged),
	OPT("net_threads=%d", net_threads),
	OPT("devices=%s", devices),          /* --devices: spell_devices */
	OPT("host_devices=%d", host_devices),
	OPT("--device=%d", device), OPT("--device %d", device), OPT("device=%d", device),
	OPT("--threads=%d", threads), OPT("--threads %d", threads), OPT("threads=%d", threads),
	OPT("--restarts=%d", restarts), OPT("--restarts %d", restarts), OPT("restarts=%d", restarts),
	OPT("--restart-delay-max=%d", restart_delay_max),
	OPT("--restart-delay-max %d", restart_delay_max),
	OPT("restart_delay_max=%d", restart_delay_max),
	LONG_OPT("handle-socket", handle_socket),
	OPT("handle_socket=%s", handle_socket),
	OPT("--allow-other", allow_other),
	OPT("allow_other", allow_other),
	OPT("--page-cache", page_cache),
	OPT("page_cache", page_cache),
	OPT("entry_timeout=%lf", entry_timeout),
	OPT("--io-uring", io_uring),
	OPT("io_uring", io_uring),
	OPT("io_uring_depth=%d", io_uring_depth),
	LIMIT_OPT("holds", "holds", max_holds),
	LIMIT_OPT("user-holds", "user_holds", max_user_holds),
	LIMIT_OPT("path", "path", max_path),
	LIMIT_OPT("depth", "depth", max_depth),
	LIMIT_OPT("xattr-file", "xattr_file", max_xattr_file),
	LIMIT_OPT("xattr-user", "xattr_user", max_xattr_user),
	LIMIT_OPT("user-tensors", "user_tensors", max_user_tensors),
	FUSE_OPT_KEY("--foreground", KEY_FOREGROUND),
	FUSE_OPT_KEY("--debug", KEY_DEBUG),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s [options] [SOURCE] MOUNTPOINT\n\n"
	       "Every option works as --name VALUE, --name=VALUE and -o name=VALUE (fstab).\n"
	       "    --redis URL         redis://[[user]:password@]host[:port][/db] or unix:///path;\n"
	       "                        default: start a private redis-server on a unix socket\n"
	       "    --redis-password-file FILE\n"
	       "                        the Redis password: FILE's first line (a file of the\n"
	       "                        daemon's user, mode 0600); or TENSORFS_REDIS_PASSWORD.\n"
	       "                        The URL then names the user only: redis://user:@host.\n"
	       "                        Without --redis: the private redis-server's password\n"
	       "    --backend NAME      cuda, host or auto (default: cuda when a GPU is present)\n"
	       "    --memory MODE       cuda memory: ipc (cudaMalloc blocks, legacy IPC handles;\n"
	       "                        default) or vmm (a VMM allocation per tensor, handed out\n"
	       "                        as a file descriptor: docs/vmm.md)\n"
	       "    --device N          default GPU ordinal for new tensors (default: the\n"
	       "                        lowest GPU of --devices, else 0)\n"
	       "    --devices LIST      tiers tensors may live on: GPU ordinals and cpu, host\n"
	       "                        memory: cpu,0,2,3 (-o devices=cpu:0:2:3; default: all;\n"
	       "                        cpu on the cuda backend or with host_devices)\n"
	       "    -o host_devices=N   the host backend stands N devices of host memory in for\n"
	       "                        GPUs, beside cpu (tests; docs/tiers.md)\n"
	       "    --node NAME         this node's name in Redis records (default: hostname)\n"
	       "    --prefix P          Redis key prefix (default tensorfs)\n"
	       "    --queue KEY         lifecycle queue list (default tensor_lifecycle)\n"
	       "    --user-queues LIST  users (names or uids, comma-separated) given a queue\n"
	       "                        of their own, served with their permissions\n"
	       "                        (docs/security.md)\n"
	       "    --max-bytes SIZE    cap on memory for tensors, per device: 512M, 64G, ...,\n"
	       "                        or per tier: cpu:64G,0:40G (-o max_bytes=cpu:64G/0:40G)\n"
	       "                        (default: all of it)\n"
	       "    --preallocate LIST  reserve tiers' memory at start: cpu:64G,0:40G (tiers.md)\n"
	       "    --log FILE          log here instead of syslog when in the background\n"
	       "    --cluster-key FILE  the cluster's secret (mode 600): serve this node's\n"
	       "                        tensors to daemons with it, read and write theirs\n"
	       "                        over UCX (docs/net.md); -o net_timeout=S (15),\n"
	       "                        -o net_threads=N UCX workers, a thread each (1-16;\n"
	       "                        default: half the CPUs, at most 4)\n"
	       "    --allow-other       let other users use the mount (permissions still apply)\n"
	       "    --handle-socket PATH the socket that hands out descriptors of tensors' memory\n"
	       "                        (docs/holders.md; default /run/tensorfs/handles.<hash>.sock)\n"
	       "    --page-cache        read through the kernel page cache, dropped at each open\n"
	       "                        (for benchmarks: misses writes made through a handle\n"
	       "                        while the file is open; the default is direct I/O)\n"
	       "    -f, --foreground    stay in the foreground, log to stderr\n"
	       "    -d, --debug         foreground with FUSE and daemon debug output\n"
	       "    -o entry_timeout=S  seconds the kernel keeps a name found (default 1; changes\n"
	       "                        made elsewhere drop it at once: docs/files.md; 0: never)\n"
	       "    -o io_uring         serve requests over io_uring where the kernel allows it\n"
	       "                        (Linux 6.14+, /sys/module/fuse/parameters/enable_uring\n"
	       "                        Y); otherwise over /dev/fuse as without it\n"
	       "    -o io_uring_depth=N entries (1 MiB buffers) per CPU's queue (default 2)\n"
	       "    -o queue_max_command=SIZE  a queue command larger than this is refused\n"
	       "                        (EMSGSIZE) unread (default 64k, 256 to 64M)\n"
	       "    -o queue_max_batch=SIZE    bytes of commands taken from the queue at once\n"
	       "                        (default 1M, at least queue_max_command)\n"
	       "    -o host_pack=SIZE   host backend: tensors up to SIZE (256K at most, default\n"
	       "                        64K, 0: none) share 1 MiB objects per owner, mode, directory\n"
	       "    -o queue_max_forward=N     commands waiting on another node's list past\n"
	       "                        which a forward is refused (EAGAIN; default 10000)\n"
	       "  Bounds on what one local user can make the daemon hold (docs/tensorfs.8):\n"
	       "    -o max_holds=N      queue holds of one tensor (default 1024; EMLINK)\n"
	       "    -o max_user_holds=N holds of one per-user sender, all tensors (default\n"
	       "                        16384; EDQUOT)\n"
	       "    -o max_path=N       bytes of a path under the mount (default 8192;\n"
	       "                        ENAMETOOLONG)\n"
	       "    -o max_depth=N      components of a path under the mount (default 256;\n"
	       "                        ENAMETOOLONG)\n"
	       "    -o max_xattr_file=SIZE  user.* attribute names and values of one file or\n"
	       "                        directory (default 256K; ENOSPC)\n"
	       "    -o max_xattr_user=SIZE  the same of all of one owner's (default 16M; EDQUOT)\n"
	       "    -o max_user_tensors=N   tensors of one owner on this node (default 65536;\n"
	       "                        EDQUOT)\n"
	       "    --restart-delay-max S  the longest the memory keeper waits before it starts\n"
	       "                        a daemon that died again (default 30 s; it waits 0,\n"
	       "                        0.1, 0.2, 0.4 ... s after consecutive deaths)\n"
	       "    --threads N         FUSE worker threads, each with a 1 MiB request buffer\n"
	       "                        (default 32)\n"
	       "    -s                  single-threaded\n"
	       "    -h, --help          this help;  -V, --version  the version\n", prog);
}

/* The words that are not options: MOUNTPOINT, or SOURCE MOUNTPOINT as mount.fuse3 passes
 * them for an /etc/fstab line (the source is a name only, as for tmpfs). */
static const char *nonopts[2];
static int nnonopts;

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct tfs_opts *o = data;

	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (nnonopts == 2) {
			fprintf(stderr, "tensorfs: too many arguments: '%s' (usage: tensorfs [options] "
				"[SOURCE] MOUNTPOINT)\n", arg);
			return -1;
		}
		nonopts[nnonopts++] = arg;
		return 0;
	case KEY_HELP:
		o->show_help = 1;
		return 0;
	case KEY_VERSION:
		o->show_version = 1;
		return 0;
	case KEY_FOREGROUND:
		return fuse_opt_add_arg(out, "-f") ? -1 : 0;
	case KEY_DEBUG:
		o->debug = 1;
		return fuse_opt_add_arg(out, "-d") ? -1 : 0;
	}
	if (strcmp(arg, "-d") == 0 || strcmp(arg, "debug") == 0)
		o->debug = 1;
	return 1;
}

/* "512M" -> bytes (binary units). 0 or -EINVAL. */
static int parse_size(const char *s, uint64_t *out)
{
	return tfs_tiers_parse_size(s, strlen(s), out);
}

/* The bounds (struct tfs_limits): each given one parsed, the rest at their defaults. A
 * bound of 0 would refuse everything, so the least is 1. 0 or -EINVAL (logged). */
static int parse_limits(const struct tfs_opts *o)
{
	const struct {
		const char *name, *text;
		uint64_t *v, def, max;
	} lim[] = {
		{ "max_holds", o->max_holds, &tfs_limits.holds, 1024, INT32_MAX },
		{ "max_user_holds", o->max_user_holds, &tfs_limits.user_holds, 16384, INT64_MAX },
		{ "max_path", o->max_path, &tfs_limits.path, 8192, TFS_PATH_MAX - 1 },
		{ "max_depth", o->max_depth, &tfs_limits.depth, 256, TFS_PATH_MAX / 2 },
		{ "max_xattr_file", o->max_xattr_file, &tfs_limits.xattr_file, 256 << 10, INT64_MAX },
		{ "max_xattr_user", o->max_xattr_user, &tfs_limits.xattr_user, 16 << 20, INT64_MAX },
		{ "max_user_tensors", o->max_user_tensors, &tfs_limits.user_tensors, 65536,
		  INT64_MAX },
	};

	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		*lim[i].v = lim[i].def;
		if (!lim[i].text)
			continue;
		if (parse_size(lim[i].text, lim[i].v) || *lim[i].v < 1 || *lim[i].v > lim[i].max) {
			tfs_log(LOG_ERR, "-o %s=%s: not a number from 1 to %llu", lim[i].name,
				lim[i].text, (unsigned long long)lim[i].max);
			return -EINVAL;
		}
	}
	return 0;
}

/* fuse_opt applies every template an argument matches, and some long options begin with
 * another's name: "--devices" with "--device" (a template "--device %d"),
 * "--redis-password-file" with "--redis". So these are spelled -o name=... before parsing:
 * --devices' commas as colons, since commas separate -o options (fstab writes
 * devices=0:2:3 itself); a file name's commas and backslashes escaped, as fuse_opt reads
 * them. 0, or -1 without memory. */
int tfs_opts_spell(int argc, char *argv[], struct fuse_args *out)
{
	static const struct { const char *name, *key; } spelled[] = {
		{ "--devices", "devices" },
		{ "--redis-password-file", "redis_password_file" },
	};

	for (int i = 0; i < argc; i++) {
		const char *v = NULL, *key = NULL;
		char *o, *d;
		int rc;

		for (size_t k = 0; k < sizeof(spelled) / sizeof(spelled[0]) && !v; k++) {
			size_t n = strlen(spelled[k].name);

			key = spelled[k].key;
			if (strcmp(argv[i], spelled[k].name) == 0 && i + 1 < argc)
				v = argv[++i];
			else if (strncmp(argv[i], spelled[k].name, n) == 0 && argv[i][n] == '=')
				v = argv[i] + n + 1;
		}
		if (!v) {
			if (fuse_opt_add_arg(out, argv[i]))
				return -1;
			continue;
		}
		o = malloc(strlen(key) + 2 * strlen(v) + 4);
		if (!o)
			return -1;
		d = o + sprintf(o, "-o%s=", key);
		for (; *v; v++) {
			if (strcmp(key, "devices") == 0)
				*d++ = *v == ',' ? ':' : *v;
			else if (*v == ',' || *v == '\\')
				d += sprintf(d, "\\%c", *v);
			else
				*d++ = *v;
		}
		*d = '\0';
		rc = fuse_opt_add_arg(out, o);
		free(o);
		if (rc)
			return -1;
	}
	return 0;
}

/* The log file, created 0600: it may quote what users do. An existing one keeps its
 * mode, with a warning when others may read it. 0 or -1. */
static int open_log(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0 || fstat(fd, &st) || dup2(fd, 2) < 0) {
		fprintf(stderr, "tensorfs: cannot open log file %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (st.st_mode & 077)
		tfs_log(LOG_WARNING, "the log file %s is open to other users (mode %04o)", path,
			(unsigned)(st.st_mode & 07777));
	return 0;
}

/* Start-up step: the command line (as spell_args spelled it) into the options, the FUSE
 * arguments and cmd, and the log opened. 0 to go on, 1 when --help or --version answered,
 * -1 after saying why. */
int tfs_opts_parse(struct fuse_args *spelled, struct fuse_args *args,
		   struct fuse_cmdline_opts *cmd, const char *prog)
{
	struct tfs_opts *o = &tfs_d.o;

	o->device = INT_MIN;     /* not given */
	o->threads = -1;         /* not given */
	o->restarts = -1;        /* not given */
	o->restart_delay_max = KEEPER_BACKOFF_MAX_S;
	o->entry_timeout = 1;
	o->io_uring_depth = -1;  /* not given */
	o->queue_max_forward = -1;
	o->net_threads = INT_MIN;  /* not given: -1 is a value, refused */
	args->argc = spelled->argc;
	args->argv = spelled->argv;
	if (fuse_opt_parse(args, o, opt_table, opt_proc) == -1)
		return -1;
	if (o->show_help) {
		usage(prog);
		printf("\nFUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		return 1;
	}
	if (o->show_version) {
		printf("tensorfs %d.%d (FUSE %s)\n", TFS_VERSION_MAJOR, TFS_VERSION_MINOR,
		       fuse_pkgversion());
		return 1;
	}
	if (nnonopts && fuse_opt_add_arg(args, nonopts[nnonopts - 1]))
		return -1;
	if (fuse_parse_cmdline(args, cmd) != 0)
		return -1;
	if (!cmd->mountpoint) {
		fprintf(stderr, "tensorfs: no mount point given (try --help)\n");
		return -1;
	}
	if (o->debug || cmd->debug)
		tfs_log_set_level(LOG_DEBUG);
	if (o->log && open_log(o->log))
		return -1;
	setvbuf(stderr, NULL, _IOLBF, 0);
	return 0;
}

/* Start-up step: the options given, checked and completed with their defaults, and handed
 * to the layers that own them (schema, queue, memory, FUSE). Nothing is started yet. 0, or
 * -1 after logging why. restarted: started again by the keeper (it said so once already). */
int tfs_opts_check(struct tfs_opts *o, int restarted)
{
	char hostname[256];

	if (!o->node) {
		gethostname(hostname, sizeof(hostname) - 1);
		hostname[sizeof(hostname) - 1] = '\0';
		o->node = strdup(hostname);
	}
	if (!o->prefix)
		o->prefix = strdup("tensorfs");
	if (!o->queue)
		o->queue = strdup("tensor_lifecycle");
	if (!tfs_word_ok(o->node, TFS_NODE_MAX) || !tfs_word_ok(o->prefix, 128) ||
	    !tfs_word_ok(o->queue, 256)) {
		tfs_log(LOG_ERR, "--node, --prefix and --queue take a word of printable characters "
			"without ':', '{', '}' or '*' (node under %d bytes)", TFS_NODE_MAX);
		return -1;
	}
	tfs_schema = (struct tfs_schema){ .prefix = o->prefix, .queue = o->queue,
					  .node = o->node };
	if (o->queue_users && !o->redis) {
		tfs_log(LOG_ERR, "--user-queues needs --redis: the private redis-server's socket "
			"is the daemon's alone");
		return -1;
	}
	if (tfs_qusers_parse(o->queue_users))
		return -1;
	if (o->max_bytes && tfs_tiers_parse_sizes(o->max_bytes, &tfs_mem.caps)) {
		tfs_log(LOG_ERR, "--max-bytes '%s' is not a size like 512M or 64G, nor a list "
			"of tier:size like cpu:1G,0:512M", o->max_bytes);
		return -1;
	}
	tfs_mem.max_bytes = tfs_mem.caps.all;
	if (o->host_devices < 0 || o->host_devices > TFS_HOST_DEVICES_MAX) {
		tfs_log(LOG_ERR, "host_devices must be between 1 and %d", TFS_HOST_DEVICES_MAX);
		return -1;
	}
	tfs_mem.host_devices = o->host_devices;
	if (parse_limits(o))
		return -1;
	tfs_mem.host_pack = 64u << 10;
	if (o->host_pack && (parse_size(o->host_pack, &tfs_mem.host_pack) ||
			     tfs_mem.host_pack > (256u << 10))) {
		tfs_log(LOG_ERR, "host_pack takes a size from 0 to 256K");
		return -1;
	}
	if ((o->queue_max_command && parse_size(o->queue_max_command, &tfs_queue.max_cmd)) ||
	    tfs_queue.max_cmd < 256 || tfs_queue.max_cmd > (64u << 20)) {
		tfs_log(LOG_ERR, "queue_max_command takes a size from 256 to 64M");
		return -1;
	}
	if (o->queue_max_batch && parse_size(o->queue_max_batch, &tfs_queue.max_batch)) {
		tfs_log(LOG_ERR, "queue_max_batch '%s' is not a size like 1M", o->queue_max_batch);
		return -1;
	}
	/* The batch takes one command at least, so a smaller bound would not bound it. */
	if (tfs_queue.max_batch < tfs_queue.max_cmd || tfs_queue.max_batch > (1ull << 30)) {
		tfs_log(LOG_ERR, "queue_max_batch takes a size from queue_max_command to 1G");
		return -1;
	}
	if (o->queue_max_forward == -1)
		o->queue_max_forward = 10000;
	if (o->queue_max_forward < 1) {
		tfs_log(LOG_ERR, "queue_max_forward must be at least 1");
		return -1;
	}
	tfs_queue.max_forward = o->queue_max_forward;
	if (o->devices && tfs_tiers_parse_list(o->devices, &tfs_mem.devmask,
						&tfs_mem.cpu_served)) {
		tfs_log(LOG_ERR, "--devices '%s' is not a list of GPU ordinals like 0,2,3 or 0:2:3",
			o->devices);
		return -1;
	}
	/* Not given: the lowest GPU --devices names (0 whenever it is there), so that
	 * "--devices 1" alone serves. */
	o->device_given = o->device != INT_MIN;
	if (!o->device_given)
		o->device = o->devices && tfs_mem.devmask ? __builtin_ctzll(tfs_mem.devmask) : 0;
	if (o->device < 0) {
		tfs_log(LOG_ERR, "--device must be >= 0");
		return -1;
	}
	/* Enough workers that reads waiting on written marks, or creates waiting on Redis,
	 * leave others free to serve; each pins a 1 MiB request buffer on cuda. */
	if (o->threads == -1)
		o->threads = 32;
	if (o->restarts != -1 && !restarted)
		tfs_log(LOG_NOTICE, "--restarts is obsolete and ignored: the memory keeper starts "
			"a daemon that died again for as long as it lives, after a back-off of at "
			"most --restart-delay-max seconds");
	if (o->restart_delay_max < 1 || o->restart_delay_max > KEEPER_BACKOFF_LIMIT_S) {
		tfs_log(LOG_ERR, "--restart-delay-max must be between 1 and %d seconds",
			KEEPER_BACKOFF_LIMIT_S);
		return -1;
	}
	/* Half the CPUs, up to 4: a network thread each copies at one core's memcpy rate,
	 * and the FUSE workers and the other side's threads need CPUs too. */
	if (o->net_threads == INT_MIN) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		o->net_threads = cpus >= 8 ? 4 : cpus >= 4 ? (int)cpus / 2 : 1;
	}
	if (o->net_threads < 1 || o->net_threads > TFS_NET_THREADS_MAX) {
		tfs_log(LOG_ERR, "net_threads must be between 1 and %d", TFS_NET_THREADS_MAX);
		return -1;
	}
	if (o->io_uring_depth == -1)
		o->io_uring_depth = 2;
	if (o->io_uring_depth < 1 || o->io_uring_depth > 8) {
		tfs_log(LOG_ERR, "io_uring_depth must be between 1 and 8");
		return -1;
	}
	if (o->threads < 1 || o->threads > 1024) {
		tfs_log(LOG_ERR, "--threads must be between 1 and 1024");
		return -1;
	}
	tfs_fuse.threads = o->threads;
	tfs_fuse.page_cache = o->page_cache;
	tfs_mem.device = o->device;
	tfs_mem.ops = tfs_backend_find(o->backend);
	if (!tfs_mem.ops) {
		tfs_log(LOG_ERR, "unknown or unavailable backend '%s' (built with: host%s)",
			o->backend, tfs_backend_find("cuda") ? ", cuda" : "");
		return -1;
	}
	if (o->memory && strcmp(o->memory, "ipc")) {
		if (strcmp(o->memory, "vmm")) {
			tfs_log(LOG_ERR, "--memory must be ipc or vmm, not '%s'", o->memory);
			return -1;
		}
		if (strcmp(tfs_mem.ops->name, "cuda")) {
			tfs_log(LOG_ERR, "--memory vmm needs the cuda backend");
			return -1;
		}
		tfs_mem.vmm = 1;
#ifdef TFS_HAVE_CUDA
		tfs_cuda_set_vmm(1);
#endif
	}
	if (!o->backend && strcmp(tfs_mem.ops->name, "host") == 0)
		tfs_log(LOG_NOTICE, "no CUDA device: using the host backend (POSIX shared memory)");
	/* The host tier (docs/tiers.md): on a device backend by default, beside it; on the
	 * host backend, whose device 0 is host memory already, beside stand-in devices. */
	if (o->host_devices && strcmp(tfs_mem.ops->name, "host"))
		tfs_log(LOG_NOTICE, "host_devices: ignored, the %s backend has devices of its own",
			tfs_mem.ops->name);
	if (!o->devices)
		tfs_mem.cpu_served = strcmp(tfs_mem.ops->name, "host") ? 1 : o->host_devices > 0;
	if (tfs_mem.cpu_served && strcmp(tfs_mem.ops->name, "host"))
		tfs_mem.ops = tfs_tiers_wrap(tfs_mem.ops);
	if (o->preallocate && tfs_prealloc_option(o->preallocate))
		return -1;
	if (o->entry_timeout < 0) {
		tfs_log(LOG_ERR, "entry_timeout must be >= 0");
		return -1;
	}
	return 0;
}