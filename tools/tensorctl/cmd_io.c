/* tensorctl load and save: the options, then libtensorfs's tfs_load / tfs_save (which
 * check the file, make the tensors and move the bytes; lib/load.c, lib/save.c). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "ctl.h"
#include "tensorfs.h"
#include "dtype.h"
#include "shape.h"

static int parse_fmt(const char *s, enum tfs_format *f)
{
	if (!strcmp(s, "raw"))
		*f = TFS_FORMAT_RAW;
	else if (!strcmp(s, "npy"))
		*f = TFS_FORMAT_NPY;
	else if (!strcmp(s, "safetensors") || !strcmp(s, "st"))
		*f = TFS_FORMAT_SAFETENSORS;
	else if (!strcmp(s, "dir") || !strcmp(s, "hf"))
		*f = TFS_FORMAT_MODEL_DIR;
	else
		return usage_error("--format '%s': expected raw, npy, safetensors or dir", s);
	return 0;
}

static int parse_threads(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v < 1 || v > 64)
		return usage_error("--threads '%s': expected 1 to 64", s);
	*out = (int)v;
	return 0;
}

/* Whether bytes go through the FUSE files instead of the mapped memory: yes unless
 * TENSORCTL_COPY names another way than fuse or auto. */
static int via_file(void)
{
	const char *env = getenv("TENSORCTL_COPY");

	return !env || !*env || !strcmp(env, "auto") || !strcmp(env, "fuse");
}

void ctl_bar_progress(void *arg, uint64_t done, uint64_t total)
{
	struct ctl_bar *b = arg;

	if (!b->started) {
		b->p = progress_start(b->label, total, b->quiet);
		b->started = 1;
	}
	if (done > b->shown) {
		progress_add(b->p, done - b->shown);
		b->shown = done;
	}
}

int cmd_load(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'F' }, { "dtype", required_argument, NULL, 't' },
		{ "shape", required_argument, NULL, 's' }, { "device", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, 'j' }, { "quiet", no_argument, NULL, 'q' },
		{ "merge", no_argument, NULL, 'm' }, { "direct", optional_argument, NULL, 'D' },
		{ "no-direct", no_argument, NULL, 'N' }, { NULL, 0, NULL, 0 } };
	const char *dts = NULL, *shs = NULL, *file;
	char dst[PATH_MAX];
	struct tfs_load_opts o;
	struct ctl_bar b = { 0 };
	struct tfs_shape sh;
	struct stat st;
	struct statfs sf;
	int c, quiet = 0, rc;

	tfs_load_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "F:t:s:d:j:qm", lo, NULL)) != -1) {
		switch (c) {
		case 'm': o.merge = 1; break;
		case 'D':
			if (optarg && strcmp(optarg, "auto"))
				return usage_error("--direct takes no value but auto, not '%s'", optarg);
			o.direct = optarg ? -1 : 1;
			break;
		case 'N': o.direct = 0; break;
		case 'F': if ((rc = parse_fmt(optarg, &o.format))) return rc; break;
		case 't': dts = optarg; break;
		case 's': shs = optarg; break;
		case 'j': if ((rc = parse_threads(optarg, &o.threads))) return rc; break;
		case 'q': quiet = 1; break;
		case 'd': if ((rc = parse_device(optarg, &o.device))) return rc; break;
		default: return usage_error("bad option");
		}
	}
	if (optind != argc - 2)
		return usage_error("expected FILE and DEST");
	file = argv[optind];
	ctl_path(argv[optind + 1], dst, sizeof(dst));
	if (dts && tfs_dtype_parse(dts, strlen(dts), &o.dtype))
		return usage_error("unknown dtype '%s'", dts);
	if (shs) {
		if (tfs_shape_parse(shs, strlen(shs), &sh))
			return usage_error("bad shape '%s'", shs);
		o.ndim = sh.ndim;
		for (int i = 0; i < sh.ndim; i++)
			o.shape[i] = (int64_t)sh.dims[i];
	}
	if ((dts || shs) && (o.format == TFS_FORMAT_NPY || o.format == TFS_FORMAT_SAFETENSORS))
		return usage_error("--dtype and --shape are for raw files only");
	if ((dts || shs) && o.format == TFS_FORMAT_AUTO)
		o.format = TFS_FORMAT_RAW;
	if (o.format == TFS_FORMAT_MODEL_DIR)
		return usage_error("--format dir is for save; load takes a model directory as it is");
	if ((rc = on_tensorfs(dst, NULL, 0)))
		return rc;
	if (!lstat(dst, &st) && !(o.merge && S_ISDIR(st.st_mode)))
		return err(-EEXIST, "%s: %s%s", dst, strerror(EEXIST),
			   S_ISDIR(st.st_mode) ? " (--merge loads into an existing directory)" : "");
	/* Tensors already on a tensorfs mount (another node's, typically): a replica, as
	 * tensorctl cp -r makes it. */
	if (!o.merge && o.format == TFS_FORMAT_AUTO && !statfs(file, &sf) &&
	    sf.f_type == 0x65735546)
		return ctl_copy(file, dst, 1, quiet, o.threads > 0 ? o.threads : 8);
	b.label = dst;
	b.quiet = quiet;
	/* Through the files, which the daemon fills from the file itself (fill_ioctl.h): it
	 * starts at once and ran at 30-35 GB/s on the H200 for 2 and 16 GiB, where a new
	 * process mapping GPU tensors first spends ~0.2 s on its CUDA context and pinned
	 * buffers and reached 26 GB/s for 16 GiB (tests/bench/RESULTS-gpu.md). */
	o.via_file = via_file();
	o.progress = ctl_bar_progress;
	o.progress_arg = &b;
	o.cancel = (const volatile int *)&ctl_interrupted;
	rc = tfs_load(file, dst, &o);
	progress_end(b.p);
	return rc ? err(rc, "%s", tfs_errmsg()) : 0;
}

int cmd_save(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'F' }, { "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, 'f' }, { "threads", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 } };
	char src[PATH_MAX];
	struct tfs_save_opts o;
	struct ctl_bar b = { 0 };
	int c, quiet = 0, rc;

	tfs_save_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "F:qfj:", lo, NULL)) != -1) {
		switch (c) {
		case 'F': if ((rc = parse_fmt(optarg, &o.format))) return rc; break;
		case 'q': quiet = 1; break;
		case 'f': o.replace = 1; break;
		case 'j': if ((rc = parse_threads(optarg, &o.threads))) return rc; break;
		default: return usage_error("bad option");
		}
	}
	if (optind != argc - 2)
		return usage_error("expected NAME and FILE");
	ctl_path(argv[optind], src, sizeof(src));
	if ((rc = on_tensorfs(src, NULL, 0)))
		return rc;
	b.label = argv[optind + 1];
	b.quiet = quiet;
	/* through the files: a new process then needs no CUDA context (0.13 s on the H200) nor
	 * pinned buffers, and reads the daemon's DMA at 8 GB/s to 4.6 mapped
	 * (tests/bench/RESULTS-gpu.md) */
	o.via_file = via_file();
	o.progress = ctl_bar_progress;
	o.progress_arg = &b;
	o.cancel = (const volatile int *)&ctl_interrupted;
	rc = tfs_save(src, argv[optind + 1], &o);
	progress_end(b.p);
	return rc ? err(rc, "%s", tfs_errmsg()) : 0;
}
