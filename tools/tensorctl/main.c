/* tensorctl: the command-line face of tensorfs. Dispatch, help and shared helpers. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ctl.h"
#include "dtype.h"
#include "tier.h"
#include "typed.h"

const char *ctl_cmdname = "";
volatile sig_atomic_t ctl_interrupted;
static char errbuf[1024];
static int errset;
static const struct ctl_cmd *current;

static const struct ctl_cmd cmds[] = {
	{ "create", cmd_create,
	  "create NAME --dtype DTYPE --shape DIMS [--device N|cpu]\n"
	  "Makes a tensor NAME of DTYPE (f32, bf16, int8, ...) and DIMS (2,3,4 or [2,3,4]),\n"
	  "zero-filled, on GPU N or in host memory, cpu (default: the directory's or the\n"
	  "mount's default).\n" },
	{ "mv", cmd_mv,
	  "mv [-q] [-j N] --device N|cpu PATH...\n"
	  "Moves each tensor PATH, or every tensor under the directory PATH, to GPU N or to\n"
	  "host memory (cpu: sleep; N: wake), several at once, all or none: when one move\n"
	  "fails those made go back. A wake checks the checksum taken at sleep (docs/tiers.md).\n"
	  "-j N: moves at once (default 8). -q: no progress bar (a terminal, 16 MiB or more).\n" },
	{ "ls", cmd_ls,
	  "ls [-l] [PATH...]\n"
	  "Lists tensors and directories. -l: dtype, shape, bytes, device, refcount, node,\n"
	  "name, like ls -l for tensors. Directories end with '/'.\n" },
	{ "info", cmd_info,
	  "info [--json] NAME...\n"
	  "All metadata of a tensor: dtype, shape, bytes, device, node, backend, refcount,\n"
	  "IPC handle and offset, mode, owner, times and the user's own attributes.\n"
	  "--json: the user.tensor.meta object, one line per tensor, for scripts.\n" },
	{ "rm", cmd_rm,
	  "rm [-r] [-f] NAME...\n"
	  "Removes tensors (their memory is freed when the last holder lets go).\n"
	  "-r: directories and everything under them. -f: no error for missing names.\n" },
	{ "df", cmd_df,
	  "df [--json] [PATH]\n"
	  "Device memory of the mount holding PATH (default: $TENSORFS_MOUNT or .):\n"
	  "total, used, free, the number of tensors, and per device its total, used and\n"
	  "free memory (as the daemon reports it), tensors and their bytes.\n" },
	{ "stat", cmd_df, "stat [--json] [PATH]\nThe same as df.\n" },
	{ "load", cmd_load,
	  "load [-q] [--merge] [--direct[=auto]|--no-direct] [--format raw|npy|safetensors] [--dtype DT --shape DIMS] [--device N] [-j N] FILE|DIR DEST\n"
	  "Copies FILE into a new tensor DEST (.npy: dtype and shape from its header; raw:\n"
	  "--dtype (default u8) and --shape (default 1-D)). A .safetensors file becomes the\n"
	  "directory DEST with one tensor per entry; its __metadata__ is kept as the\n"
	  "directory's user.safetensors.metadata attribute. The format comes from --format,\n"
	  "else the file's first bytes. DEST must not exist. On failure nothing is left.\n"
	  "A Hugging Face model directory DIR: every shard its model.safetensors.index.json\n"
	  "names (else every *.safetensors) into the one directory DEST, a tensor per key,\n"
	  "and its *.json, *.model, *.txt, *.jinja files beside them as u8 tensors of their\n"
	  "bytes (cat DEST/config.json works). A key in two shards or named like one of\n"
	  "those files is refused before anything is made.\n"
	  "FILE|DIR on a tensorfs mount (another node's tensors): copied as cp -r does.\n"
	  "--merge: DEST may be an existing directory; none of the names may exist in it,\n"
	  "and a failure removes only what this load made.\n"
	  "-j, --threads N: copy threads (default min(8, CPUs)).\n"
	  "--direct, --no-direct: read FILE with O_DIRECT (where its file system allows)\n"
	  "or through the page cache (the default); --direct=auto: O_DIRECT when FILE is\n"
	  "mostly not cached.\n"
	  "TFS_LOAD_PROFILE=1 prints the time of each stage to stderr.\n"
	  "-q: no progress bar (it shows only on a terminal, for 16 MiB or more).\n" },
	{ "save", cmd_save,
	  "save [-q] [--format raw|npy|safetensors|dir] [-f] [-j N] NAME FILE|DIR\n"
	  "Writes tensor NAME to FILE: raw bytes, .npy, or (NAME a directory) a .safetensors\n"
	  "file of every tensor under it. The format comes from --format, else FILE's\n"
	  "extension (.npy, .safetensors), else raw. FILE must not exist unless -f.\n"
	  "A directory loaded from a model directory (it holds config.json or\n"
	  "model.safetensors.index.json) saves as one (--format dir): the small files back\n"
	  "as files, the tensors into shards as its index assigns them, with a new index\n"
	  "(metadata.total_size updated), else into one model.safetensors: a directory\n"
	  "transformers' from_pretrained(DIR) reads. DIR must not exist unless -f.\n"
	  "-j N: copy threads (default min(32, 2 x CPUs) into a local file system, else min(8, CPUs)).\n" },
	{ "cp", cmd_cp,
	  "cp [-r] [-q] [-j N] SRC DEST\n"
	  "Copies tensor SRC (-r: a directory and everything under it) into new tensors DEST\n"
	  "on DEST's mount, same dtype and shape. SRC may be another node's: its daemon sends\n"
	  "the bytes over UCX (both daemons need the same --cluster-key), so a node takes a\n"
	  "replica of another's model from its memory. DEST must not exist. All or nothing:\n"
	  "a failure (the other node gone, a timeout, an interrupt) removes what was made.\n"
	  "-j N: copy threads, each keeping one request in flight (default 8).\n"
	  "-q: no progress bar (it shows only on a terminal, for 16 MiB or more).\n" },
	{ "top", cmd_top,
	  "top [--json] [--interval S] [--count N] [PATH]\n"
	  "Live figures of the mount holding PATH, redrawn every S seconds (default 1) on a\n"
	  "terminal until Ctrl-C: tensors, memory used, bytes per device and per owner,\n"
	  "holders, FUSE requests, reads and writes per second, queue commands per second.\n"
	  "--json: one object for scripts, rates measured over S (0: counters only).\n"
	  "--count N: stop after N screens. Not a terminal: a block per interval.\n" },
	{ "mount", cmd_mount,
	  "mount MOUNTPOINT [TENSORFS-OPTIONS...]\n"
	  "Runs the tensorfs daemon (next to tensorctl, else from PATH) on MOUNTPOINT;\n"
	  "options go to it unchanged (--redis URL, --device N, --max-bytes SIZE, ...).\n" },
	{ "umount", cmd_umount,
	  "umount MOUNTPOINT\nUnmounts a tensorfs mount (fusermount3 -u).\n" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

int err(int rc, const char *fmt, ...)
{
	va_list ap;

	if (rc >= 0)
		rc = -EINVAL;
	if (!errset) {
		int n = snprintf(errbuf, sizeof(errbuf), "tensorctl: %s: ", ctl_cmdname);

		va_start(ap, fmt);
		vsnprintf(errbuf + n, sizeof(errbuf) - (size_t)n, fmt, ap);
		va_end(ap);
		errset = 1;
	}
	return rc;
}

static void print_usage(FILE *f, const struct ctl_cmd *c, int full)
{
	const char *nl = strchr(c->usage, '\n');

	fprintf(f, "usage: tensorctl %.*s\n", (int)(nl - c->usage), c->usage);
	if (full)
		fputs(nl + 1, f);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!errset) {
		n = snprintf(errbuf, sizeof(errbuf), "tensorctl: %s: ", ctl_cmdname);
		va_start(ap, fmt);
		n += vsnprintf(errbuf + n, sizeof(errbuf) - (size_t)n, fmt, ap);
		va_end(ap);
		if (current && (size_t)n < sizeof(errbuf)) {
			const char *nl = strchr(current->usage, '\n');

			snprintf(errbuf + n, sizeof(errbuf) - (size_t)n, "\nusage: tensorctl %.*s",
				 (int)(nl - current->usage), current->usage);
		}
		errset = 1;
	}
	return -EINVAL;
}

int want_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_usage(stdout, current, 1);
			return 1;
		}
	}
	return 0;
}

void ctl_path(const char *name, char *out, size_t size)
{
	const char *m = getenv("TENSORFS_MOUNT");

	if (name[0] != '/' && strncmp(name, "./", 2) && strncmp(name, "../", 3) && m && *m)
		snprintf(out, size, "%s/%s", m, name);
	else
		snprintf(out, size, "%s", name);
}

static void unescape(char *s)   /* mountinfo writes ' ' as \040 */
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The mount holding the absolute path abs (the longest mount point that is a prefix of
 * it) from /proc/self/mountinfo: 1 when it is a tensorfs mount, 0 when not, negative errno
 * when mountinfo cannot be read. exact: abs must be the mount point itself. */
