/* The hash of the daemon's in-memory tables (tensors, kernel nodes, the directory cache,
 * the mirror, the write-behind index): SipHash-1-3 under a 128-bit key drawn from
 * getrandom once per process. Names come from users, and the tables are walked under the
 * namespace lock: with an unkeyed hash (FNV-1a) and power-of-two buckets, anyone could
 * choose names that all land in one bucket and make every lookup a walk of them. Under a
 * secret key nobody outside the process can tell which names collide.
 *
 * Not for anything stored or shown (inode numbers, keys in Redis): the values change with
 * every start. Thread-safe; the key is drawn at the first call. */
#ifndef TFS_UTIL_HASH_H
#define TFS_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The hash of the len bytes at data. */
uint64_t tfs_hash(const void *data, size_t len);

/* The hash of the 8 bytes of x followed by the len bytes at data: a name under a parent
 * identified by x. tfs_hash_with(x, NULL, 0) hashes x alone. */
uint64_t tfs_hash_with(uint64_t x, const void *data, size_t len);

static inline uint64_t tfs_hash_str(const char *s)
{
	return tfs_hash(s, strlen(s));
}

#endif
