/* Small string helpers shared by the parsers. No I/O, no allocation. */
#ifndef TFS_STRUTIL_H
#define TFS_STRUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Drops leading and trailing ASCII whitespace (and NULs that some xattr setters send). */
void tfs_trim(const char **s, size_t *len);
/* 1 when the NUL-terminated a equals the len bytes at b. */
int tfs_streq_n(const char *a, const char *b, size_t len);
/* Parses a whole decimal unsigned (no sign, no space) of len bytes. 0 or -EINVAL/-ERANGE. */
/* 1 when s is a word that names a node, a prefix or a queue: 1 to max-1 bytes of printable
 * ASCII without space, ':', '{', '}' or '*' (which would change a key's meaning). */
int tfs_word_ok(const char *s, size_t max);
int tfs_parse_u64(const char *s, size_t len, uint64_t *out);
/* Same for a signed value. */
int tfs_parse_i64(const char *s, size_t len, int64_t *out);
/* Lower-case hex of n bytes into out (2n+1 bytes). */
void tfs_hex_encode(const uint8_t *in, size_t n, char *out);
/* Exactly 2n hex digits into n bytes. 0 or -EINVAL. */
int tfs_hex_decode(const char *in, size_t len, uint8_t *out, size_t n);
/* Formats a parser's error message into err (when err and errlen are non-zero) and
 * returns rc, so a parser can say `return tfs_errf(err, errlen, -EINVAL, "...", ...)`. */
int tfs_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* 64-bit FNV-1a of n bytes at s, continuing from h (TFS_FNV_BASIS to start), for the
 * in-memory hash tables and the node ids made from paths. */
#define TFS_FNV_BASIS 14695981039346656037ULL
uint64_t tfs_fnv1a(uint64_t h, const void *s, size_t n);

#endif
