/* Unit test of the device-memory sub-allocator (fs/mem/pool.c) with a fake block source: no
 * GPU. Also the model behind the allocation-efficiency target: 10,000 tensors of
 * log-uniform sizes 4 KiB..64 MiB must reserve at most 1.05 x what they request. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/mem/pool.c"
#include "../../fs/mem/pool_check.c"
#include "../testrand.h"

#define KiB 1024ull

#include "tap.h"

/* ---- a fake device: addresses only, with a cap and injectable failures ---- */

struct fake {
	pthread_mutex_t mu;
	uint64_t next;          /* next address handed out */
	uint64_t cap;           /* bytes that may be out at once */
	uint64_t out;           /* bytes out now */
	long nblocks;           /* blocks out now */
	int fail_next;          /* fail this many get calls with -ENOMEM */
	long gets;
};

static int fake_get(void *ctx, uint64_t *sizep, uint64_t *base, void **cookie)
{
	struct fake *f = ctx;
	uint64_t size = *sizep;
	int rc = 0;

	pthread_mutex_lock(&f->mu);
	if (f->fail_next > 0) {
		f->fail_next--;
		rc = -ENOMEM;
	} else if (f->cap && f->out + size > f->cap) {
		rc = -ENOSPC;
	} else {
		/* A gap between blocks so that an overrun would show as an address outside. */
		*base = f->next;
		f->next += size + 2 * MiB;
		f->out += size;
		f->nblocks++;
		f->gets++;
		*cookie = (void *)(uintptr_t)*base;
	}
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static void fake_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->mu);
	if ((uintptr_t)cookie != base)
		f->nblocks = -1000000;  /* makes the leak check fail */
	f->out -= size;
	f->nblocks--;
	pthread_mutex_unlock(&f->mu);
}

static const struct tfs_pool_block_ops fake_ops = { fake_get, fake_put };

static void fake_init(struct fake *f, uint64_t cap)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	f->next = 1ull << 40;
	f->cap = cap;
}

static struct tfs_pool_key K(uint64_t a)
{
	return (struct tfs_pool_key){ a, 0, 0 };
}

static int pool_ok(struct tfs_pool *p)
{
	char buf[256];

	if (tfs_pool_check(p, buf, sizeof(buf)) == 0)
		return 1;
	printf("# check: %s\n", buf);
	return 0;
}

/* Live chunks must not overlap and must lie inside their block. */
static int no_overlap(struct tfs_pool_chunk **v, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		uint64_t a = tfs_pool_chunk_addr(v[i]), e = a + tfs_pool_chunk_capacity(v[i]);

		if (e > tfs_pool_chunk_block_base(v[i]) + tfs_pool_chunk_block_size(v[i]))
			return 0;
		for (j = i + 1; j < n; j++) {
			uint64_t b = tfs_pool_chunk_addr(v[j]);

			if (b < e && a < b + tfs_pool_chunk_capacity(v[j]))
				return 0;
		}
	}
	return 1;
}

static void test_basics(void)
{
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_chunk *c[8], *x;
	struct tfs_pool_stats st;
	int i, rc, aligned = 1, nonzero = 0, same_block = 1;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	ok(p != NULL, "pool created with the default config");
	ok(tfs_pool_alloc(p, K(1), 0, 0, &x) == -EINVAL, "zero bytes is EINVAL");
	ok(tfs_pool_alloc(p, K(1), 1ull << 62, 0, &x) == -ENOSPC, "absurd size is ENOSPC");

	for (i = 0; i < 8; i++) {
		rc = tfs_pool_alloc(p, K(1), 1000 + i * 777, 0, &c[i]);
		if (rc)
			break;
		aligned &= tfs_pool_chunk_addr(c[i]) % 512 == 0;
		nonzero += tfs_pool_chunk_offset(c[i]) != 0;
		same_block &= tfs_pool_chunk_block_base(c[i]) == tfs_pool_chunk_block_base(c[0]);
	}
	ok(i == 8, "8 small allocations");
	ok(aligned, "small allocations are 512-byte aligned");
	ok(nonzero == 7 && same_block, "small allocations share one block at non-zero offsets");
	ok(tfs_pool_chunk_block_size(c[0]) == 2 * MiB, "small block is 2 MiB");
	ok(no_overlap(c, 8), "small allocations do not overlap");
	tfs_pool_get_stats(p, &st);
	ok(st.nallocs == 8 && st.nblocks == 1 && st.reserved == 2 * MiB, "stats count 8 in 1 block");
	ok(tfs_pool_chunk_bytes(c[3]) == 1000 + 3 * 777, "requested bytes kept");

	/* Free the middle ones, then a neighbour: they coalesce and the space is reused. */
	tfs_pool_free(p, c[2]);
	tfs_pool_free(p, c[4]);
	tfs_pool_free(p, c[3]);
	ok(pool_ok(p), "invariants hold after coalescing frees");
	rc = tfs_pool_alloc(p, K(1), 3 * 2048, 0, &x);
	ok(rc == 0 && tfs_pool_chunk_addr(x) == tfs_pool_chunk_addr(c[2]) && f.gets == 1,
	   "freed space is reused at the same place, no new block");
	tfs_pool_free(p, x);
	for (i = 0; i < 8; i++)
		if (i < 2 || i > 4)
			tfs_pool_free(p, c[i]);
	tfs_pool_get_stats(p, &st);
	ok(st.nallocs == 0 && st.used == 0 && st.cached == 2 * MiB && f.nblocks == 1,
	   "empty block stays cached");
	ok(pool_ok(p), "invariants hold when empty");
	tfs_pool_trim(p);
	tfs_pool_get_stats(p, &st);
	ok(st.reserved == 0 && f.nblocks == 0, "trim releases the cache");
	tfs_pool_destroy(p);
}

