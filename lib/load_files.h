/* How a load reads its files, decided once per file before the copy starts
 * (load_pipe.c): with O_DIRECT (direct_io.h) where tfs_pipe.direct asks for it, or, with
 * TFS_LOAD_REGISTER=1 on a load into mapped tensors, not at all: the file mapped
 * read-only and registered with CUDA (cudaHostRegisterReadOnly), so the device copies
 * DMA from the page cache itself. Private to libtensorfs. */
#ifndef TFS_LOAD_FILES_H
#define TFS_LOAD_FILES_H

#include <stddef.h>

#include "load_pipe.h"

struct tfs_load_files {
	int *dfd;                    /* per item: its file open with O_DIRECT, or -1; or NULL */
	char **imap;                 /* per item: its file mapped and registered, or NULL;
	                              * or NULL */
	int *dfds;                   /* what dfd names, each once */
	size_t ndfds;
	struct regmap *regs;         /* what imap names, each once */
	size_t nregs;
};

/* Fills *f for the items of p (an item without src reads own). Registration is tried
 * first (a file refused goes on through the page cache, said on stderr when profile is
 * set); without any, O_DIRECT descriptors where p->direct asks. 0 or -ENOMEM (message
 * set); what was opened stays for tfs_load_files_close either way. */
int tfs_load_files_open(struct tfs_load_files *f, const struct tfs_pipe *p,
			const struct tfs_pipe_src *own, int profile);
/* Closes, unregisters and unmaps what *f holds. */
void tfs_load_files_close(struct tfs_load_files *f);

#endif