static int mount_lookup(const char *abs, int exact, char *mnt, size_t size)
{
	char line[8192];
	size_t bestlen = 0;
	int found = 0, any = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mp[4096], fstype[256], *dash = strstr(line, " - ");
		size_t n;

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
		    sscanf(dash + 3, "%255s", fstype) != 1)
			continue;
		unescape(mp);
		n = strlen(mp);
		if (exact ? strcmp(abs, mp) != 0
			  : (strncmp(abs, mp, n) || (abs[n] && abs[n] != '/' && n > 1)))
			continue;
		if (n >= bestlen) {
			bestlen = n;
			any = 1;
			found = !strcmp(fstype, "fuse.tensorfs");
			if (mnt)
				snprintf(mnt, size, "%s", mp);
		}
	}
	fclose(f);
	return any && found;
}

int on_tensorfs(const char *path, char *mnt, size_t size)
{
	char real[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	int rc;

	if (!realpath(path, real)) {
		char *slash;

		if (errno == ENOTCONN)
			return err(-ENOTCONN, "%s: the mount's daemon is gone (tensorctl umount it): %s",
				   path, strerror(ENOTCONN));
		snprintf(tmp, sizeof(tmp), "%s", path);
		slash = strrchr(tmp, '/');
		if (slash == tmp)
			slash[1] = 0;
		else if (slash)
			*slash = 0;
		else
			snprintf(tmp, sizeof(tmp), ".");
		if (!realpath(tmp, real))
			return err(-errno, "%s: %s", tmp, strerror(errno));
	}
	rc = mount_lookup(real, 0, tmp, sizeof(tmp));
	if (rc < 0)
		return err(rc, "/proc/self/mountinfo: %s", strerror(-rc));
	if (!rc)
		return err(-ENOTCONN, "%s: not on a tensorfs mount (is it mounted?): %s", path,
			   strerror(ENOTCONN));
	if (stat(tmp, &st) && errno == ENOTCONN)
		return err(-ENOTCONN, "%s: the mount's daemon is gone (tensorctl umount %s): %s",
			   path, tmp, strerror(ENOTCONN));
	if (mnt)
		snprintf(mnt, size, "%s", tmp);
	return 0;
}

int is_tensorfs_mountpoint(const char *path)
{
	char abs[PATH_MAX * 2], cwd[PATH_MAX];
	size_t n;
	int rc;

	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
	else
		return err(-errno, "getcwd: %s", strerror(errno));
	n = strlen(abs);
	while (n > 1 && abs[n - 1] == '/')
		abs[--n] = 0;
	rc = mount_lookup(abs, 1, NULL, 0);
	if (rc < 0)
		return err(rc, "/proc/self/mountinfo: %s", strerror(-rc));
	if (!rc)
		return err(-ENOTCONN, "%s: not a tensorfs mount point: %s", path,
			   strerror(ENOTCONN));
	return 0;
}

int read_meta(const char *path, struct tfs_meta *m, char **json)
{
	char buf[4096];
	ssize_t n = getxattr(path, "user.tensor.meta", buf, sizeof(buf) - 1);
	int rc;

	if (json)
		*json = NULL;
	if (n < 0)
		return err(-errno, "%s: %s", path, strerror(errno));
	buf[n] = 0;
	rc = tfs_meta_from_json(buf, (size_t)n, m);
	if (rc)
		return err(rc, "%s: malformed user.tensor.meta: %s", path, strerror(-rc));
	if (json && !(*json = strdup(buf)))
		return err(-ENOMEM, "%s", strerror(ENOMEM));
	return 0;
}

int make_tensor(const char *path, tfs_dtype dt, const struct tfs_shape *sh, int device)
{
	char what[1200], dev[16];
	int fd, rc = 0;

	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0)
		return err(-errno, "%s: %s", path, strerror(errno));
	close(fd);
	if (device >= 0 || device == TFS_DEVICE_CPU) {
		tfs_tier_name(device, dev, sizeof(dev));
		if (setxattr(path, "user.tensor.device", dev, strlen(dev), 0)) {
			rc = err(-errno, "%s: device %s: %s", path, dev, strerror(errno));
			goto fail;
		}
	}
	if ((rc = tfs_set_type(-1, path, dt, sh, NULL, what, sizeof(what)))) {
		rc = err(rc, "%s: %s: %s", path, what, strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	unlink(path);
	return rc;
}

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st; (void)ftw;
	if (type == FTW_DP || type == FTW_D)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

void remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return;
	if (S_ISDIR(st.st_mode))
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		unlink(path);
}

void human_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, size, "%.1f %s", v, u[i]);
}

