/* SipHash-1-3 under a per-process random key (hash.h). SipHash: Aumasson and Bernstein,
 * "SipHash: a fast short-input PRF" (2012); 1-3 is the variant of Rust's and CPython's
 * hash tables. */
#include <errno.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/hash.h"

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004    /* Linux 5.6 */
#endif

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* The key: from getrandom without waiting (a daemon started at early boot must not hang
 * until the pool is ready); where even that fails, from what varies between starts. */
static void draw_key(void)
{
	struct timespec ts;

	if (getrandom(key, sizeof(key), GRND_NONBLOCK) == (ssize_t)sizeof(key) ||
	    getrandom(key, sizeof(key), GRND_INSECURE) == (ssize_t)sizeof(key))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	key[0] ^= (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	key[1] ^= (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid();
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1; s->v1 = ROTL(s->v1, 13); s->v1 ^= s->v0; s->v0 = ROTL(s->v0, 32);
	s->v2 += s->v3; s->v3 = ROTL(s->v3, 16); s->v3 ^= s->v2;
	s->v0 += s->v3; s->v3 = ROTL(s->v3, 21); s->v3 ^= s->v0;
	s->v2 += s->v1; s->v1 = ROTL(s->v1, 17); s->v1 ^= s->v2; s->v2 = ROTL(s->v2, 32);
}

static inline void sip_word(struct sip *s, uint64_t m, int crounds)
{
	s->v3 ^= m;
	for (int i = 0; i < crounds; i++)
		sip_round(s);
	s->v0 ^= m;
}

static inline uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		m |= (uint64_t)p[i] << (8 * i);
	return m;
}

/* SipHash-c-d of (the 8 bytes of pre, little-endian, when has_pre) followed by data[len]
 * under k: the reference algorithm, with the prefix as its first word. */
static uint64_t siphash(const uint64_t k[2], int crounds, int drounds, int has_pre,
			uint64_t pre, const void *data, size_t len)
{
	struct sip s = {
		k[0] ^ 0x736f6d6570736575ULL, k[1] ^ 0x646f72616e646f6dULL,
		k[0] ^ 0x6c7967656e657261ULL, k[1] ^ 0x7465646279746573ULL,
	};
	const unsigned char *p = data;
	size_t total = len + (has_pre ? 8 : 0), rest = len;

	if (has_pre)
		sip_word(&s, pre, crounds);
	for (; rest >= 8; rest -= 8, p += 8)
		sip_word(&s, load_le(p, 8), crounds);
	sip_word(&s, load_le(p, rest) | (uint64_t)(total & 0xff) << 56, crounds);
	s.v2 ^= 0xff;
	for (int i = 0; i < drounds; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t tfs_hash(const void *data, size_t len)
{
	pthread_once(&key_once, draw_key);
	return siphash(key, 1, 3, 0, 0, data, len);
}

uint64_t tfs_hash_with(uint64_t x, const void *data, size_t len)
{
	pthread_once(&key_once, draw_key);
	return siphash(key, 1, 3, 1, x, data, len);
}
