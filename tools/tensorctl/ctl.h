/* tensorctl internals shared by its source files. Errors are negative errno values; the
 * first failure records one message (err()) that main prints as
 * "tensorctl: <cmd>: <what>: <strerror>". */
#ifndef TENSORCTL_CTL_H
#define TENSORCTL_CTL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "meta.h"

struct ctl_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;     /* first line: synopsis; then the --help text */
};

extern const char *ctl_cmdname;
extern volatile sig_atomic_t ctl_interrupted;

/* Records the message of the first failure and returns rc (negative errno). rc 0 is taken
 * as -EINVAL for usage errors without an errno. */
int err(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the command's usage line to stderr and returns -EINVAL. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when argv holds -h or --help: prints the help of the current command. */
int want_help(int argc, char **argv);

/* Paths. A relative NAME is taken under $TENSORFS_MOUNT when that is set. */
void ctl_path(const char *name, char *out, size_t size);
/* 0 when path (or, when it does not exist yet, its parent) lies on a tensorfs mount;
 * -ENOTCONN with a message otherwise. mnt (may be NULL) receives the mount point. */
int on_tensorfs(const char *path, char *mnt, size_t size);
/* 0 when path is itself a tensorfs mount point (as written: works while the daemon is
 * gone), -ENOTCONN with a message otherwise. */
int is_tensorfs_mountpoint(const char *path);
/* The tensor's metadata through user.tensor.meta. */
int read_meta(const char *path, struct tfs_meta *m, char **json);
/* Makes an empty tensor of the dtype and shape (device < 0: the default); removes it again
 * when a step fails. */
int make_tensor(const char *path, tfs_dtype dt, const struct tfs_shape *sh, int device);
/* Removes a file or a whole directory tree (best effort, for cleanup). */
void remove_tree(const char *path);
/* "1.5 GiB" */
void human_bytes(uint64_t n, char *buf, size_t size);

/* Progress bar on stderr when it is a terminal (and not --quiet). */
struct progress;
struct progress *progress_start(const char *label, uint64_t total, int quiet);
void progress_add(struct progress *p, uint64_t n);
void progress_end(struct progress *p);
/* A progress bar that starts at the first report of a library call (tfs_load, tfs_save,
 * tfs_copy), when the library knows the total: their progress callback. */
struct ctl_bar {
	struct progress *p;
	const char *label;
	int quiet, started;
	uint64_t shown;
};
void ctl_bar_progress(void *arg, uint64_t done, uint64_t total);

/* Commands. */
int cmd_create(int argc, char **argv);
int cmd_mv(int argc, char **argv);
/* --device's value: "cpu" or a GPU ordinal (TFS_DEVICE_CPU or the ordinal). */
int parse_device(const char *s, int *out);
int cmd_ls(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_df(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_cp(int argc, char **argv);
/* tensorctl cp's copy (cmd_cp.c): SRC (with recurse, a directory tree) into new tensors
 * DEST, threads copy threads; all or nothing. 0 or the first error (recorded by err()). */
int ctl_copy(const char *src, const char *dst, int recurse, int quiet, int threads);

#endif
