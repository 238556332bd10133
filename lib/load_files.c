/* How a load reads its files (load_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"
#include "direct_io.h"
#include "load_files.h"

/* The file item i is read from. */
struct regmap { char *map; size_t size; };

#define SRC(p, own, i) ((p)->items[i].src ? (p)->items[i].src : (own))

/* A load's O_DIRECT descriptors (direct_io.h), one per file, where p->direct asks for
 * them. 0 or -ENOMEM. */
static int open_direct(struct tfs_load_files *r, const struct tfs_pipe *p,
		       const struct tfs_pipe_src *own)
{
	const struct tfs_pipe_src *last = NULL;
	int last_dfd = -1;

	if (!p->to_tensor || p->direct == 0 || !p->n)
		return 0;
	if (!(r->dfd = malloc(p->n * sizeof(*r->dfd))) ||
	    !(r->dfds = malloc(p->n * sizeof(*r->dfds))))
		return tfs_seterr(-ENOMEM, "%s", tfs_strerror(ENOMEM));
	for (size_t i = 0; i < p->n; i++) {
		const struct tfs_pipe_src *s = SRC(p, own, i);
		struct stat st;
		size_t k;

		/* Items of one file come together: the last file answers most lookups. */
		if (s != last) {
			last_dfd = -1;
			for (k = 0; k < i && SRC(p, own, k) != s; k++)
				;
			if (k < i) {
				last_dfd = r->dfd[k];
			} else if (s->fd >= 0 && fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) &&
				   (last_dfd = tfs_dio_open(s->fd, (uint64_t)st.st_size,
							    p->direct)) >= 0) {
				r->dfds[r->ndfds++] = last_dfd;
			}
			last = s;
		}
		r->dfd[i] = last_dfd;
	}
	return 0;
}

/* TFS_LOAD_REGISTER=1, a load into mapped tensors: each file mapped read-only and
 * registered with CUDA (cudaHostRegisterReadOnly), so the copies DMA from the page
 * cache itself, skipping the read into a pinned buffer. Where the driver refuses (a
 * file's pages, an old driver) or anything fails, the file goes the usual way. */
static void register_files(struct tfs_load_files *r, const struct tfs_pipe *p,
			   const struct tfs_pipe_src *own, int profile)
{
	const struct tfs_cudart *cu;
	const char *env = getenv("TFS_LOAD_REGISTER");
	int rc;

	if (!env || strcmp(env, "1") || !p->to_tensor || p->via_file || !p->n ||
	    !(cu = tfs_cudart_get(&rc)))
		return;
	if (!(r->imap = calloc(p->n, sizeof(*r->imap))) ||
	    !(r->regs = calloc(p->n, sizeof(*r->regs))))
		return;
	for (size_t i = 0; i < p->n; i++) {
		const struct tfs_pipe_src *s = SRC(p, own, i);
		struct stat st;
		size_t k;
		char *m;
		int e;

		for (k = 0; k < i && SRC(p, own, k) != s; k++)
			;
		if (k < i) {
			r->imap[i] = r->imap[k];
			continue;
		}
		if (s->fd < 0 || fstat(s->fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
			continue;
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, s->fd, 0);
		if (m == MAP_FAILED)
			continue;
		e = cu->HostRegister(m, (size_t)st.st_size, TFS_CUDA_HOST_REGISTER_PORTABLE |
				     TFS_CUDA_HOST_REGISTER_READ_ONLY);
		if (e) {
			if (profile)
				fprintf(stderr, "tfs_load profile: cudaHostRegister of %s refused: "
					"%s\n", s->name ? s->name : "-", cu->GetErrorString(e));
			munmap(m, (size_t)st.st_size);
			continue;
		}
		r->regs[r->nregs++] = (struct regmap){ m, (size_t)st.st_size };
		r->imap[i] = m;
	}
}

static void unregister_files(struct tfs_load_files *r)
{
	const struct tfs_cudart *cu;
	int rc;

	if (r->nregs && (cu = tfs_cudart_get(&rc)))
		for (size_t i = 0; i < r->nregs; i++) {
			cu->HostUnregister(r->regs[i].map);
			munmap(r->regs[i].map, r->regs[i].size);
		}
	free(r->regs);
	free(r->imap);
}

int tfs_load_files_open(struct tfs_load_files *f, const struct tfs_pipe *p,
			const struct tfs_pipe_src *own, int profile)
{
	memset(f, 0, sizeof(*f));
	register_files(f, p, own, profile);
	return f->nregs ? 0 : open_direct(f, p, own);
}

void tfs_load_files_close(struct tfs_load_files *f)
{
	for (size_t i = 0; i < f->ndfds; i++)
		close(f->dfds[i]);
	free(f->dfds);
	free(f->dfd);
	unregister_files(f);
	memset(f, 0, sizeof(*f));
}
