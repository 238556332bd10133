/* tensorctl create, ls, info, rm, df/stat, mount, umount. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ctl.h"
#include "dtype.h"
#include "secret.h"
#include "tier.h"

int parse_device(const char *s, int *out)
{
	if (tfs_tier_parse(s, strlen(s), out))
		return usage_error("--device '%s': not cpu nor a GPU ordinal", s);
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dtype", required_argument, NULL, 't' }, { "shape", required_argument, NULL, 's' },
		{ "device", required_argument, NULL, 'd' }, { NULL, 0, NULL, 0 } };
	const char *dts = NULL, *shs = NULL;
	char path[PATH_MAX];
	struct tfs_shape sh;
	tfs_dtype dt;
	int c, device = -1, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:s:d:", lo, NULL)) != -1) {
		switch (c) {
		case 't': dts = optarg; break;
		case 's': shs = optarg; break;
		case 'd': if ((rc = parse_device(optarg, &device))) return rc; break;
		default: return usage_error("bad option");
		}
	}
	if (optind != argc - 1)
		return usage_error("expected one NAME");
	if (!dts || !shs)
		return usage_error("--dtype and --shape are required");
	if (tfs_dtype_parse(dts, strlen(dts), &dt))
		return usage_error("unknown dtype '%s'", dts);
	if (tfs_shape_parse(shs, strlen(shs), &sh))
		return usage_error("bad shape '%s' (dims >= 0, at most %d)", shs, TFS_MAX_DIMS);
	ctl_path(argv[optind], path, sizeof(path));
	if ((rc = on_tensorfs(path, NULL, 0)))
		return rc;
	return make_tensor(path, dt, &sh, device);
}

static int ls_one(const char *path, const char *label, int lng)
{
	struct tfs_meta m;
	struct stat st;
	char shape[512], dev[TFS_TIER_NAME_MAX];
	int rc;

	if (stat(path, &st))
		return err(-errno, "%s: %s", path, strerror(errno));
	if (!lng) {
		printf("%s%s\n", label, S_ISDIR(st.st_mode) ? "/" : "");
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		printf("%-6s %-20s %14s %6s %8s %-12s %s/\n", "dir", "-", "-", "-", "-", "-", label);
		return 0;
	}
	if ((rc = read_meta(path, &m, NULL)))
		return rc;
	if (tfs_shape_format(&m.shape, shape, sizeof(shape)) < 0)
		snprintf(shape, sizeof(shape), "[...]");
	printf("%-6s %-20s %14llu %6s %8lld %-12s %s\n", tfs_dtype_name(m.dtype), shape,
	       (unsigned long long)m.bytes, tfs_tier_name(m.device, dev, sizeof(dev)),
	       (long long)m.refcount, m.node, label);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int cmd_ls(int argc, char **argv)
{
	char path[PATH_MAX], sub[PATH_MAX * 2];
	int c, lng = 0, rc = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "l")) != -1) {
		if (c != 'l')
			return usage_error("bad option");
		lng = 1;
	}
	if (lng)
		printf("%-6s %-20s %14s %6s %8s %-12s %s\n", "DTYPE", "SHAPE", "BYTES", "DEVICE",
		       "REFCOUNT", "NODE", "NAME");
	for (int i = optind; i < argc || i == optind; i++) {
		struct dirent **ents;
		struct stat st;
		int n;

		ctl_path(i < argc ? argv[i] : ".", path, sizeof(path));
		if (i >= argc && !getenv("TENSORFS_MOUNT"))
			snprintf(path, sizeof(path), ".");
		if ((rc = on_tensorfs(path, NULL, 0)))
			return rc;
		if (stat(path, &st))
			return err(-errno, "%s: %s", path, strerror(errno));
		if (!S_ISDIR(st.st_mode)) {
			if ((rc = ls_one(path, path, lng)))
				return rc;
			continue;
		}
		if (argc - optind > 1)
			printf("%s:\n", path);
		n = scandir(path, &ents, NULL, by_name);
		if (n < 0)
			return err(-errno, "%s: %s", path, strerror(errno));
		for (int j = 0; j < n; j++) {
			if (!rc && strcmp(ents[j]->d_name, ".") && strcmp(ents[j]->d_name, "..")) {
				snprintf(sub, sizeof(sub), "%s/%s", path, ents[j]->d_name);
				rc = ls_one(sub, ents[j]->d_name, lng);
			}
			free(ents[j]);
		}
		free(ents);
		if (rc)
			return rc;
	}
	return 0;
}

static void print_user_xattrs(const char *path)
{
	char list[16384], val[4096];
	ssize_t n = listxattr(path, list, sizeof(list));

	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(list + i) + 1) {
		const char *name = list + i;
		ssize_t v;

		if (strncmp(name, "user.", 5) || !strncmp(name, "user.tensor.", 12))
			continue;
		v = getxattr(path, name, val, sizeof(val) - 1);
		if (v < 0)
			continue;
		val[v] = 0;
		printf("%-12s %s=%s\n", "xattr", name + 5, val);
	}
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = { { "json", no_argument, NULL, 'j' },
					    { NULL, 0, NULL, 0 } };
	char path[PATH_MAX], shape[512], when[64], hb[32], hex[2 * TFS_IPC_HANDLE_SIZE + 1];
	int c, json = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "j", lo, NULL)) != -1) {
		if (c != 'j')
			return usage_error("bad option");
		json = 1;
	}
	if (optind >= argc)
		return usage_error("expected a NAME");
	for (int i = optind; i < argc; i++) {
		struct tfs_meta m;
		char *js, dev[TFS_TIER_NAME_MAX];
		time_t t;

		struct stat st;

		ctl_path(argv[i], path, sizeof(path));
		if ((rc = on_tensorfs(path, NULL, 0)))
			return rc;
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			return err(-EISDIR, "%s: %s (tensorctl ls -l lists its tensors)", path,
				   strerror(EISDIR));
		if ((rc = read_meta(path, &m, &js)))
			return rc;
		if (json) {
			printf("%s\n", js);
			free(js);
			continue;
		}
		free(js);
		tfs_shape_format(&m.shape, shape, sizeof(shape));
		human_bytes(m.bytes, hb, sizeof(hb));
		printf("%-12s %s\n", "name", path);
		printf("%-12s %s\n", "dtype", tfs_dtype_name(m.dtype));
		printf("%-12s %s\n", "shape", shape);
		printf("%-12s %llu (%s)\n", "bytes", (unsigned long long)m.bytes, hb);
		printf("%-12s %s\n", "device", tfs_tier_name(m.device, dev, sizeof(dev)));
		printf("%-12s %s\n", "node", m.node);
		printf("%-12s %s\n", "backend", m.backend);
		printf("%-12s %lld\n", "refcount", (long long)m.refcount);
		for (int k = 0; k < TFS_IPC_HANDLE_SIZE; k++)
			snprintf(hex + 2 * k, 3, "%02x", m.ipc_handle[k]);
		printf("%-12s %s\n", "ipc_handle", m.has_handle ? hex : "-");
		printf("%-12s %llu\n", "ipc_offset", (unsigned long long)m.ipc_offset);
		printf("%-12s %04o\n", "mode", m.mode);
		printf("%-12s %u:%u\n", "owner", m.uid, m.gid);
		t = (time_t)m.ctime;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", localtime(&t));
		printf("%-12s %s\n", "ctime", when);
		t = (time_t)m.mtime;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", localtime(&t));
		printf("%-12s %s\n", "mtime", when);
		print_user_xattrs(path);
		if (i + 1 < argc)
			printf("\n");
	}
	return 0;
}

int cmd_rm(int argc, char **argv)
{
	char path[PATH_MAX];
	int c, rec = 0, force = 0, rc;

	optind = 1;
	while ((c = getopt(argc, argv, "rRf")) != -1) {
		if (c == 'r' || c == 'R')
			rec = 1;
		else if (c == 'f')
			force = 1;
		else
			return usage_error("bad option");
	}
	if (optind >= argc)
		return usage_error("expected a NAME");
	for (int i = optind; i < argc; i++) {
		struct stat st;

		ctl_path(argv[i], path, sizeof(path));
		if ((rc = on_tensorfs(path, NULL, 0)))
			return rc;
		if (lstat(path, &st)) {
			if (errno == ENOENT && force)
				continue;
			return err(-errno, "%s: %s", path, strerror(errno));
		}
		if (S_ISDIR(st.st_mode)) {
			if (!rec && rmdir(path))
				return err(-errno, "%s: %s", path,
					   strerror(errno == ENOTEMPTY ? ENOTEMPTY : errno));
			if (rec) {
				remove_tree(path);
				if (!lstat(path, &st))
					return err(-ENOTEMPTY, "%s: could not remove everything: %s",
						   path, strerror(ENOTEMPTY));
			}
		} else if (unlink(path)) {
			return err(-errno, "%s: %s", path, strerror(errno));
		}
	}
	return 0;
}

struct devsum {
	int device;
	uint64_t tensors, bytes;
	int has_mem;                       /* total and reserved known from the daemon */
	uint64_t total, reserved;
};