static void test_isolation(void)
{
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_chunk *v[600];
	struct tfs_pool_key keys[3] = { { 1, 0, 0 }, { 2, 0, 0 }, { 1, 1, 0 } };
	int i, n = 0, mixed = 0, j;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	rng_state = 7;
	for (i = 0; i < 600; i++) {
		uint64_t b = log_uniform(1, 32 * MiB);

		if (tfs_pool_alloc(p, keys[i % 3], b, 0, &v[n]) == 0)
			n++;
		if (i % 5 == 4 && n > 10) {     /* churn: free a random one */
			j = (int)(rng() % (uint64_t)n);
			tfs_pool_free(p, v[j]);
			v[j] = v[--n];
		}
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (tfs_pool_chunk_block_base(v[i]) == tfs_pool_chunk_block_base(v[j]) &&
			    !key_eq(tfs_pool_chunk_key(v[i]), tfs_pool_chunk_key(v[j])))
				mixed++;
	ok(mixed == 0, "allocations of different keys never share a block (%d live)", n);
	ok(no_overlap(v, (size_t)n), "no two live allocations overlap");
	ok(pool_ok(p), "invariants hold under churn of 3 keys");

	/* A freed block of one key is not reused by another key. */
	{
		struct tfs_pool_chunk *a, *b;
		uint64_t base;

		tfs_pool_alloc(p, K(9), 100 * MiB, 0, &a);
		base = tfs_pool_chunk_block_base(a);
		tfs_pool_free(p, a);
		tfs_pool_alloc(p, K(10), 100 * MiB, 0, &b);
		ok(tfs_pool_chunk_block_base(b) != base, "cached block of key 9 not given to key 10");
		tfs_pool_free(p, b);
		tfs_pool_alloc(p, K(9), 100 * MiB - 5000, 0, &a);
		ok(tfs_pool_chunk_block_base(a) == base, "cached block reused by its own key");
		tfs_pool_free(p, a);
	}
	for (i = 0; i < n; i++)
		tfs_pool_free(p, v[i]);
	ok(pool_ok(p), "invariants hold after freeing all");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0 && f.out == 0, "destroy releases every block");
}

static void test_large_and_cache(void)
{
	struct fake f;
	struct tfs_pool_config cfg;
	struct tfs_pool *p;
	struct tfs_pool_chunk *a, *b, *s, *v[20];
	struct tfs_pool_stats st;
	long gets;
	int i;

	fake_init(&f, 0);
	tfs_pool_config_default(&cfg);
	cfg.cache_max = 128 * MiB;
	p = tfs_pool_new(&cfg, &fake_ops, &f);
	tfs_pool_alloc(p, K(1), 33 * MiB + 5, 0, &a);
	ok(tfs_pool_chunk_offset(a) == 0 && tfs_pool_chunk_block_size(a) == 34 * MiB,
	   "large allocation: own block, rounded to 2 MiB");
	tfs_pool_alloc(p, K(1), 600 * KiB, 0, &s);
	ok(tfs_pool_chunk_block_base(s) != tfs_pool_chunk_block_base(a),
	   "small allocation does not pin the large block's tail");
	tfs_pool_alloc(p, K(1), 5 * MiB, 0, &b);
	ok(tfs_pool_chunk_block_size(b) == cfg.medium_block, "medium allocation in a segment");
	tfs_pool_free(p, s);
	tfs_pool_free(p, b);
	tfs_pool_free(p, a);
	tfs_pool_get_stats(p, &st);
	ok(st.cached == 34 * MiB + cfg.medium_block + cfg.small_block,
	   "all three blocks cached (%llu MiB)",
	   (unsigned long long)(st.cached / MiB));
	gets = f.gets;
	tfs_pool_alloc(p, K(1), 31 * MiB, 0, &a);
	ok(f.gets == gets && tfs_pool_chunk_block_size(a) == 34 * MiB,
	   "31 MiB reuses the cached 34 MiB block (within 1/8), not the medium segment");
	tfs_pool_free(p, a);
	tfs_pool_alloc(p, K(1), 17 * MiB, 0, &a);
	ok(f.gets == gets + 1 && tfs_pool_chunk_block_size(a) == 18 * MiB,
	   "a cached block much bigger than a large request is not split");
	tfs_pool_free(p, a);
	for (i = 0; i < 20; i++)
		tfs_pool_alloc(p, K(1), 10 * MiB, 0, &v[i]);
	for (i = 0; i < 20; i++)
		tfs_pool_free(p, v[i]);
	tfs_pool_get_stats(p, &st);
	ok(st.cached <= cfg.cache_max && st.reserved == st.cached,
	   "cache bounded by cache_max (%llu MiB cached)", (unsigned long long)(st.cached / MiB));
	ok(pool_ok(p), "invariants hold");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0, "destroy releases every block");
}

