/* tensorctl cp: copies a tensor, or a directory of them (-r), into new tensors of the
 * mount DEST is on: libtensorfs's tfs_copy (lib/copy_tree.c), with a progress bar and
 * interrupts. SRC may be another node's (the daemon then moves its bytes over the
 * network, fs/net/net.h), so this is how a node takes a replica of another's model. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl.h"

int ctl_copy(const char *src_arg, const char *dst_arg, int recurse, int quiet, int threads)
{
	char src[PATH_MAX], dst[PATH_MAX];
	struct tfs_copy_opts o;
	struct ctl_bar b = { .label = "cp", .quiet = quiet };
	struct stat st;
	int rc;

	ctl_path(src_arg, src, sizeof(src));
	ctl_path(dst_arg, dst, sizeof(dst));
	if ((rc = on_tensorfs(src, NULL, 0)) || (rc = on_tensorfs(dst, NULL, 0)))
		return rc;
	if (lstat(dst, &st) == 0)
		return err(-EEXIST, "%s exists", dst);
	tfs_copy_opts_init(&o);
	o.recursive = recurse;
	o.threads = threads;
	o.progress = ctl_bar_progress;
	o.progress_arg = &b;
	o.cancel = (const volatile int *)&ctl_interrupted;
	rc = tfs_copy(src, dst, &o);
	progress_end(b.p);
	if (rc == -EISDIR && !recurse)
		return err(rc, "%s is a directory (use -r)", src);
	return rc ? err(rc, "%s", rc == -EINTR ? "interrupted" : tfs_errmsg()) : 0;
}

int cmd_cp(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "recursive", no_argument, NULL, 'r' }, { "quiet", no_argument, NULL, 'q' },
		{ "threads", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 } };
	int recurse = 0, quiet = 0, threads = 8, c;

	if (want_help(argc, argv))
		return 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "rqj:", lo, NULL)) != -1) {
		if (c == 'r')
			recurse = 1;
		else if (c == 'q')
			quiet = 1;
		else if (c == 'j') {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 64)
				return usage_error("-j '%s': expected 1 to 64", optarg);
			threads = (int)v;
		} else {
			return usage_error("unknown option");
		}
	}
	if (argc - optind != 2)
		return usage_error("expected SRC and DEST");
	return ctl_copy(argv[optind], argv[optind + 1], recurse, quiet, threads);
}
