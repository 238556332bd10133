/* Names claimed in their parent directory's entries (claims.c). */
#ifndef TFS_CLAIMS_H
#define TFS_CLAIMS_H

#include "store/schema.h"

/* A name claimed and not yet answered (tfs_store_link_send): private to claims.c. */
struct tfs_claim_check;
struct tfs_store_claim {
	struct tfs_writer_call *set;    /* HSETNX of the entry */
	struct tfs_writer_call *exists; /* the parent's record, checked right behind it */
	struct tfs_claim_check *check;  /* or, in a batch, the check it shares */
};

/* Adds name to its parent's entries ('t' tensor, 'd' dir): -EEXIST when taken,
 * -ENOENT when the parent directory does not exist. */
int tfs_store_link(const char *name, char type);
/* tfs_store_link in two halves: the checks and the claim sent (0 with *claim set, or the
 * errors above but -EEXIST), then its answer awaited (0, -EEXIST or -EIO). parent_rec:
 * the parent's record, which the caller read under ns just before (so it exists); NULL:
 * read it here. */
int tfs_store_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_store_claim **claim);
int tfs_store_link_wait(const char *name, char type, struct tfs_store_claim *claim);
/* Between these two, the claims the calling thread sends (tfs_store_link_send) share one
 * check of each parent's record, sent at tfs_store_claims_end behind all of them, instead
 * of one each (a claim awaited before the end has its check sent then, and shares it
 * with the claims before it only). Every claim sent in between is awaited as usual. */
void tfs_store_claims_begin(void);
void tfs_store_claims_end(void);
/* A claim whose answer was lost (-EIO from tfs_store_link_wait: Redis stalled or went away
 * after it was sent) may have taken the name all the same. A later claim of the same name
 * and type by this node takes it over (0, not -EEXIST) while no record is behind it; the
 * rest are given back here, after Redis came back (each entry removed in one script only
 * while still of that type with no record behind it, and not one of this node's tensors:
 * mine(name) says whether it is, under the caller's locks). 0 or -EIO (those not settled
 * are kept). */
int tfs_store_claims_settle(int (*mine)(const char *name));
/* Records a claim of name this node may have made in an earlier run that died before
 * answering it (a queue command served again after a crash): taken over, or given back,
 * as a lost one. */
void tfs_store_claim_maybe_lost(const char *name, char type);

#endif