static void test_cap(void)
{
	struct fake f;
	struct tfs_pool_config cfg;
	struct tfs_pool *p;
	struct tfs_pool_chunk *v[16], *x, *m;
	struct tfs_pool_stats before, after;
	char chk[256];
	int n = 0, rc;

	fake_init(&f, 256 * MiB);
	tfs_pool_config_default(&cfg);
	p = tfs_pool_new(&cfg, &fake_ops, &f);
	while (n < 16 && (rc = tfs_pool_alloc(p, K(1), 32 * MiB, 0, &v[n])) == 0)
		n++;
	ok(n == 8 && rc == -ENOSPC, "cap of 256 MiB holds 8 x 32 MiB, the 9th is ENOSPC");
	tfs_pool_get_stats(p, &before);
	rc = tfs_pool_alloc(p, K(2), 4 * KiB, 0, &x);
	tfs_pool_get_stats(p, &after);
	ok(rc == -ENOSPC && !memcmp(&before, &after, sizeof(before)) && pool_ok(p),
	   "ENOSPC changes nothing");
	rc = tfs_pool_resize(p, v[0], 40 * MiB, &m);
	tfs_pool_get_stats(p, &after);
	ok(rc == -ENOSPC && m == NULL && tfs_pool_chunk_bytes(v[0]) == 32 * MiB &&
	   !memcmp(&before, &after, sizeof(before)), "resize past the cap: ENOSPC, unchanged");
	tfs_pool_free(p, v[--n]);
	rc = tfs_pool_alloc(p, K(2), 4 * KiB, 0, &x);
	tfs_pool_get_stats(p, &after);
	ok(rc == 0 && after.cached == 0 && f.out <= f.cap,
	   "cached block of key 1 trimmed so key 2 can allocate");
	tfs_pool_free(p, x);
	f.fail_next = 1;
	rc = tfs_pool_alloc(p, K(2), 4 * KiB, 0, &x);
	ok(rc == 0, "a failed block request is retried after trimming the cache");
	tfs_pool_free(p, x);
	f.fail_next = 2;
	tfs_pool_get_stats(p, &before);
	rc = tfs_pool_alloc(p, K(3), 4 * KiB, 0, &x);
	tfs_pool_get_stats(p, &after);
	ok(rc == -ENOSPC && before.nallocs == after.nallocs && before.used == after.used,
	   "two failures give ENOSPC");
	f.fail_next = 0;
	while (n)
		tfs_pool_free(p, v[--n]);
	ok(tfs_pool_check(p, chk, sizeof(chk)) == 0, "invariants hold after the cap tests");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0 && f.out == 0, "destroy releases every block");
}

static void test_resize(void)
{
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_chunk *c, *m, *o;
	struct tfs_pool_stats st;
	uint64_t addr, copied = 0, step, size;
	int rc, moves = 0, inplace = 0;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	tfs_pool_alloc(p, K(1), 10000, 0, &c);
	addr = tfs_pool_chunk_addr(c);
	rc = tfs_pool_resize(p, c, 20000, &m);
	ok(rc == 0 && !m && tfs_pool_chunk_addr(c) == addr && tfs_pool_chunk_bytes(c) == 20000,
	   "grows in place into the free space behind it");
	tfs_pool_alloc(p, K(1), 4096, 0, &o);   /* now right behind c */
	rc = tfs_pool_resize(p, c, 30000, &m);
	ok(rc == 0 && m && tfs_pool_chunk_bytes(m) == 30000 && tfs_pool_chunk_bytes(c) == 20000,
	   "moves when blocked, the old chunk untouched");
	tfs_pool_free(p, c);
	c = m;
	rc = tfs_pool_resize(p, c, 100, &m);
	ok(rc == 0 && !m && tfs_pool_chunk_capacity(c) == 512 && pool_ok(p),
	   "shrinks in place and gives the tail back");
	tfs_pool_free(p, c);
	tfs_pool_free(p, o);
	ok(pool_ok(p), "invariants hold after resizes");

	/* cp of 1 GiB in 1 MiB writes: the daemon allocates at the first write and resizes
	 * at each later one; the copies on moves must stay linear in the final size. */
	step = MiB;
	tfs_pool_alloc(p, K(2), step, 0, &c);
	for (size = 2 * step; size <= 1024 * MiB; size += step) {
		uint64_t old = tfs_pool_chunk_bytes(c);

		rc = tfs_pool_resize(p, c, size, &m);
		if (rc)
			break;
		if (m) {
			copied += old;
			moves++;
			tfs_pool_free(p, c);
			c = m;
		} else {
			inplace++;
		}
	}
	tfs_pool_get_stats(p, &st);
	ok(rc == 0 && tfs_pool_chunk_bytes(c) == 1024 * MiB, "grew to 1 GiB in 1 MiB steps");
	ok(moves <= 40 && copied <= 5 * 1024 * MiB,
	   "growth is geometric: %d moves, %.2f GiB copied, %d in place", moves,
	   (double)copied / (1024.0 * MiB), inplace);
	ok(tfs_pool_chunk_block_size(c) <= 1024 * MiB * 5 / 4 + 2 * MiB,
	   "final block %llu MiB for 1024 MiB (<= 1.25x)",
	   (unsigned long long)(tfs_pool_chunk_block_size(c) / MiB));
	tfs_pool_free(p, c);
	ok(pool_ok(p), "invariants hold after growth");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0, "destroy releases every block");
}

static void test_rekey(void)
{
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_chunk *a, *b, *c, *m;
	struct tfs_pool_stats st;
	uint64_t base;
	int rc;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	tfs_pool_alloc(p, K(1), 4096, 0, &a);
	tfs_pool_alloc(p, K(1), 4096, 0, &b);
	ok(tfs_pool_rekey(p, a, K(1)) == 0, "rekey to the same key is a no-op");
	ok(tfs_pool_rekey(p, a, K(2)) == -EBUSY, "rekey of a shared block is EBUSY");
	tfs_pool_free(p, b);
	base = tfs_pool_chunk_block_base(a);
	rc = tfs_pool_rekey(p, a, K(2));
	ok(rc == 0 && key_eq(tfs_pool_chunk_key(a), K(2)), "rekey of a lone allocation");
	tfs_pool_alloc(p, K(2), 4096, 0, &c);
	ok(tfs_pool_chunk_block_base(c) != base, "a retired block takes no new allocation");
	tfs_pool_alloc(p, K(1), 4096, 0, &b);
	ok(tfs_pool_chunk_block_base(b) != base, "nor for its old key");
	rc = tfs_pool_resize(p, a, 8192, &m);
	ok(rc == 0 && !m && pool_ok(p), "a retired allocation still grows in place");
	tfs_pool_free(p, a);
	tfs_pool_get_stats(p, &st);
	ok(st.nblocks == 2 && st.cached == 0, "freeing it releases the retired block at once");
	tfs_pool_free(p, b);
	tfs_pool_free(p, c);
	ok(pool_ok(p), "invariants hold after rekey");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0, "destroy releases every block");
}