static struct devsum *dev_slot(struct devsum *d, int *nd, int max, int device)
{
	int k;

	for (k = 0; k < *nd && d[k].device != device; k++)
		;
	if (k == *nd) {
		if (*nd >= max)
			return NULL;
		d[k] = (struct devsum){ .device = device };
		(*nd)++;
	}
	return &d[k];
}

/* Each served device's memory, from the daemon's statistics attribute on the mount's root
 * (served devices without tensors show too). Anything malformed is left out. */
static void read_device_memory(const char *mnt, struct devsum *d, int *nd, int max)
{
	char buf[65536];
	ssize_t n = getxattr(mnt, "user.tensorfs.stats", buf, sizeof(buf) - 1);
	const cJSON *e;
	cJSON *o;

	if (n <= 0)
		return;
	buf[n] = '\0';
	if (!(o = cJSON_Parse(buf)))
		return;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "devices")) {
		const cJSON *dv = cJSON_GetObjectItemCaseSensitive(e, "device");
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "total");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "reserved");
		struct devsum *s;

		int cpu = cJSON_IsString(dv) && strcmp(dv->valuestring, "cpu") == 0;

		if ((!cpu && !cJSON_IsNumber(dv)) || !cJSON_IsNumber(t) || !cJSON_IsNumber(r) ||
		    (!cpu && (dv->valuedouble < 0 || dv->valuedouble >= 64)) ||
		    t->valuedouble < 0 || r->valuedouble < 0 || r->valuedouble > t->valuedouble ||
		    !(s = dev_slot(d, nd, max, cpu ? TFS_DEVICE_CPU : (int)dv->valuedouble)))
			continue;
		s->has_mem = 1;
		s->total = (uint64_t)t->valuedouble;
		s->reserved = (uint64_t)r->valuedouble;
	}
	cJSON_Delete(o);
}