static void on_signal(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

static void main_help(FILE *f)
{
	fputs("usage: tensorctl COMMAND [ARGS...]   (tensorctl COMMAND --help for more)\n"
	      "Tensors in a tensorfs mount, from the shell. A relative NAME is taken under\n"
	      "$TENSORFS_MOUNT when that is set. Exit status: 0 on success, 1 otherwise,\n"
	      "with one message on stderr. TENSORCTL_COPY=auto|direct|fuse picks how bytes\n"
	      "move (libtensorfs direct copy, or the FUSE file); see tensorctl(1).\n"
	      "\ncommands:\n", f);
	for (size_t i = 0; i < NCMDS; i++) {
		const char *nl = strchr(cmds[i].usage, '\n');

		fprintf(f, "  %.*s\n", (int)(nl - cmds[i].usage), cmds[i].usage);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int rc;

	if (argc < 2) {
		main_help(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		main_help(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tensorctl %d.%d\n", TFS_VERSION_MAJOR, TFS_VERSION_MINOR);
		return 0;
	}
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			current = &cmds[i];
	if (!current) {
		fprintf(stderr, "tensorctl: unknown command '%s' (tensorctl --help lists them)\n",
			argv[1]);
		return 2;
	}
	ctl_cmdname = current->name;
	if (want_help(argc - 1, argv + 1))
		return 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = current->run(argc - 1, argv + 1);
	if (rc < 0) {
		if (!errset)
			err(rc, "%s", strerror(-rc));
		fprintf(stderr, "%s\n", errbuf);
		return 1;
	}
	return 0;
}