/* The allocation-efficiency target, with the sizes and seed of the GPU benchmark. */
static void test_efficiency(void)
{
	static struct tfs_pool_chunk *v[10000];
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_stats st;
	uint64_t seed;
	int i, n;

	for (seed = 1; seed <= 3; seed++) {
		fake_init(&f, 0);
		p = tfs_pool_new(NULL, &fake_ops, &f);
		rng_state = seed;
		for (n = 0; n < 10000; n++)
			if (tfs_pool_alloc(p, K(1000), log_uniform(4 * KiB, 64 * MiB), 0, &v[n]))
				break;
		tfs_pool_get_stats(p, &st);
		ok(n == 10000 && (double)st.reserved <= 1.05 * (double)st.used,
		   "seed %llu: 10,000 tensors 4 KiB..64 MiB: %.2f GiB requested, reserved/requested "
		   "%.4f in %llu blocks", (unsigned long long)seed, (double)st.used / (1024.0 * MiB),
		   (double)st.reserved / (double)st.used, (unsigned long long)st.nblocks);
		for (i = 0; i < n; i++)
			tfs_pool_free(p, v[i]);
		tfs_pool_destroy(p);
	}

	/* Four owners interleaved: each key packs its own blocks. */
	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	rng_state = 1;
	for (n = 0; n < 10000; n++)
		if (tfs_pool_alloc(p, K((uint64_t)n % 4), log_uniform(4 * KiB, 64 * MiB), 0, &v[n]))
			break;
	tfs_pool_get_stats(p, &st);
	ok(n == 10000 && (double)st.reserved <= 1.05 * (double)st.used,
	   "4 owners: reserved/requested %.4f", (double)st.reserved / (double)st.used);
	for (i = 0; i < n; i++)
		tfs_pool_free(p, v[i]);
	tfs_pool_destroy(p);

	/* Steady churn: after many random frees and allocations the ratio stays sane. */
	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	rng_state = 99;
	for (n = 0; n < 2000; n++)
		tfs_pool_alloc(p, K(1), log_uniform(4 * KiB, 64 * MiB), 0, &v[n]);
	for (i = 0; i < 50000; i++) {
		int j = (int)(rng() % 2000);

		tfs_pool_free(p, v[j]);
		if (tfs_pool_alloc(p, K(1), log_uniform(4 * KiB, 64 * MiB), 0, &v[j]))
			break;
	}
	tfs_pool_get_stats(p, &st);
	ok(i == 50000 && pool_ok(p), "50,000 frees and allocations of 2,000 live tensors");
	ok((double)(st.reserved - st.cached) <= 1.15 * (double)st.used,
	   "after churn: reserved/requested %.4f (%.4f without the cache)",
	   (double)st.reserved / (double)st.used,
	   (double)(st.reserved - st.cached) / (double)st.used);
	for (i = 0; i < 2000; i++)
		tfs_pool_free(p, v[i]);
	tfs_pool_destroy(p);
	ok(f.nblocks == 0, "destroy releases every block");
}

struct stress_arg {
	struct tfs_pool *p;
	int id;
	int errors;
};

static void *stress_thread(void *argp)
{
	struct stress_arg *arg = argp;
	struct tfs_pool_chunk *v[64] = { 0 }, *m;
	uint64_t s = 0x1234567ull * (uint64_t)(arg->id + 1);
	int i;

	for (i = 0; i < 20000; i++) {
		int j;
		uint64_t size;

		s = s * 6364136223846793005ull + 1442695040888963407ull;
		j = (int)((s >> 33) % 64);
		size = ((s >> 13) % (4 * MiB)) + 1;
		if (v[j] && (s & 1)) {
			if (tfs_pool_resize(arg->p, v[j], size, &m))
				arg->errors++;
			else if (m) {
				tfs_pool_free(arg->p, v[j]);
				v[j] = m;
			}
		} else if (v[j]) {
			tfs_pool_free(arg->p, v[j]);
			v[j] = NULL;
		} else if (tfs_pool_alloc(arg->p, K((uint64_t)arg->id % 3), size, 0, &v[j])) {
			arg->errors++;
		}
	}
	for (i = 0; i < 64; i++)
		tfs_pool_free(arg->p, v[i]);
	return NULL;
}

