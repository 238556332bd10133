/* fs/util/hash.c: SipHash against its reference values, and the tables that use it (the
 * mirror, the kernel's nodes) spreading names chosen to collide under the unkeyed FNV-1a
 * they used before, instead of chaining them all in one bucket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/util/hash.c"
#include "../../fs/store/mirror.c"
#include "../../fs/kernel/node.c"
#include "tap.h"

#define FLOOD 256

static void test_reference(void)
{
	/* The SipHash paper's key 00 01 .. 0f and messages 00 01 .. (len - 1). */
	static const uint64_t k[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	static const uint64_t zero[2];
	static const struct { const char *s; uint64_t h; } py[] = {
		/* CPython 3.11's hash() of these bytes under PYTHONHASHSEED=0: SipHash-1-3
		 * with a key of zeros. */
		{ "a", 0x407448d2b89b1813ULL },
		{ "tensorfs", 0xd5742ed6935e9e07ULL },
		{ "0123456789abcdefXYZ", 0x283e7687cd67183bULL },
		{ "layers/0/attn.weight", 0x753e945a28a07493ULL },
	};
	unsigned char msg[64];
	unsigned char pre[8 + 12];

	for (int i = 0; i < 64; i++)
		msg[i] = (unsigned char)i;
	ok(siphash(k, 2, 4, 0, 0, msg, 0) == 0x726fdb47dd0e0e31ULL,
	   "SipHash-2-4 of the empty message: the paper's value");
	ok(siphash(k, 2, 4, 0, 0, msg, 15) == 0xa129ca6149be45e5ULL,
	   "SipHash-2-4 of 15 bytes: the paper's value");
	for (size_t i = 0; i < sizeof(py) / sizeof(py[0]); i++)
		ok(siphash(zero, 1, 3, 0, 0, py[i].s, strlen(py[i].s)) == py[i].h,
		   "SipHash-1-3 of '%s': CPython's", py[i].s);
	/* A prefix word is the same as those 8 bytes in front of the data. */
	for (int i = 0; i < 8; i++)
		pre[i] = (unsigned char)(0x1122334455667788ULL >> (8 * i));
	memcpy(pre + 8, "hello, world", 12);
	ok(tfs_hash_with(0x1122334455667788ULL, "hello, world", 12) == tfs_hash(pre, sizeof(pre)),
	   "tfs_hash_with(x, data) is the hash of x's 8 bytes then data");
	ok(tfs_hash_str("a") == tfs_hash("a", 1) && tfs_hash("a", 1) != tfs_hash("b", 1),
	   "tfs_hash_str hashes the string's bytes");
	ok(key[0] || key[1], "the key was drawn (not all zeros)");
}

static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The mirror: FLOOD keys that all fall in bucket 0 of 1024 under FNV-1a-32. */
static void test_mirror_flood(void)
{
	struct tfs_dirrec d;
	char key[64];
	int found = 0, longest = 0;

	memset(&d, 0, sizeof(d));
	d.mode = 0755;
	for (long i = 0; found < FLOOD; i++) {
		snprintf(key, sizeof(key), "tensorfs:dir:n%ld", i);
		if (fnv32(key) % NBUCKETS)
			continue;
		tfs_mirror_dir_put(key, &d);
		found++;
	}
	for (int b = 0; b < NBUCKETS; b++) {
		int len = 0;

		for (struct entry *e = buckets[b]; e; e = e->next)
			len++;
		if (len > longest)
			longest = len;
	}
	ok(longest <= 16, "mirror: %d keys chosen to collide under FNV-1a: longest chain %d",
	   FLOOD, longest);
}

/* The kernel's nodes: FLOOD names without an inode number whose path ids (FNV-1a-64) all
 * fall in bucket 0 of 1024, and FLOOD inode numbers that are multiples of 4096. */
static void test_node_flood(void)
{
	char name[64];
	int found = 0, longest = 0;

	ok(tfs_node_init() == 0, "node table made");
	/* tfs_node_id_of is FNV-1a-64 of the path, an id that must not change. */
	for (long i = 0; found < FLOOD; i++) {
		snprintf(name, sizeof(name), "p%ld", i);
		if (tfs_node_id_of(name) % 1024)
			continue;
		if (tfs_node_lookup(TFS_ROOT_ID, name, 0) == 0)
			break;
		found++;
	}
	for (long i = 1; i <= FLOOD; i++) {
		snprintf(name, sizeof(name), "i%ld", i);
		tfs_node_lookup(TFS_ROOT_ID, name, (uint64_t)i * 4096);
	}
	for (size_t b = 0; b < nt.nbuckets; b++) {
		int len = 0;

		for (struct node *n = nt.by_id[b]; n; n = n->id_next)
			len++;
		if (len > longest)
			longest = len;
	}
	ok(found == FLOOD, "%d names looked up", FLOOD);
	ok(longest <= 16, "nodes: %d path ids and %d inode numbers chosen to collide: longest "
	   "chain of ids %d (of %zu buckets)", FLOOD, FLOOD, longest, nt.nbuckets);
	tfs_node_fini();
}

int main(void)
{
	test_reference();
	test_mirror_flood();
	test_node_flood();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures != 0;
}
