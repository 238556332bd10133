/* tensorctl mv --device: tensors and directories between tiers (tfs_move, docs/tiers.md). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "tensorfs.h"
#include "tier.h"

/* The bar starts at the first tensor moved, when tfs_move has counted the bytes. */
struct bar {
	struct progress *p;
	const char *label;
	int started;
	uint64_t shown;
};

static void on_progress(void *arg, int done, int total, uint64_t done_bytes,
			uint64_t total_bytes)
{
	struct bar *b = arg;

	(void)done;
	(void)total;
	if (!b->started) {
		b->started = 1;
		b->p = progress_start(b->label, total_bytes, 0);
	}
	progress_add(b->p, done_bytes - b->shown);
	b->shown = done_bytes;
}

int cmd_mv(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'd' }, { "threads", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 } };
	struct tfs_move_opts o = { 0 };
	int c, rc, device = -1, quiet = 0, have = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:j:q", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if ((rc = parse_device(optarg, &device)))
				return rc;
			have = 1;
			break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 1 || v > 64)
				return usage_error("--threads '%s': expected 1 to 64", optarg);
			o.threads = (int)v;
			break;
		}
		case 'q': quiet = 1; break;
		default: return usage_error("bad option");
		}
	}
	if (!have)
		return usage_error("--device N|cpu is needed");
	if (optind >= argc)
		return usage_error("expected a PATH");
	for (int i = optind; i < argc; i++) {
		char path[PATH_MAX];
		struct bar b = { .label = device == TFS_DEVICE_CPU ? "sleep" : "wake" };

		ctl_path(argv[i], path, sizeof(path));
		if ((rc = on_tensorfs(path, NULL, 0)))
			return rc;
		o.progress = quiet ? NULL : on_progress;
		o.arg = &b;
		rc = tfs_move(path, device, &o);
		progress_end(b.p);
		if (rc)
			return err(rc, "%s", tfs_errmsg());
	}
	return 0;
}