static void test_threads(void)
{
	struct fake f;
	struct tfs_pool *p;
	pthread_t th[8];
	struct stress_arg args[8];
	struct tfs_pool_stats st;
	int i, errors = 0;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	for (i = 0; i < 8; i++) {
		args[i] = (struct stress_arg){ p, i, 0 };
		pthread_create(&th[i], NULL, stress_thread, &args[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		errors += args[i].errors;
	}
	tfs_pool_get_stats(p, &st);
	ok(errors == 0 && st.nallocs == 0 && st.used == 0 && pool_ok(p),
	   "8 threads x 20,000 alloc/resize/free: consistent, nothing live");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0 && f.out == 0, "destroy releases every block");
}

/* The pool that "crashes": its blocks stay out when it goes. */
static void keep_put(void *ctx, uint64_t base, uint64_t size, void *cookie)
{
	(void)ctx; (void)base; (void)size; (void)cookie;
}

static const struct tfs_pool_block_ops crash_ops = { fake_get, keep_put };

static void count_zero(void *ctx, uint64_t addr, uint64_t len)
{
	(void)addr;
	*(uint64_t *)ctx += len;
}

/* A restarted daemon takes back the chunks of a pool that died (tfs_pool_adopt): same
 * addresses, the rest of each block free, contradictions refused, everything given back
 * through put at the end. */
static void test_adopt(void)
{
	struct fake f;
	struct tfs_pool *p1, *p2;
	struct tfs_pool_chunk *c[6], *a[6], *x;
	uint64_t sizes[6] = { 4 * KiB, 100 * KiB, 700 * KiB, 3 * MiB, 20 * MiB, 40 * MiB + 512 };
	uint64_t freed = 0, reserved = 0;
	struct tfs_pool_stats st;
	int i, same = 1;

	struct { uint64_t base, size, off, addr; void *cookie; } r[6];

	fake_init(&f, 0);
	p1 = tfs_pool_new(NULL, &crash_ops, &f);
	for (i = 0; i < 6; i++) {
		tfs_pool_alloc(p1, K(i % 2 + 1), sizes[i], 0, &c[i]);
		r[i].base = tfs_pool_chunk_block_base(c[i]);
		r[i].size = tfs_pool_chunk_block_size(c[i]);
		r[i].off = tfs_pool_chunk_offset(c[i]);
		r[i].addr = tfs_pool_chunk_addr(c[i]);
		r[i].cookie = tfs_pool_chunk_cookie(c[i]);
	}
	tfs_pool_get_stats(p1, &st);
	reserved = st.reserved;
	/* The "crash": the pool goes, its blocks stay out; a new pool takes them back. */
	tfs_pool_destroy(p1);
	p2 = tfs_pool_new(NULL, &fake_ops, &f);
	for (i = 0; i < 6; i++) {
		int rc = tfs_pool_adopt(p2, K(i % 2 + 1), r[i].base, r[i].size, r[i].cookie,
					r[i].off, sizes[i], &a[i]);
		ok(rc == 0, "adopt chunk %d: %d", i, rc);
		if (rc == 0 && tfs_pool_chunk_addr(a[i]) != r[i].addr)
			same = 0;
	}
	ok(same, "adopted chunks keep their addresses");
	ok(pool_ok(p2), "adopted pool consistent");
	tfs_pool_get_stats(p2, &st);
	ok(st.reserved == reserved && st.nallocs == 6, "adopted blocks: %llu bytes (was %llu), "
	   "%llu allocations", (unsigned long long)st.reserved, (unsigned long long)reserved,
	   (unsigned long long)st.nallocs);
	ok(tfs_pool_adopt(p2, K(1), r[0].base, r[0].size, r[0].cookie,
			  r[0].off, 512, &x) == -EINVAL,
	   "a second record on a live range is refused");
	ok(tfs_pool_adopt(p2, K(9), r[2].base, r[2].size, r[2].cookie,
			  r[2].size - 512, 512, &x) == -EINVAL,
	   "another key in a block is refused");
	ok(tfs_pool_adopt(p2, K(1), r[0].base, r[0].size, r[0].cookie,
			  r[0].size - 512, 1024, &x) == -EINVAL,
	   "a range past the block's end is refused");
	ok(pool_ok(p2), "still consistent after the refusals");
	tfs_pool_adopt_end(p2, count_zero, &freed);
	ok(freed > st.reserved - st.used - 6 * 512 && freed <= st.reserved - st.used,
	   "adopt_end zeroes the free ranges (%llu bytes)", (unsigned long long)freed);
	ok(tfs_pool_alloc(p2, K(1), 8 * KiB, 0, &x) == 0 && pool_ok(p2) &&
	   tfs_pool_chunk_block_base(x) == tfs_pool_chunk_block_base(a[0]),
	   "a new small allocation fills the adopted block");
	tfs_pool_free(p2, x);
	for (i = 0; i < 6; i++)
		tfs_pool_free(p2, a[i]);
	tfs_pool_trim(p2);
	tfs_pool_destroy(p2);
	ok(f.nblocks == 0, "every adopted block went back through put (%ld out)", f.nblocks);
}

static int same_key(uint32_t u1, uint32_t g1, uint32_t m1, uint64_t d1, uint32_t u2,
		    uint32_t g2, uint32_t m2, uint64_t d2)
{
	return key_eq(tfs_pool_reader_key(u1, g1, m1, d1), tfs_pool_reader_key(u2, g2, m2, d2));
}

static unsigned narenas(struct tfs_pool *p)
{
	unsigned n = 0;

	for (struct arena *ar = p->arenas; ar; ar = ar->next)
		n++;
	return n;
}

/* Issue 15 item 9: whoever reads one tensor may map every tensor of its block, so tensors
 * share a block only when the same users can read both through the mount. */
static void test_reader_key(void)
{
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_chunk *pub, *priv, *pub2;
	unsigned n;
	int i;

	ok(same_key(0, 0, 0644, 7, 0, 0, 0644, 7), "one directory, one owner, 0644: one key");
	ok(!same_key(0, 0, 0644, 7, 0, 0, 0644, 8),
	   "0644 tensors of one owner in two directories: two keys");
	ok(!same_key(0, 0, 0644, 7, 1, 0, 0644, 7), "two owners: two keys");
	ok(!same_key(0, 0, 0644, 7, 0, 0, 0640, 7), "0644 and 0640: two keys");
	ok(!same_key(0, 10, 0640, 7, 0, 11, 0640, 7), "0640 of two groups: two keys");
	ok(!same_key(0, 10, 0604, 7, 0, 11, 0604, 7),
	   "0604 of two groups (the group is shut out): two keys");
	ok(same_key(0, 10, 0600, 7, 0, 11, 0600, 7), "0600 of two groups: one key");
	ok(same_key(0, 10, 0644, 7, 0, 11, 0644, 7), "0644 of two groups: one key");
	ok(!same_key(0, 0, 0600, 7, 0, 0, 0200, 7), "0600 and 0200: two keys");
	ok(same_key(0, 0, 0755, 7, 0, 0, 0644, 7), "execute and write bits do not matter");
	/* Records of an older daemon (no dir) adopt under that daemon's keys. */
	ok(key_eq(tfs_pool_legacy_key(5, 6, 0644), tfs_pool_legacy_key(5, 7, 0604)) &&
	   key_eq(tfs_pool_legacy_key(5, 6, 0600), tfs_pool_legacy_key(5, 7, 0400)) &&
	   !key_eq(tfs_pool_legacy_key(5, 6, 0640), tfs_pool_legacy_key(5, 7, 0640)),
	   "a legacy key is the old owner/readers key");
	ok(!key_eq(tfs_pool_legacy_key(5, 6, 0644), tfs_pool_reader_key(5, 6, 0644, 0)) &&
	   !key_eq(tfs_pool_legacy_key(0, 0, 0600), tfs_pool_reader_key(0, 0, 0600, 0)),
	   "a legacy key never equals a directory key");

	/* The case of the issue: root's 0644 tensors, one in a 0700 directory, one in a
	 * public one, never in one block; a second public one shares the first's. */
	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	ok(tfs_pool_alloc(p, tfs_pool_reader_key(0, 0, 0644, 100), 4 * KiB, 0, &pub) == 0 &&
	   tfs_pool_alloc(p, tfs_pool_reader_key(0, 0, 0644, 200), 4 * KiB, 0, &priv) == 0 &&
	   tfs_pool_alloc(p, tfs_pool_reader_key(0, 0, 0644, 100), 4 * KiB, 0, &pub2) == 0,
	   "three small tensors of root in two directories");
	ok(tfs_pool_chunk_block_base(pub) != tfs_pool_chunk_block_base(priv),
	   "the public and the private directory's tensors are in two blocks");
	ok(tfs_pool_chunk_block_base(pub) == tfs_pool_chunk_block_base(pub2),
	   "two tensors of one directory share a block");
	/* A rename into the public directory: a tensor sharing its block moves (EBUSY tells
	 * the backend to), a lone one takes its block along, retired. */
	ok(tfs_pool_rekey(p, pub2, tfs_pool_reader_key(0, 0, 0644, 200)) == -EBUSY,
	   "a tensor that shares its block cannot take it to another directory");
	ok(tfs_pool_rekey(p, priv, tfs_pool_reader_key(0, 0, 0644, 100)) == 0 &&
	   tfs_pool_chunk_block_base(priv) != tfs_pool_chunk_block_base(pub),
	   "a lone tensor's block goes with it, and stays apart");
	tfs_pool_free(p, pub);
	tfs_pool_free(p, priv);
	tfs_pool_free(p, pub2);

	/* Keys come and go with directories: arenas without a block do not pile up. */
	for (i = 0; i < 1000; i++) {
		struct tfs_pool_chunk *c;

		if (tfs_pool_alloc(p, tfs_pool_reader_key(0, 0, 0644, 1000 + (uint64_t)i), 4 * KiB,
				   0, &c) == 0)
			tfs_pool_free(p, c);
	}
	tfs_pool_trim(p);
	i = tfs_pool_alloc(p, K(1), 4 * KiB, 0, &pub);
	n = narenas(p);
	ok(i == 0 && n == 1, "1,000 directories come and go: %u arena left", n);
	tfs_pool_free(p, pub);
	ok(pool_ok(p), "invariants hold");
	tfs_pool_destroy(p);
	ok(f.nblocks == 0, "no block leaked");
}

/* What a key per directory costs: the 10,000-tensor model spread over directories. */
static void test_dir_efficiency(void)
{
	static struct tfs_pool_chunk *v[10000];
	static const unsigned ndirs[] = { 1, 10, 100, 1000, 10000 };
	struct fake f;
	struct tfs_pool *p;
	struct tfs_pool_stats st;
	int i, n;

	for (unsigned k = 0; k < sizeof(ndirs) / sizeof(ndirs[0]); k++) {
		double r;

		fake_init(&f, 0);
		p = tfs_pool_new(NULL, &fake_ops, &f);
		rng_state = 1;
		for (n = 0; n < 10000; n++)
			if (tfs_pool_alloc(p, tfs_pool_reader_key(1000, 1000, 0644,
								  (uint64_t)n % ndirs[k]),
					   log_uniform(4 * KiB, 64 * MiB), 0, &v[n]))
				break;
		tfs_pool_get_stats(p, &st);
		r = (double)st.reserved / (double)st.used;
		/* Each directory pays at most one partly used small and medium block (34 MiB)
		 * on top of what one directory needs. */
		ok(n == 10000 && st.reserved <= st.used * 105 / 100 + ndirs[k] * 34 * MiB,
		   "10,000 tensors 4 KiB..64 MiB in %u directories: reserved/requested %.4f "
		   "(%.2f GiB requested)", ndirs[k], r, (double)st.used / (1024.0 * MiB));
		for (i = 0; i < n; i++)
			tfs_pool_free(p, v[i]);
		tfs_pool_destroy(p);
	}

	/* Small tensors of one directory still pack: 1,000 of 4..64 KiB, among 1,000 of
	 * another directory, take a few 2 MiB blocks each. */
	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &fake_ops, &f);
	rng_state = 5;
	for (n = 0; n < 2000; n++)
		if (tfs_pool_alloc(p, tfs_pool_reader_key(0, 0, 0644, (uint64_t)n % 2),
				   log_uniform(4 * KiB, 64 * KiB), 0, &v[n]))
			break;
	tfs_pool_get_stats(p, &st);
	ok(n == 2000 && st.reserved <= st.used + 2 * 2 * MiB,
	   "2,000 small tensors in 2 directories: %llu blocks for %.1f MiB requested",
	   (unsigned long long)st.nblocks, (double)st.used / MiB);
	for (i = 0; i < n; i++)
		tfs_pool_free(p, v[i]);
	tfs_pool_destroy(p);
}

