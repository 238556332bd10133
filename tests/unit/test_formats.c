/* Unit tests of the .npy and .safetensors parsers and writers of libtensorfs (lib/fmt_*.c:
 * no I/O, no daemon). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "formats.h"

static int fails;

static void check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	if (!cond)
		fails++;
}

/* An .npy v1 header around a dict literal, padded as numpy does. */
static size_t npy_make(uint8_t *buf, const char *dict)
{
	size_t len = strlen(dict), total = (10 + len + 1 + 63) / 64 * 64;

	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)((total - 10) & 0xff);
	buf[9] = (uint8_t)((total - 10) >> 8);
	memcpy(buf + 10, dict, len);
	memset(buf + 10 + len, ' ', total - 10 - len - 1);
	buf[total - 1] = '\n';
	return total;
}

static int npy_try(const char *dict, struct npy_info *ni)
{
	uint8_t buf[512];
	size_t n = npy_make(buf, dict);
	char why[256];

	return tfs_npy_parse(buf, n, ni, why, sizeof(why));
}

static void test_npy(void)
{
	struct npy_info ni;
	uint8_t buf[512], buf2[512];
	uint64_t hs;
	long n;
	size_t m;

	check(npy_try("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", &ni) == 0 &&
	      ni.dtype == TFS_F32 && ni.shape.ndim == 2 && ni.shape.dims[0] == 2 &&
	      ni.shape.dims[1] == 3 && ni.bytes == 24 && ni.data_off == 128,
	      "npy: f32 (2, 3)");
	check(npy_try("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", &ni) == 0 &&
	      ni.dtype == TFS_U8 && ni.shape.ndim == 1 && ni.bytes == 5, "npy: u8 (5,)");
	check(npy_try("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &ni) == 0 &&
	      ni.shape.ndim == 0 && ni.bytes == 8, "npy: scalar ()");
	check(npy_try("{'shape': (4,), 'fortran_order': False, 'descr': '|b1'}", &ni) == 0 &&
	      ni.dtype == TFS_BOOL && ni.bytes == 4, "npy: keys in any order, no trailing comma");
	check(npy_try("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (3, 0)}", &ni) == 0 &&
	      ni.dtype == TFS_I64 && ni.bytes == 0, "npy: double quotes, zero dim");
	check(npy_try("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &ni) == -ENOTSUP,
	      "npy: Fortran order refused");
	check(npy_try("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", &ni) == -ENOTSUP,
	      "npy: big-endian refused");
	check(npy_try("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", &ni) == -ENOTSUP,
	      "npy: complex refused");
	check(npy_try("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", &ni) < 0,
	      "npy: structured dtype refused");
	check(npy_try("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", &ni) == -EBADMSG,
	      "npy: negative dim refused");
	check(npy_try("{'descr': '<f4', 'fortran_order': False, }", &ni) == -EBADMSG,
	      "npy: missing shape refused");
	check(npy_try("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", &ni) ==
	      -EBADMSG, "npy: unknown key refused");
	check(npy_try("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }",
		      &ni) == -EBADMSG, "npy: more than 16 dims refused");
	check(npy_try("{'descr': '<u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
		      &ni) == -EBADMSG, "npy: byte count overflow refused");
	check(npy_try("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", &ni) ==
	      -EBADMSG, "npy: garbage after dict refused");
	check(tfs_npy_header_size((const uint8_t *)"GARBAGE!!!!!", 12, &hs) == -EBADMSG,
	      "npy: bad magic refused");
	m = npy_make(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
	check(tfs_npy_parse(buf, m - 10, &ni, NULL, 0) == -EBADMSG, "npy: truncated header refused");

	/* writer: the bytes numpy.save writes */
	{
		struct tfs_shape sh = { 2, { 2, 3 } };

		n = tfs_npy_format(TFS_F32, &sh, buf2, sizeof(buf2));
		m = npy_make(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
		check(n == (long)m && memcmp(buf, buf2, m) == 0, "npy: writer matches numpy (2-D)");
		tfs_shape_1d(&sh, 7);
		n = tfs_npy_format(TFS_U8, &sh, buf2, sizeof(buf2));
		m = npy_make(buf, "{'descr': '|u1', 'fortran_order': False, 'shape': (7,), }");
		check(n == (long)m && memcmp(buf, buf2, m) == 0, "npy: writer matches numpy (1-D)");
		sh.ndim = 0;
		n = tfs_npy_format(TFS_F64, &sh, buf2, sizeof(buf2));
		check(n > 0 && tfs_npy_parse(buf2, (size_t)n, &ni, NULL, 0) == 0 && ni.shape.ndim == 0 &&
		      ni.dtype == TFS_F64 && n % 64 == 0, "npy: scalar round trip, 64-byte aligned");
		check(tfs_npy_format(TFS_BF16, &sh, buf2, sizeof(buf2)) == -ENOTSUP,
		      "npy: bf16 has no numpy dtype");
		check(tfs_npy_format(TFS_F32, &sh, buf2, 16) == -ENOSPC, "npy: small buffer refused");
	}
}

static int st_try(const char *json, uint64_t data, struct st_header *h)
{
	char why[256];
	int rc = tfs_st_parse(json, strlen(json), data, h, why, sizeof(why));

	if (rc)
		printf("# %s\n", why);
	return rc;
}

static void test_st(void)
{
	struct st_header h;
	uint8_t first[8] = { 16, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t hl;
	uint8_t *out;
	long n;

	check(st_try("{\"__metadata__\":{\"format\":\"pt\"},"
		     "\"b\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
		     "\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]}}", 32, &h) == 0 &&
	      h.n == 2 && !strcmp(h.e[0].name, "b") && h.e[0].dtype == TFS_F32 &&
	      h.e[1].dtype == TFS_BF16 && h.e[1].begin == 24 && h.metadata &&
	      !strcmp(h.metadata, "{\"format\":\"pt\"}"), "st: valid header parsed");
	tfs_st_free(&h);
	check(st_try("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[],\"data_offsets\":[0,1]}}", 1, &h) == 0 &&
	      h.e[0].dtype == TFS_F8E4M3 && h.e[0].shape.ndim == 0, "st: scalar fp8");
	tfs_st_free(&h);
	check(st_try("{}", 0, &h) == 0 && h.n == 0, "st: empty file");
	tfs_st_free(&h);
	check(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, &h) == -EBADMSG,
	      "st: offsets past the end refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
		     "\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}", 12, &h) == -EBADMSG,
	      "st: overlapping ranges refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", 8, &h) == -EBADMSG,
	      "st: hole refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 8, &h) == -EBADMSG,
	      "st: trailing data refused");
	check(st_try("{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, &h) == -ENOTSUP,
	      "st: unknown dtype refused");
	check(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, &h) == -EBADMSG,
	      "st: size not matching shape refused");
	check(st_try("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, &h) == -EBADMSG,
	      "st: negative dim refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,0]}}", 2, &h) == -EBADMSG,
	      "st: begin > end refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[2]}}", 2, &h) == -EBADMSG,
	      "st: missing data_offsets refused");
	check(st_try("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
		     "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2, &h) == -EBADMSG,
	      "st: duplicate name refused");
	check(st_try("[1,2]", 0, &h) == -EBADMSG, "st: non-object header refused");
	check(st_try("{\"a\":", 0, &h) == -EBADMSG, "st: truncated JSON refused");
	check(tfs_st_header_len(first, 24, &hl) == 0 && hl == 16, "st: header length fits");
	check(tfs_st_header_len(first, 23, &hl) == -EBADMSG, "st: header length larger than the file refused");
	check(tfs_st_header_len(first, 4, &hl) == -EBADMSG, "st: file shorter than 8 bytes refused");
	{
		uint8_t huge[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		check(tfs_st_header_len(huge, 1000, &hl) == -EBADMSG, "st: 2^64-1 header length refused");
	}

	/* writer: layout like the safetensors library, then parse back */
	{
		struct st_entry e[3] = {
			{ .name = strdup("z"), .dtype = TFS_U8, .shape = { 1, { 3 } } },
			{ .name = strdup("b"), .dtype = TFS_F32, .shape = { 2, { 2, 2 } } },
			{ .name = strdup("a"), .dtype = TFS_F32, .shape = { 0, { 0 } } },
		};
		struct st_header w = { 3, malloc(sizeof(e)), strdup("{\"k\":\"v\"}") };
		const char *want = "{\"__metadata__\":{\"k\":\"v\"},"
			"\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
			"\"b\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[4,20]},"
			"\"z\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[20,23]}}";
		size_t wl = strlen(want), padded = (wl + 7) / 8 * 8;

		memcpy(w.e, e, sizeof(e));
		tfs_st_layout(&w);
		n = tfs_st_format(&w, &out);
		check(n == (long)(8 + padded) && out[0] == padded && out[1] == 0 &&
		      !memcmp(out + 8, want, wl) && (padded == wl || out[8 + wl] == ' '),
		      "st: writer orders by itemsize then name, pads with spaces");
		check(n > 0 && tfs_st_parse((char *)out + 8, (size_t)n - 8, 23, &h, NULL, 0) == 0 &&
		      h.n == 3 && !strcmp(h.e[2].name, "z"), "st: written header parses back");
		tfs_st_free(&h);
		free(out);
		tfs_st_free(&w);
	}
	check(tfs_st_dtype_name(TFS_BF16) && !strcmp(tfs_st_dtype_name(TFS_BF16), "BF16"), "st: BF16 name");
}

int main(void)
{
	test_npy();
	test_st();
	return fails ? 1 : 0;
}