static void walk_devices(const char *dir, struct devsum *d, int *nd, int max, int depth)
{
	char sub[PATH_MAX];
	struct dirent *e;
	DIR *dp;

	if (depth > 64 || !(dp = opendir(dir)))
		return;
	while ((e = readdir(dp))) {
		struct tfs_meta m;
		struct devsum *s;
		char buf[4096];
		ssize_t n;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			walk_devices(sub, d, nd, max, depth + 1);
			continue;
		}
		n = getxattr(sub, "user.tensor.meta", buf, sizeof(buf) - 1);
		if (n < 0 || tfs_meta_from_json(buf, (size_t)n, &m) || !(s = dev_slot(d, nd, max, m.device)))
			continue;
		s->tensors++;
		s->bytes += m.bytes;
	}
	closedir(dp);
}

/* GPUs by ordinal, then the host tier. */
static int by_device(const void *a, const void *b)
{
	unsigned x = (unsigned)((const struct devsum *)a)->device;
	unsigned y = (unsigned)((const struct devsum *)b)->device;

	return x < y ? -1 : x > y;
}

int cmd_df(int argc, char **argv)
{
	static const struct option lo[] = { { "json", no_argument, NULL, 'j' },
					    { NULL, 0, NULL, 0 } };
	char path[PATH_MAX], mnt[PATH_MAX], a[32], b[32], c2[32];
	struct devsum d[64];
	struct statvfs sv;
	uint64_t total, freeb, used, ntens;
	int c, json = 0, nd = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "j", lo, NULL)) != -1) {
		if (c != 'j')
			return usage_error("bad option");
		json = 1;
	}
	if (optind < argc - 1)
		return usage_error("expected at most one PATH");
	ctl_path(optind < argc ? argv[optind] : (getenv("TENSORFS_MOUNT") ? "" : "."), path,
		 sizeof(path));
	if (!path[0])
		snprintf(path, sizeof(path), "%s", getenv("TENSORFS_MOUNT"));
	if ((rc = on_tensorfs(path, mnt, sizeof(mnt))))
		return rc;
	if (statvfs(mnt, &sv))
		return err(-errno, "%s: %s", mnt, strerror(errno));
	total = (uint64_t)sv.f_blocks * sv.f_frsize;
	freeb = (uint64_t)sv.f_bavail * sv.f_frsize;
	used = total - freeb;
	ntens = sv.f_files - sv.f_ffree;
	read_device_memory(mnt, d, &nd, 64);
	walk_devices(mnt, d, &nd, 64, 0);
	qsort(d, (size_t)nd, sizeof(d[0]), by_device);
	if (json) {
		printf("{\"mount\":\"%s\",\"total\":%llu,\"used\":%llu,\"free\":%llu,"
		       "\"tensors\":%llu,\"devices\":[", mnt, (unsigned long long)total,
		       (unsigned long long)used, (unsigned long long)freeb,
		       (unsigned long long)ntens);
		for (int k = 0; k < nd; k++) {
			char tn[TFS_TIER_NAME_MAX + 2];

			if (d[k].device == TFS_DEVICE_CPU)
				snprintf(tn, sizeof(tn), "\"cpu\"");
			else
				snprintf(tn, sizeof(tn), "%d", d[k].device);
			printf("%s{\"device\":%s,\"tensors\":%llu,\"bytes\":%llu", k ? "," : "",
			       tn, (unsigned long long)d[k].tensors,
			       (unsigned long long)d[k].bytes);
			if (d[k].has_mem)
				printf(",\"total\":%llu,\"used\":%llu,\"free\":%llu",
				       (unsigned long long)d[k].total,
				       (unsigned long long)d[k].reserved,
				       (unsigned long long)(d[k].total - d[k].reserved));
			printf("}");
		}
		printf("]}\n");
		return 0;
	}
	human_bytes(total, a, sizeof(a));
	human_bytes(used, b, sizeof(b));
	human_bytes(freeb, c2, sizeof(c2));
	printf("%-14s %14s %14s %14s %8s  %s\n", "", "TOTAL", "USED", "FREE", "TENSORS", "MOUNT");
	printf("%-14s %14llu %14llu %14llu %8llu  %s\n", "all (bytes)", (unsigned long long)total,
	       (unsigned long long)used, (unsigned long long)freeb, (unsigned long long)ntens, mnt);
	printf("%-14s %14s %14s %14s\n", "all (human)", a, b, c2);
	for (int k = 0; k < nd; k++) {
		char name[32];

		if (d[k].device == TFS_DEVICE_CPU)
			snprintf(name, sizeof(name), "cpu (host)");
		else
			snprintf(name, sizeof(name), "device %d", d[k].device);
		human_bytes(d[k].bytes, b, sizeof(b));
		if (d[k].has_mem) {
			char t[32], f[32];

			human_bytes(d[k].total, t, sizeof(t));
			human_bytes(d[k].total - d[k].reserved, f, sizeof(f));
			printf("%-14s %14s %14llu %14s %8llu  (%s of tensors)\n", name, t,
			       (unsigned long long)d[k].reserved, f,
			       (unsigned long long)d[k].tensors, b);
		} else {
			printf("%-14s %14s %14llu %14s %8llu  (%s)\n", name, "-",
			       (unsigned long long)d[k].bytes, "-",
			       (unsigned long long)d[k].tensors, b);
		}
	}
	return 0;
}