/* A backend that hands out runs (a preallocated reserve, pool.h): every block it gives is
 * four times what was asked. */
static int run_get(void *ctx, uint64_t *size, uint64_t *base, void **cookie)
{
	*size *= 4;
	return fake_get(ctx, size, base, cookie);
}

static const struct tfs_pool_block_ops run_ops = { run_get, keep_put };

/* Blocks larger than asked (ops.get's *size) are carved whole, and a tensor adopted at an
 * offset of a large block leaves the free space in front of it indexed where the check
 * wants it (it stayed indexed as a whole free block: found by tfs_pool_check). */
static void test_runs(void)
{
	struct tfs_pool_config cfg;
	struct tfs_pool *p;
	struct tfs_pool_chunk *a, *b, *c, *x;
	struct tfs_pool_stats st;
	struct fake f;

	fake_init(&f, 0);
	tfs_pool_config_prealloc(&cfg, 2 * MiB);
	p = tfs_pool_new(&cfg, &run_ops, &f);
	ok(tfs_pool_alloc(p, K(1), 4 * KiB, 0, &a) == 0 &&
	   tfs_pool_chunk_block_size(a) == 8 * MiB, "a block four times the segment asked for");
	ok(tfs_pool_alloc(p, K(1), 5 * MiB, 0, &b) == 0 && f.gets == 1 &&
	   tfs_pool_chunk_block_base(b) == tfs_pool_chunk_block_base(a),
	   "a tensor larger than a segment goes into its free rest: no second block");
	ok(tfs_pool_alloc(p, K(1), 3 * MiB, 0, &c) == 0 && f.gets == 2 &&
	   tfs_pool_chunk_block_size(c) == 16 * MiB, "one that does not fit: a run of its own");
	ok(pool_ok(p), "consistent");
	ok(tfs_pool_grow(p, c, 5 * MiB) == 0 && tfs_pool_chunk_capacity(c) == 5 * MiB &&
	   f.gets == 2 && pool_ok(p), "grown in place into the free space behind it");
	ok(tfs_pool_grow(p, a, 8 * KiB) == -ENOSPC && tfs_pool_chunk_capacity(a) == 4 * KiB &&
	   tfs_pool_chunk_bytes(a) == 4 * KiB && pool_ok(p),
	   "no free space behind it: -ENOSPC, nothing changed, nothing allocated");
	tfs_pool_free(p, a);
	tfs_pool_free(p, b);
	tfs_pool_free(p, c);
	tfs_pool_get_stats(p, &st);
	ok(st.nblocks == 2 && st.cached == 24 * MiB && pool_ok(p),
	   "empty runs stay with their key");
	tfs_pool_destroy(p);

	p = tfs_pool_new(&cfg, &fake_ops, &f);
	ok(tfs_pool_adopt(p, K(1), 1ull << 44, 8 * MiB, (void *)(uintptr_t)(1ull << 44),
			  2 * MiB, 4 * MiB, &a) == 0 && pool_ok(p),
	   "a tensor adopted at an offset of a run: consistent");
	ok(tfs_pool_adopt(p, K(1), 1ull << 44, 8 * MiB, (void *)(uintptr_t)(1ull << 44),
			  0, 1 * MiB, &b) == 0 && pool_ok(p), "a second one in front of it");
	ok(tfs_pool_alloc(p, K(1), 1 * MiB, 0, &x) == 0 && f.gets == 2 &&
	   tfs_pool_chunk_block_base(x) == 1ull << 44 && pool_ok(p),
	   "a new tensor of its key fills the run's free space");
	tfs_pool_free(p, x);
	tfs_pool_free(p, a);
	tfs_pool_free(p, b);
	ok(pool_ok(p), "consistent once all go");
	p->ops.put = keep_put;  /* the adopted run was never fake_get's */
	tfs_pool_destroy(p);
}

