/* The memory keeper's start from the daemon (a step of main.c's start-up), and the entry of
 * a keeper that a daemon starts in place of one that died (mem/keeper/handover.h). */
#ifndef TFS_FS_KEEPER_START_H
#define TFS_FS_KEEPER_START_H

/* What the keeper needs of the daemon's options and state. */
struct tfs_keeper_start {
	const char *mountpoint;
	int foreground;
	int log_to_file;            /* --log FILE: stderr is the log */
	int restart_delay_max;      /* seconds */
	int fuse_fd;                /* the FUSE device: not the keeper's */
	int notify_fd;              /* the start-up pipe, -1 if none */
};

/* In every daemon, before the backend starts: remembers what a new keeper would be started
 * with (handover.h), and, unless restart (a daemon its keeper started), forks the keeper
 * (keeper.h). argv and ks's strings must live as long as the daemon. 0, or -1 after
 * logging why. */
int tfs_start_keeper(char *argv[], const struct tfs_keeper_start *ks, int restart);

/* First thing in main(): a process started as a new keeper becomes one and never returns;
 * any other returns at once. */
void tfs_keeper_exec_main(char **argv);

#endif