/* Runs argv and waits; 0 when it exits 0. */
static int run_wait(const char *what, const char *prog, char **av)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return err(-errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (strchr(prog, '/'))
			execv(prog, av);
		else
			execvp(prog, av);
		fprintf(stderr, "tensorctl: %s: %s: %s\n", ctl_cmdname, prog, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return err(-errno, "waitpid: %s", strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return err(-ENOENT, "%s: could not run %s: %s", what, prog, strerror(ENOENT));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return err(-EIO, "%s: %s failed (status %d, see its messages above): %s", what,
			   prog, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			   strerror(EIO));
	return 0;
}

/* A password given inline in a URL of the daemon's arguments goes to it in
 * TENSORFS_REDIS_PASSWORD instead, so that neither tensorctl's command line nor the
 * daemon's shows it to other users: the argument becomes a copy without it, tensorctl's own
 * is scrubbed. One already in the environment is left as it is (the daemon refuses a
 * password given twice). 0 or -ENOMEM. */
static int inline_password_to_env(char **av, int n)
{
	for (int i = 1; i < n; i++) {
		size_t off, len;
		char *copy, *pw;
		int rc;

		if (!tfs_url_secret(av[i], &off, &len) || !len || getenv(TFS_PASSWORD_ENV))
			continue;
		copy = strdup(av[i]);
		pw = strndup(av[i] + off, len);
		rc = copy && pw && setenv(TFS_PASSWORD_ENV, pw, 1) == 0 ? 0 : -ENOMEM;
		if (pw)
			explicit_bzero(pw, len);
		free(pw);
		if (rc) {
			free(copy);
			return err(rc, "%s", strerror(ENOMEM));
		}
		tfs_argv_scrub(1, &copy);
		tfs_argv_scrub(1, &av[i]);
		av[i] = copy;
	}
	return 0;
}

int cmd_mount(int argc, char **argv)
{
	char self[PATH_MAX], prog[PATH_MAX + 16], **av;
	const char *use = "tensorfs";
	ssize_t n;
	int rc;

	if (argc < 2 || argv[1][0] == '-')
		return usage_error("expected a MOUNTPOINT first");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(prog, sizeof(prog), "%s/tensorfs", self);
			if (access(prog, X_OK) == 0)
				use = prog;
		}
	}
	av = calloc((size_t)argc + 2, sizeof(*av));
	if (!av)
		return err(-ENOMEM, "%s", strerror(ENOMEM));
	av[0] = (char *)"tensorfs";
	for (int i = 2; i < argc; i++)
		av[i - 1] = argv[i];
	av[argc - 1] = argv[1];
	rc = inline_password_to_env(av, argc - 1);
	if (rc == 0)
		rc = run_wait(argv[1], use, av);
	for (int i = 1; i < argc - 1; i++)
		if (av[i] != argv[i + 1])
			free(av[i]);
	free(av);
	return rc;
}

int cmd_umount(int argc, char **argv)
{
	char *av[] = { (char *)"fusermount3", (char *)"-u", NULL, NULL };
	int rc;

	if (argc != 2)
		return usage_error("expected one MOUNTPOINT");
	if ((rc = is_tensorfs_mountpoint(argv[1])))
		return rc;
	av[2] = argv[1];
	return run_wait(argv[1], "fusermount3", av);
}