/* 5.5 MiB tensors of key 1 into v until the first that starts a 256 MiB block (or max, or
 * a failure): how many were made. */
static int until_256(struct tfs_pool *q, struct tfs_pool_chunk **v, int max)
{
	int n = 0;

	while (n < max && tfs_pool_alloc(q, K(1), 5632 * KiB, 0, &v[n]) == 0)
		if (tfs_pool_chunk_block_size(v[n++]) == 256 * MiB)
			break;
	return n;
}

/* A key's medium blocks double with each one it holds (up to medium_grow times), so a
 * model's layers take a few blocks; another key starts small again; a key that gives its
 * blocks back asks small again; a restart classes the larger ones as medium. */
static void test_medium_grow(void)
{
	static struct { uint64_t base, size, off; void *cookie; } r[400];
	uint64_t want[] = { 32, 32, 32, 32, 64, 64, 128, 128, 256, 256, 256 }, blocks[16] = { 0 };
	struct tfs_pool_chunk *v[400], *o, *x, *y;
	struct tfs_pool *p, *p2, *q;
	struct tfs_pool_stats st;
	int n = 0, nb = 0, grew = 1, adopted = 1;
	struct fake f, g;

	fake_init(&f, 0);
	p = tfs_pool_new(NULL, &crash_ops, &f);
	/* 5.5 MiB tensors (a layer's MLP weight in bf16) until a twelfth block is asked for */
	while (n < 400 && tfs_pool_alloc(p, K(1), 5632 * KiB, 0, &v[n]) == 0) {
		r[n].base = tfs_pool_chunk_block_base(v[n]);
		r[n].size = tfs_pool_chunk_block_size(v[n]);
		r[n].off = tfs_pool_chunk_offset(v[n]);
		r[n].cookie = tfs_pool_chunk_cookie(v[n]);
		if (r[n].off == 0 && nb < 12)
			blocks[nb++] = r[n].size;
		n++;
		if (nb == 12)
			break;
	}
	for (int i = 0; i < 11; i++)
		if (blocks[i] != want[i] * MiB)
			grew = 0;
	ok(grew, "a key's medium blocks: 4 x 32, 2 x 64, 2 x 128, then 256 MiB (got %llu, %llu, "
	   "%llu, %llu, %llu, %llu, %llu, %llu, %llu MiB)", (unsigned long long)blocks[0] / MiB,
	   (unsigned long long)blocks[1] / MiB, (unsigned long long)blocks[2] / MiB,
	   (unsigned long long)blocks[3] / MiB, (unsigned long long)blocks[4] / MiB,
	   (unsigned long long)blocks[5] / MiB, (unsigned long long)blocks[6] / MiB,
	   (unsigned long long)blocks[7] / MiB, (unsigned long long)blocks[8] / MiB);
	ok(tfs_pool_alloc(p, K(2), 5632 * KiB, 0, &o) == 0 &&
	   tfs_pool_chunk_block_size(o) == 32 * MiB, "another key's first medium block: 32 MiB");
	tfs_pool_get_stats(p, &st);
	ok(st.reserved <= st.used * 3 / 2 + 64 * MiB, "reserved %llu MiB for %llu MiB used",
	   (unsigned long long)st.reserved / MiB, (unsigned long long)st.used / MiB);
	/* The "crash": the pool goes, its blocks stay out; a new pool takes key 1's back. */
	tfs_pool_destroy(p);
	p2 = tfs_pool_new(NULL, &fake_ops, &f);
	for (int i = 0; i < n; i++) {
		struct tfs_pool_chunk *a;

		if (tfs_pool_adopt(p2, K(1), r[i].base, r[i].size, r[i].cookie, r[i].off,
				   5632 * KiB, &a))
			adopted = 0;
	}
	/* A medium tensor goes into the adopted blocks' free space only if they are medium:
	 * the last block made (256 MiB) has room, so no block is asked for. */
	{
		long gets = f.gets;
		int got = tfs_pool_alloc(p2, K(1), 5632 * KiB, 0, &x) == 0;

		ok(adopted && got && f.gets == gets && tfs_pool_chunk_block_size(x) == 256 * MiB,
		   "adopted 64-256 MiB blocks are medium: a medium tensor goes into their free "
		   "space (%ld blocks asked for)", f.gets - gets);
	}
	ok(pool_ok(p2), "invariants hold after adopting grown medium blocks");
	tfs_pool_destroy(p2);

	/* A large tensor whose block (rounded to 2 MiB) has a medium block's size stays large
	 * after a restart: no medium tensor is put beside it. */
	{
		uint64_t base;
		struct tfs_pool_chunk *l;
		void *ck;

		fake_init(&g, 0);
		q = tfs_pool_new(NULL, &crash_ops, &g);
		ok(tfs_pool_alloc(q, K(1), 63 * MiB, 0, &l) == 0 &&
		   tfs_pool_chunk_block_size(l) == 64 * MiB, "a 63 MiB tensor: a 64 MiB block");
		base = tfs_pool_chunk_block_base(l);
		ck = tfs_pool_chunk_cookie(l);
		tfs_pool_destroy(q);
		q = tfs_pool_new(NULL, &fake_ops, &g);
		ok(tfs_pool_adopt(q, K(1), base, 64 * MiB, ck, 0, 40 * MiB, &l) == 0 &&
		   tfs_pool_alloc(q, K(1), 5632 * KiB, 0, &y) == 0 &&
		   tfs_pool_chunk_block_base(y) != base,
		   "adopted, a 64 MiB block of a 40 MiB tensor is large: a medium tensor goes "
		   "elsewhere");
		ok(pool_ok(q), "invariants hold");
		tfs_pool_free(q, y);
		tfs_pool_free(q, l);
		tfs_pool_destroy(q);
	}

	/* A device with less left than the grown size: smaller medium blocks, down to 32 MiB,
	 * before ENOSPC. */
	fake_init(&g, 700 * MiB);
	q = tfs_pool_new(NULL, &fake_ops, &g);
	n = 0;
	while (n < 400 && tfs_pool_alloc(q, K(1), 5632 * KiB, 0, &v[n]) == 0)
		n++;
	ok(g.out > 660 * MiB, "capped at 700 MiB: medium blocks fill %llu MiB of it before ENOSPC",
	   (unsigned long long)g.out / MiB);
	ok(pool_ok(q), "invariants hold");
	while (n > 0)
		tfs_pool_free(q, v[--n]);
	tfs_pool_destroy(q);
	ok(g.nblocks == 0 && g.out == 0, "destroy releases every block");

	/* A rename of a lone tensor retires its (grown) block into the new key: it takes no
	 * new tensor there, so it does not make the new key's first block larger. */
	fake_init(&g, 0);
	q = tfs_pool_new(NULL, &fake_ops, &g);
	n = until_256(q, v, 400) - 1;       /* v[n]: alone at the start of its block */
	{
		/* Each call first: ok()'s message arguments are evaluated in any order. */
		int moved = tfs_pool_rekey(q, v[n], K(3)) == 0;
		int got = moved && tfs_pool_alloc(q, K(3), 4 * MiB, 0, &y) == 0;
		uint64_t bs = got ? tfs_pool_chunk_block_size(y) : 0;

		ok(got && bs == 32 * MiB, "a retired 256 MiB block does not grow its new key's "
		   "first medium block (%llu MiB)", (unsigned long long)bs / MiB);
	}
	ok(pool_ok(q), "invariants hold after the rekey");
	tfs_pool_free(q, y);
	tfs_pool_free(q, v[n]);
	while (n > 0)
		tfs_pool_free(q, v[--n]);
	tfs_pool_destroy(q);
	ok(g.nblocks == 0 && g.out == 0, "destroy releases every block");

	fake_init(&g, 0);
	q = tfs_pool_new(NULL, &fake_ops, &g);
	n = until_256(q, v, 400);
	while (n > 0)
		tfs_pool_free(q, v[--n]);
	tfs_pool_trim(q);
	ok(tfs_pool_alloc(q, K(1), 5632 * KiB, 0, &y) == 0 &&
	   tfs_pool_chunk_block_size(y) == 32 * MiB,
	   "a key that gave its blocks back starts at 32 MiB again");
	tfs_pool_free(q, y);
	tfs_pool_destroy(q);
	ok(g.nblocks == 0 && g.out == 0, "destroy releases every block");
}

int main(void)
{
	test_adopt();
	test_runs();
	test_basics();
	test_isolation();
	test_large_and_cache();
	test_cap();
	test_resize();
	test_rekey();
	test_efficiency();
	test_reader_key();
	test_dir_efficiency();
	test_threads();
	test_medium_grow();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
