/* The daemon's command line: options through a fuse_opt table (--name value, --name=value
 * and -o name=value, so /etc/fstab lines work), --help, and the checks that complete them
 * with defaults and hand them to the layers that own them (docs/options.md). Used once, at
 * start, by main.c, before any thread: no locks. */
#ifndef TFS_FS_OPTIONS_H
#define TFS_FS_OPTIONS_H

#include <fuse_lowlevel.h>

#include "daemon.h"

/* argv as fuse_opt can parse it: the options whose names begin with another's spelled as
 * -o name=value (tfs_opts_spell's comment in options.c says which, and how). The
 * arguments are copied into out (fuse_opt_free_args frees them). 0, or -1 without
 * memory. */
int tfs_opts_spell(int argc, char *argv[], struct fuse_args *out);
/* The spelled command line into tfs_d.o, the FUSE arguments args (pointing into spelled's
 * array, which must outlive them) and cmd; the log file opened (stderr redirected) when
 * --log names one. 0 to go on, 1 when --help or --version answered, -1 after saying why
 * (on stderr). */
int tfs_opts_parse(struct fuse_args *spelled, struct fuse_args *args,
		   struct fuse_cmdline_opts *cmd, const char *prog);
/* o checked and completed with its defaults, and handed to the layers that own its parts
 * (schema, queue, memory, FUSE); nothing started. 0, or -1 after logging why. restarted:
 * this daemon was started again by its keeper (which said so once already). */
int tfs_opts_check(struct tfs_opts *o, int restarted);

#endif
