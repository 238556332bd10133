/* Unit tests of the pure parsers and codecs of lib/: dtype, shape, strutil, meta, cmd and
 * the Redis URL parser. No server, no I/O. One line per check: "ok - <desc>" or
 * "not ok - <desc> (file:line)"; exit status 1 when any check failed. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "dtype.h"
#include "fileio.h"
#include "meta.h"
#include "redisconn.h"
#include "secret.h"
#include "shape.h"
#include "strutil.h"
#include "tensorfs.h"

static int checks, failures;

#define CHECK(cond, desc) check_one(!!(cond), (desc), __FILE__, __LINE__)

static void check_one(int cond, const char *desc, const char *file, int line)
{
	checks++;
	if (cond) {
		printf("ok - %s\n", desc);
	} else {
		failures++;
		printf("not ok - %s (%s:%d)\n", desc, file, line);
	}
}

/* The text with control characters as escapes, for a one-line description. */
static const char *esc(const char *s)
{
	static char buf[4][160];
	static int slot;
	char *out = buf[slot++ & 3];
	size_t n = 0;

	for (; *s && n + 5 < sizeof(buf[0]); s++) {
		if (*s == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else if ((unsigned char)*s < 0x20) {
			n += (size_t)snprintf(out + n, sizeof(buf[0]) - n, "\\x%02x", (unsigned char)*s);
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return out;
}

/* Length-aware wrappers so the checks read as one line. */
static int dt_parse(const char *s, tfs_dtype *out)
{
	return tfs_dtype_parse(s, strlen(s), out);
}

static int sh_parse(const char *s, struct tfs_shape *out)
{
	return tfs_shape_parse(s, strlen(s), out);
}

static int u64_parse(const char *s, uint64_t *out)
{
	return tfs_parse_u64(s, strlen(s), out);
}

static int i64_parse(const char *s, int64_t *out)
{
	return tfs_parse_i64(s, strlen(s), out);
}

static int cmd_parse(const char *json, struct tfs_cmd *cmd, char *err, size_t errlen)
{
	return tfs_cmd_parse(json, strlen(json), cmd, err, errlen);
}

/* ------------------------------------------------------------------ dtype */

static void test_dtype(void)
{
	static const struct { const char *name; tfs_dtype dt; size_t size; uint8_t code; } canon[] = {
		{ "bool", TFS_BOOL, 1, 6 }, { "u8", TFS_U8, 1, 1 },    { "i8", TFS_I8, 1, 0 },
		{ "u16", TFS_U16, 2, 1 },   { "i16", TFS_I16, 2, 0 },  { "u32", TFS_U32, 4, 1 },
		{ "i32", TFS_I32, 4, 0 },   { "u64", TFS_U64, 8, 1 },  { "i64", TFS_I64, 8, 0 },
		{ "f16", TFS_F16, 2, 2 },   { "bf16", TFS_BF16, 2, 4 }, { "f32", TFS_F32, 4, 2 },
		{ "f64", TFS_F64, 8, 2 },   { "f8e4m3", TFS_F8E4M3, 1, 0xff },
		{ "f8e5m2", TFS_F8E5M2, 1, 0xff },
	};
	/* Aliases whose meaning numpy and torch agree on. */
	static const struct { const char *name; tfs_dtype dt; } alias[] = {
		{ "bool_", TFS_BOOL },   { "uint8", TFS_U8 },     { "ubyte", TFS_U8 },
		{ "int8", TFS_I8 },      { "byte", TFS_I8 },      { "uint16", TFS_U16 },
		{ "ushort", TFS_U16 },   { "int16", TFS_I16 },    { "short", TFS_I16 },
		{ "uint32", TFS_U32 },   { "int32", TFS_I32 },    { "uint64", TFS_U64 },
		{ "int64", TFS_I64 },    { "long", TFS_I64 },     { "float16", TFS_F16 },
		{ "half", TFS_F16 },     { "bfloat16", TFS_BF16 }, { "float32", TFS_F32 },
		{ "float64", TFS_F64 },  { "double", TFS_F64 },   { "float8_e4m3fn", TFS_F8E4M3 },
		{ "float8_e5m2", TFS_F8E5M2 },
	};
	static const char *bad[] = {
		"", " ", "\n", "f32x", "xf32", "f3", "F32x", "f 32", "int7", "uint8_t",
		"complex64", "f32\nf32", "[f32]",
	};
	char desc[160];
	tfs_dtype dt;
	uint8_t code, bits;
	int rc;

	for (size_t i = 0; i < sizeof(canon) / sizeof(canon[0]); i++) {
		dt = TFS_DTYPE_COUNT;
		rc = dt_parse(canon[i].name, &dt);
		snprintf(desc, sizeof(desc), "dtype: parse canonical '%s'", canon[i].name);
		CHECK(rc == 0 && dt == canon[i].dt, desc);
		snprintf(desc, sizeof(desc), "dtype: name of %s round-trips", canon[i].name);
		CHECK(strcmp(tfs_dtype_name(canon[i].dt), canon[i].name) == 0, desc);
		snprintf(desc, sizeof(desc), "dtype: size of %s is %zu", canon[i].name, canon[i].size);
		CHECK(tfs_dtype_size(canon[i].dt) == canon[i].size, desc);
		code = bits = 0xee;
		rc = tfs_dtype_dlpack(canon[i].dt, &code, &bits);
		snprintf(desc, sizeof(desc), "dtype: dlpack bits of %s is %zu", canon[i].name,
			 canon[i].size * 8);
		CHECK(rc == 0 && bits == canon[i].size * 8, desc);
		if (canon[i].code != 0xff) {
			snprintf(desc, sizeof(desc), "dtype: dlpack code of %s is %u", canon[i].name,
				 canon[i].code);
			CHECK(rc == 0 && code == canon[i].code, desc);
		}
	}
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++) {
		dt = TFS_DTYPE_COUNT;
		rc = dt_parse(alias[i].name, &dt);
		snprintf(desc, sizeof(desc), "dtype: alias '%s' -> %s", alias[i].name,
			 tfs_dtype_name(alias[i].dt));
		CHECK(rc == 0 && dt == alias[i].dt, desc);
	}

	dt = TFS_DTYPE_COUNT;
	CHECK(dt_parse("f32\n", &dt) == 0 && dt == TFS_F32, "dtype: trailing newline accepted");
	dt = TFS_DTYPE_COUNT;
	CHECK(dt_parse("  bf16 \t\n", &dt) == 0 && dt == TFS_BF16,
	      "dtype: surrounding whitespace accepted");
	dt = TFS_DTYPE_COUNT;
	CHECK(dt_parse("float32\r\n", &dt) == 0 && dt == TFS_F32, "dtype: CRLF accepted");
	dt = TFS_DTYPE_COUNT;
	CHECK(tfs_dtype_parse("i16", 4, &dt) == 0 && dt == TFS_I16,
	      "dtype: trailing NUL (xattr setters) accepted");
	dt = TFS_DTYPE_COUNT;
	CHECK(tfs_dtype_parse("f64garbage", 3, &dt) == 0 && dt == TFS_F64,
	      "dtype: only len bytes are read");
	CHECK(tfs_dtype_parse("f32", 2, &dt) == -EINVAL, "dtype: 'f3' (len-limited) rejected");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		dt = TFS_F64;
		rc = dt_parse(bad[i], &dt);
		snprintf(desc, sizeof(desc), "dtype: '%s' rejected with -EINVAL, out untouched",
			 esc(bad[i]));
		CHECK(rc == -EINVAL && dt == TFS_F64, desc);
	}
	CHECK(tfs_dtype_parse("", 0, &dt) == -EINVAL, "dtype: empty (len 0) -EINVAL");

	CHECK(strcmp(tfs_dtype_name(TFS_DTYPE_COUNT), "?") == 0, "dtype: name out of range is '?'");
	CHECK(strcmp(tfs_dtype_name((tfs_dtype)-1), "?") == 0, "dtype: name of -1 is '?'");
	CHECK(tfs_dtype_size(TFS_DTYPE_COUNT) == 0, "dtype: size out of range is 0");
	CHECK(tfs_dtype_dlpack(TFS_DTYPE_COUNT, &code, &bits) == -EINVAL,
	      "dtype: dlpack out of range -EINVAL");
	CHECK(tfs_dtype_dlpack(TFS_F8E4M3, &code, &bits) == 0 && bits == 8 && code == 10,
	      "dtype: f8e4m3 is DLPack 1.1's kDLFloat8_e4m3fn (10), 8 bits");
	CHECK(tfs_dtype_dlpack(TFS_F8E5M2, &code, &bits) == 0 && bits == 8 && code == 12,
	      "dtype: f8e5m2 is DLPack 1.1's kDLFloat8_e5m2 (12), 8 bits");
}

/* ------------------------------------------------------------------ shape */

static void test_shape(void)
{
	static const char *einval[] = {
		"", " ", "\n", "[", "]", "[1,", "[-1]", "[1.5]", "[a]", "1,,2", "[1]x", "+1", "[1,]",
		"[,1]", ",", "1,", "[[1]]", "[1 2]", "-1", "[1e3]", "[0x10]", "[1];", "x[1]",
		"[18446744073709551616]", "[99999999999999999999]",
	};
	char desc[200], buf[512], text[600];
	struct tfs_shape sh, sh2;
	uint64_t bytes;
	int rc, n;

	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[2,3,4]", &sh) == 0 && sh.ndim == 3 && sh.dims[0] == 2 && sh.dims[1] == 3 &&
	      sh.dims[2] == 4, "shape: [2,3,4]");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("2,3,4", &sh) == 0 && sh.ndim == 3 && sh.dims[0] == 2 && sh.dims[1] == 3 &&
	      sh.dims[2] == 4, "shape: bare 2,3,4");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[]", &sh) == 0 && sh.ndim == 0, "shape: [] is a scalar (ndim 0)");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[ ]", &sh) == 0 && sh.ndim == 0, "shape: [ ] is a scalar");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse(" [ 1 , 2 ] ", &sh) == 0 && sh.ndim == 2 && sh.dims[0] == 1 &&
	      sh.dims[1] == 2, "shape: ' [ 1 , 2 ] ' with spaces");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[\t7,\t8]", &sh) == 0 && sh.ndim == 2 && sh.dims[0] == 7 && sh.dims[1] == 8,
	      "shape: tabs between tokens");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[0]", &sh) == 0 && sh.ndim == 1 && sh.dims[0] == 0, "shape: [0]");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[5,6]\n", &sh) == 0 && sh.ndim == 2 && sh.dims[0] == 5 && sh.dims[1] == 6,
	      "shape: trailing newline accepted");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("7\n", &sh) == 0 && sh.ndim == 1 && sh.dims[0] == 7,
	      "shape: bare single dim with newline");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[007]", &sh) == 0 && sh.ndim == 1 && sh.dims[0] == 7,
	      "shape: leading zeros are decimal");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(sh_parse("[18446744073709551615]", &sh) == 0 && sh.ndim == 1 &&
	      sh.dims[0] == UINT64_MAX, "shape: dim 2^64-1 parses (bytes check refuses it later)");
	memset(&sh, 0xab, sizeof(sh));
	CHECK(tfs_shape_parse("[3,4]junk", 5, &sh) == 0 && sh.ndim == 2 && sh.dims[1] == 4,
	      "shape: only len bytes are read");

	/* "DTYPE SHAPE": typed and sized in one user.tensor.shape (a load's creates) */
	{
		static const char *const bad_typed[] = {
			"bf16[2,3]", "bf16", "bf16 ", "nope [2]", "bf16 [2,x]", "bf16 bf16 [2]",
			" ", "f32\t", "f32 [-1]",
		};
		tfs_dtype dt = TFS_U8, dt2;

		CHECK(tfs_shape_parse_typed("bf16 [4096,1024]", 16, &dt, &sh) == 0 &&
		      dt == TFS_BF16 && sh.ndim == 2 && sh.dims[0] == 4096 && sh.dims[1] == 1024,
		      "typed shape: 'bf16 [4096,1024]'");
		dt = TFS_U8;
		CHECK(tfs_shape_parse_typed("  float32   3,4\n", 16, &dt, &sh) == 0 &&
		      dt == TFS_F32 && sh.ndim == 2 && sh.dims[1] == 4,
		      "typed shape: an alias, spaces, a bare list, a newline");
		dt = TFS_U8;
		CHECK(tfs_shape_parse_typed("f64 []", 6, &dt, &sh) == 0 && dt == TFS_F64 &&
		      sh.ndim == 0, "typed shape: a scalar");
		dt = TFS_I8;
		CHECK(tfs_shape_parse_typed("[5]", 3, &dt, &sh) == 1 && dt == TFS_I8 &&
		      sh.ndim == 1 && sh.dims[0] == 5, "typed shape: a plain shape is 1, dtype kept");
		CHECK(tfs_shape_parse_typed("7", 1, &dt, &sh) == 1 && sh.dims[0] == 7,
		      "typed shape: a bare dim is plain");
		CHECK(tfs_shape_parse_typed("f32 [3]junk", 7, &dt, &sh) == 0 && dt == TFS_F32 &&
		      sh.dims[0] == 3, "typed shape: only len bytes are read");
		for (size_t i = 0; i < sizeof(bad_typed) / sizeof(bad_typed[0]); i++) {
			memset(&sh, 0x5a, sizeof(sh));
			memcpy(&sh2, &sh, sizeof(sh));
			dt = dt2 = TFS_I16;
			rc = tfs_shape_parse_typed(bad_typed[i], strlen(bad_typed[i]), &dt, &sh);
			snprintf(desc, sizeof(desc), "typed shape: '%s' rejected, nothing written",
				 esc(bad_typed[i]));
			CHECK(rc == -EINVAL && dt == dt2 && memcmp(&sh, &sh2, sizeof(sh)) == 0,
			      desc);
		}
	}

	for (size_t i = 0; i < sizeof(einval) / sizeof(einval[0]); i++) {
		memset(&sh, 0x5a, sizeof(sh));
		memcpy(&sh2, &sh, sizeof(sh));
		rc = sh_parse(einval[i], &sh);
		snprintf(desc, sizeof(desc), "shape: '%s' rejected with -EINVAL, out untouched",
			 esc(einval[i]));
		CHECK(rc == -EINVAL && memcmp(&sh, &sh2, sizeof(sh)) == 0, desc);
	}

	/* 16 dims ok, 17 dims -E2BIG. */
	strcpy(text, "[1");
	for (int i = 1; i < TFS_MAX_DIMS; i++)
		strcat(text, ",2");
	strcat(text, "]");
	memset(&sh, 0xab, sizeof(sh));
	rc = sh_parse(text, &sh);
	CHECK(rc == 0 && sh.ndim == 16 && sh.dims[0] == 1 && sh.dims[15] == 2, "shape: 16 dims ok");
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == 0 && bytes == 4ull << 15,
	      "shape: 16-dim byte count is 4*2^15");
	strcpy(text, "[1");
	for (int i = 1; i < TFS_MAX_DIMS + 1; i++)
		strcat(text, ",2");
	strcat(text, "]");
	memset(&sh, 0x5a, sizeof(sh));
	memcpy(&sh2, &sh, sizeof(sh));
	CHECK(sh_parse(text, &sh) == -E2BIG && memcmp(&sh, &sh2, sizeof(sh)) == 0,
	      "shape: 17 dims -E2BIG, out untouched");
	CHECK(sh_parse("1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", &sh) == -E2BIG,
	      "shape: 17 bare dims -E2BIG");

	/* Byte counts. */
	sh_parse("[2,3,4]", &sh);
	bytes = 1;
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == 0 && bytes == 96, "shape: bytes [2,3,4] f32 = 96");
	sh_parse("[]", &sh);
	CHECK(tfs_shape_bytes(&sh, 8, &bytes) == 0 && bytes == 8, "shape: bytes of scalar f64 = 8");
	sh_parse("[0]", &sh);
	bytes = 1;
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == 0 && bytes == 0, "shape: bytes [0] = 0");
	sh_parse("[3,0,5]", &sh);
	bytes = 1;
	CHECK(tfs_shape_bytes(&sh, 2, &bytes) == 0 && bytes == 0, "shape: bytes [3,0,5] = 0");
	sh_parse("[4294967296,4294967296]", &sh);
	bytes = 7;
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == -EOVERFLOW && bytes == 7,
	      "shape: [2^32,2^32] x 4 -EOVERFLOW, bytes untouched");
	sh_parse("[0,4294967296,4294967296]", &sh);
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == -EOVERFLOW,
	      "shape: [0,2^32,2^32] x 4 -EOVERFLOW (zero dim does not hide huge ones)");
	sh_parse("[0,18446744073709551615,18446744073709551615]", &sh);
	CHECK(tfs_shape_bytes(&sh, 1, &bytes) == -EOVERFLOW,
	      "shape: [0,2^64-1,2^64-1] -EOVERFLOW");
	sh_parse("[9223372036854775807]", &sh);
	CHECK(tfs_shape_bytes(&sh, 1, &bytes) == 0 && bytes == (uint64_t)INT64_MAX,
	      "shape: [INT64_MAX] x 1 fits exactly");
	CHECK(tfs_shape_bytes(&sh, 2, &bytes) == -EOVERFLOW, "shape: [INT64_MAX] x 2 -EOVERFLOW");
	sh_parse("[9223372036854775808]", &sh);
	CHECK(tfs_shape_bytes(&sh, 1, &bytes) == -EOVERFLOW,
	      "shape: [2^63] x 1 -EOVERFLOW (not a signed file size)");
	sh_parse("[4611686018427387904]", &sh);
	CHECK(tfs_shape_bytes(&sh, 2, &bytes) == -EOVERFLOW, "shape: [2^62] x 2 -EOVERFLOW");
	sh_parse("[2305843009213693951]", &sh);
	CHECK(tfs_shape_bytes(&sh, 4, &bytes) == 0 && bytes == 9223372036854775804ull,
	      "shape: [(2^63-1)/4] x 4 fits");

	/* Format and round trip. */
	sh_parse("[2,3,4]", &sh);
	n = tfs_shape_format(&sh, buf, sizeof(buf));
	CHECK(n == 7 && strcmp(buf, "[2,3,4]") == 0, "shape: format [2,3,4]");
	sh_parse(" 1 , 2 ", &sh);
	n = tfs_shape_format(&sh, buf, sizeof(buf));
	CHECK(n == 5 && strcmp(buf, "[1,2]") == 0, "shape: format normalises ' 1 , 2 ' to [1,2]");
	sh_parse("[]", &sh);
	n = tfs_shape_format(&sh, buf, sizeof(buf));
	CHECK(n == 2 && strcmp(buf, "[]") == 0, "shape: format scalar []");
	sh_parse("[2,3,4]", &sh);
	CHECK(tfs_shape_format(&sh, buf, 7) == -ENAMETOOLONG,
	      "shape: format into 7 bytes -ENAMETOOLONG");
	CHECK(tfs_shape_format(&sh, buf, 8) == 7, "shape: format into exactly 8 bytes fits");
	CHECK(tfs_shape_format(&sh, buf, 1) == -ENAMETOOLONG, "shape: format into 1 byte");
	strcpy(text, "[18446744073709551615");
	for (int i = 1; i < TFS_MAX_DIMS; i++)
		strcat(text, ",18446744073709551615");
	strcat(text, "]");
	CHECK(sh_parse(text, &sh) == 0 && sh.ndim == 16, "shape: 16 dims of 2^64-1 parse");
	n = tfs_shape_format(&sh, buf, sizeof(buf));
	CHECK(n == (int)strlen(text) && strcmp(buf, text) == 0, "shape: format 16 x 2^64-1 exactly");
	CHECK(sh_parse(buf, &sh2) == 0 && tfs_shape_equal(&sh, &sh2),
	      "shape: format/parse round trip of max shape");
	{
		static const char *rt[] = { "[]", "[0]", "[1]", "[2,3,4]", "[1,0,1]",
					    "[9223372036854775807,1]" };
		for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
			memset(&sh, 0, sizeof(sh));
			memset(&sh2, 0, sizeof(sh2));
			rc = sh_parse(rt[i], &sh);
			n = tfs_shape_format(&sh, buf, sizeof(buf));
			snprintf(desc, sizeof(desc), "shape: round trip %s", rt[i]);
			CHECK(rc == 0 && n == (int)strlen(rt[i]) && strcmp(buf, rt[i]) == 0 &&
			      sh_parse(buf, &sh2) == 0 && tfs_shape_equal(&sh, &sh2), desc);
		}
	}

	/* 1d and equal. */
	memset(&sh, 0xab, sizeof(sh));
	tfs_shape_1d(&sh, 42);
	CHECK(sh.ndim == 1 && sh.dims[0] == 42 && sh.dims[1] == 0, "shape: tfs_shape_1d(42)");
	sh_parse("[42]", &sh2);
	CHECK(tfs_shape_equal(&sh, &sh2), "shape: [42] equals 1d(42)");
	sh_parse("[42,1]", &sh2);
	CHECK(!tfs_shape_equal(&sh, &sh2), "shape: [42] differs from [42,1]");
	sh_parse("[43]", &sh2);
	CHECK(!tfs_shape_equal(&sh, &sh2), "shape: [42] differs from [43]");
	sh_parse("[]", &sh);
	sh_parse(" [ ] ", &sh2);
	CHECK(tfs_shape_equal(&sh, &sh2), "shape: two scalars are equal");
}

/* ------------------------------------------------------------------ strutil */

static void test_strutil(void)
{
	uint64_t u;
	int64_t i;
	uint8_t bin[256], back[256];
	char hex[2 * 256 + 1];
	const char *s;
	size_t len;

	u = 7;
	CHECK(u64_parse("0", &u) == 0 && u == 0, "strutil: u64 '0'");
	CHECK(u64_parse("12345", &u) == 0 && u == 12345, "strutil: u64 '12345'");
	CHECK(u64_parse("18446744073709551615", &u) == 0 && u == UINT64_MAX, "strutil: u64 max");
	CHECK(u64_parse("00000000000000000001", &u) == 0 && u == 1,
	      "strutil: u64 20 digits with leading zeros");
	u = 7;
	CHECK(u64_parse("18446744073709551616", &u) == -ERANGE && u == 7,
	      "strutil: u64 2^64 -ERANGE, out untouched");
	CHECK(u64_parse("18446744073709551620", &u) == -ERANGE, "strutil: u64 2^64+4 -ERANGE");
	CHECK(u64_parse("99999999999999999999", &u) == -ERANGE, "strutil: u64 20 nines -ERANGE");
	CHECK(u64_parse("", &u) == -EINVAL, "strutil: u64 empty -EINVAL");
	CHECK(u64_parse("-1", &u) == -EINVAL, "strutil: u64 '-1' -EINVAL");
	CHECK(u64_parse("+1", &u) == -EINVAL, "strutil: u64 '+1' -EINVAL");
	CHECK(u64_parse(" 1", &u) == -EINVAL, "strutil: u64 leading space -EINVAL");
	CHECK(u64_parse("1 ", &u) == -EINVAL, "strutil: u64 trailing space -EINVAL");
	CHECK(u64_parse("12a", &u) == -EINVAL, "strutil: u64 '12a' -EINVAL");
	CHECK(u64_parse("0x10", &u) == -EINVAL, "strutil: u64 '0x10' -EINVAL");
	CHECK(u64_parse("1.0", &u) == -EINVAL, "strutil: u64 '1.0' -EINVAL");
	CHECK(tfs_parse_u64("123", 2, &u) == 0 && u == 12, "strutil: u64 reads only len bytes");

	i = 7;
	CHECK(i64_parse("0", &i) == 0 && i == 0, "strutil: i64 '0'");
	CHECK(i64_parse("-0", &i) == 0 && i == 0, "strutil: i64 '-0'");
	CHECK(i64_parse("-42", &i) == 0 && i == -42, "strutil: i64 '-42'");
	CHECK(i64_parse("42", &i) == 0 && i == 42, "strutil: i64 '42'");
	CHECK(i64_parse("9223372036854775807", &i) == 0 && i == INT64_MAX, "strutil: i64 max");
	CHECK(i64_parse("-9223372036854775808", &i) == 0 && i == INT64_MIN, "strutil: i64 min");
	i = 7;
	CHECK(i64_parse("9223372036854775808", &i) == -ERANGE && i == 7,
	      "strutil: i64 max+1 -ERANGE, out untouched");
	CHECK(i64_parse("-9223372036854775809", &i) == -ERANGE, "strutil: i64 min-1 -ERANGE");
	CHECK(i64_parse("18446744073709551615", &i) == -ERANGE, "strutil: i64 2^64-1 -ERANGE");
	CHECK(i64_parse("-18446744073709551616", &i) == -ERANGE, "strutil: i64 -2^64 -ERANGE");
	CHECK(i64_parse("", &i) == -EINVAL, "strutil: i64 empty -EINVAL");
	CHECK(i64_parse("-", &i) == -EINVAL, "strutil: i64 '-' -EINVAL");
	CHECK(i64_parse("--1", &i) == -EINVAL, "strutil: i64 '--1' -EINVAL");
	CHECK(i64_parse("- 1", &i) == -EINVAL, "strutil: i64 '- 1' -EINVAL");
	CHECK(i64_parse("+1", &i) == -EINVAL, "strutil: i64 '+1' -EINVAL");
	CHECK(i64_parse("1-", &i) == -EINVAL, "strutil: i64 '1-' -EINVAL");
	CHECK(i64_parse("x", &i) == -EINVAL, "strutil: i64 'x' -EINVAL");

	/* trim and streq_n */
	s = " \t\nab c\r\n";
	len = strlen(s);
	tfs_trim(&s, &len);
	CHECK(len == 4 && memcmp(s, "ab c", 4) == 0, "strutil: trim whitespace both ends");
	s = "x\0\0";
	len = 3;
	tfs_trim(&s, &len);
	CHECK(len == 1 && s[0] == 'x', "strutil: trim trailing NULs");
	s = "   ";
	len = 3;
	tfs_trim(&s, &len);
	CHECK(len == 0, "strutil: trim all-space to empty");
	CHECK(tfs_streq_n("abc", "abcd", 3), "strutil: streq_n equal prefix of len");
	CHECK(!tfs_streq_n("abc", "abcd", 4), "strutil: streq_n longer differs");
	CHECK(!tfs_streq_n("abc", "ab", 2), "strutil: streq_n shorter differs");
	CHECK(tfs_streq_n("", "x", 0), "strutil: streq_n empty");

	/* hex */
	for (int k = 0; k < 256; k++)
		bin[k] = (uint8_t)k;
	tfs_hex_encode(bin, 256, hex);
	CHECK(strlen(hex) == 512 && memcmp(hex, "000102", 6) == 0 &&
	      memcmp(hex + 506, "fdfeff", 6) == 0, "strutil: hex encode all bytes, lower-case");
	memset(back, 0, sizeof(back));
	CHECK(tfs_hex_decode(hex, 512, back, 256) == 0 && memcmp(back, bin, 256) == 0,
	      "strutil: hex round trip of all 256 byte values");
	tfs_hex_encode(bin, 0, hex);
	CHECK(hex[0] == '\0', "strutil: hex encode of 0 bytes is empty");
	CHECK(tfs_hex_decode("DEADbeef", 8, back, 4) == 0 && back[0] == 0xde && back[1] == 0xad &&
	      back[2] == 0xbe && back[3] == 0xef, "strutil: hex decode mixed case");
	CHECK(tfs_hex_decode("abc", 3, back, 2) == -EINVAL, "strutil: hex decode odd length -EINVAL");
	CHECK(tfs_hex_decode("abcdef", 6, back, 2) == -EINVAL,
	      "strutil: hex decode too long -EINVAL");
	CHECK(tfs_hex_decode("ab", 2, back, 2) == -EINVAL, "strutil: hex decode too short -EINVAL");
	CHECK(tfs_hex_decode("zz00", 4, back, 2) == -EINVAL, "strutil: hex decode 'zz' -EINVAL");
	CHECK(tfs_hex_decode("0g", 2, back, 1) == -EINVAL, "strutil: hex decode 'g' -EINVAL");
	CHECK(tfs_hex_decode("0 ", 2, back, 1) == -EINVAL, "strutil: hex decode space -EINVAL");
	CHECK(tfs_hex_decode("", 0, back, 0) == 0, "strutil: hex decode empty into 0 bytes");
}

/* ------------------------------------------------------------------ meta */

static void sample_meta(struct tfs_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->dtype = TFS_BF16;
	tfs_shape_parse("[3,5,7]", 7, &m->shape);
	m->bytes = 3 * 5 * 7 * 2;
	m->device = 3;
	m->ctime = 1700000000;
	m->mtime = -12345;
	strcpy(m->node, "node-7.example");
	m->has_handle = 1;
	for (int i = 0; i < TFS_IPC_HANDLE_SIZE; i++)
		m->ipc_handle[i] = (uint8_t)(i % 5 == 0 ? 0 : 0xff - i);
	m->ipc_offset = 1ull << 40;
	m->refcount = 9;
	strcpy(m->backend, "cuda");
	m->mode = 01750;
	m->uid = 4294967294u;
	m->gid = 1000;
}

static int meta_equal(const struct tfs_meta *a, const struct tfs_meta *b)
{
	return a->dtype == b->dtype && tfs_shape_equal(&a->shape, &b->shape) &&
	       a->bytes == b->bytes && a->device == b->device && a->ctime == b->ctime &&
	       a->mtime == b->mtime && strcmp(a->node, b->node) == 0 &&
	       a->has_handle == b->has_handle &&
	       (!a->has_handle || memcmp(a->ipc_handle, b->ipc_handle, TFS_IPC_HANDLE_SIZE) == 0) &&
	       a->ipc_offset == b->ipc_offset && a->refcount == b->refcount &&
	       strcmp(a->backend, b->backend) == 0 && a->mode == b->mode && a->uid == b->uid &&
	       a->gid == b->gid;
}

/* A field list built by hand: up to 24 pairs, values are NUL-terminated unless given a
 * length. */
struct flist {
	size_t n;
	const char *f[24], *v[24];
	size_t fl[24], vl[24];
};

static void fl_add(struct flist *l, const char *f, const char *v)
{
	l->f[l->n] = f;
	l->fl[l->n] = strlen(f);
	l->v[l->n] = v;
	l->vl[l->n] = strlen(v);
	l->n++;
}

static void fl_addn(struct flist *l, const char *f, const char *v, size_t vl)
{
	fl_add(l, f, "");
	l->v[l->n - 1] = v;
	l->vl[l->n - 1] = vl;
}

/* Copies the fields tfs_meta_to_fields made, replacing (or dropping, with v NULL) one. */
static void fl_from(struct flist *l, const struct tfs_meta_fields *mf, const char *field,
		    const char *v, size_t vl)
{
	l->n = 0;
	for (int i = 0; i < mf->n; i++) {
		if (field && strcmp(mf->field[i], field) == 0) {
			if (v)
				fl_addn(l, field, v, vl);
			continue;
		}
		fl_addn(l, mf->field[i], mf->value[i], mf->len[i]);
	}
}

static int fl_parse(const struct flist *l, struct tfs_meta *m, char *why, size_t whylen)
{
	return tfs_meta_from_fields(m, l->n, l->f, l->fl, l->v, l->vl, why, whylen);
}

static const char *mf_value(const struct tfs_meta_fields *mf, const char *field, size_t *len)
{
	for (int i = 0; i < mf->n; i++)
		if (strcmp(mf->field[i], field) == 0) {
			*len = mf->len[i];
			return mf->value[i];
		}
	return NULL;
}

static void test_meta_fields(void)
{
	static const char *required[] = { "dtype", "shape", "bytes", "node" };
	struct tfs_meta m, back;
	struct tfs_meta_fields mf;
	struct flist l;
	uint8_t handle[TFS_IPC_HANDLE_SIZE];
	char why[256], desc[200];
	const char *v;
	size_t vl;
	int rc;

	sample_meta(&m);
	tfs_meta_to_fields(&m, &mf);
	CHECK(mf.n == TFS_META_NFIELDS, "meta: to_fields gives TFS_META_NFIELDS fields");
	v = mf_value(&mf, "dtype", &vl);
	CHECK(v && vl == 4 && memcmp(v, "bf16", 4) == 0, "meta: field dtype = bf16");
	v = mf_value(&mf, "shape", &vl);
	CHECK(v && vl == 7 && memcmp(v, "[3,5,7]", 7) == 0, "meta: field shape = [3,5,7]");
	v = mf_value(&mf, "bytes", &vl);
	CHECK(v && vl == 3 && memcmp(v, "210", 3) == 0, "meta: field bytes = 210");
	v = mf_value(&mf, "mtime", &vl);
	CHECK(v && vl == 6 && memcmp(v, "-12345", 6) == 0, "meta: field mtime signed");
	v = mf_value(&mf, "ipc_handle", &vl);
	CHECK(v && vl == TFS_IPC_HANDLE_SIZE && memcmp(v, m.ipc_handle, vl) == 0,
	      "meta: field ipc_handle is the raw 64 bytes");
	v = mf_value(&mf, "mode", &vl);
	CHECK(v && vl == 4 && memcmp(v, "1750", 4) == 0, "meta: field mode is octal");
	v = mf_value(&mf, "state", &vl);
	CHECK(v && vl == 5 && memcmp(v, "ready", 5) == 0, "meta: field state = ready");
	v = mf_value(&mf, "uid", &vl);
	CHECK(v && vl == 10 && memcmp(v, "4294967294", 10) == 0, "meta: field uid");

	fl_from(&l, &mf, NULL, NULL, 0);
	memset(&back, 0x77, sizeof(back));
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == 0, "meta: from_fields accepts to_fields output");
	CHECK(meta_equal(&m, &back), "meta: fields round trip keeps every field");
	CHECK(back.has_handle && memcmp(back.ipc_handle, m.ipc_handle, TFS_IPC_HANDLE_SIZE) == 0 &&
	      back.ipc_handle[0] == 0 && back.ipc_handle[5] == 0,
	      "meta: binary handle with NUL bytes survives");

	/* An empty tensor: no handle, bytes 0, scalar shape of zero dims. */
	memset(&m, 0, sizeof(m));
	m.dtype = TFS_F32;
	tfs_shape_parse("[0,4]", 5, &m.shape);
	strcpy(m.node, "n1");
	strcpy(m.backend, "host");
	m.mode = 0;
	m.ctime = INT64_MIN;
	m.mtime = INT64_MAX;
	m.refcount = INT64_MAX;
	m.ipc_offset = (uint64_t)INT64_MAX;
	tfs_meta_to_fields(&m, &mf);
	v = mf_value(&mf, "ipc_handle", &vl);
	CHECK(v && vl == 0, "meta: no handle gives an empty ipc_handle field");
	fl_from(&l, &mf, NULL, NULL, 0);
	memset(&back, 0x77, sizeof(back));
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == 0 && meta_equal(&m, &back) && back.has_handle == 0,
	      "meta: fields round trip of an empty tensor with extreme values");

	/* Minimal record: defaults. */
	l.n = 0;
	fl_add(&l, "dtype", "u8");
	fl_add(&l, "shape", "[]");
	fl_add(&l, "bytes", "1");
	fl_add(&l, "node", "n1");
	for (int i = 0; i < TFS_IPC_HANDLE_SIZE; i++)
		handle[i] = (uint8_t)i;
	fl_addn(&l, "ipc_handle", (const char *)handle, sizeof(handle));
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == 0 && back.dtype == TFS_U8 && back.shape.ndim == 0 && back.bytes == 1 &&
	      strcmp(back.node, "n1") == 0 && back.has_handle == 1 && back.ipc_handle[63] == 63,
	      "meta: minimal record of a scalar");
	CHECK(rc == 0 && back.mode == 0644 && strcmp(back.backend, "host") == 0 &&
	      back.refcount == 0 && back.device == 0, "meta: defaults mode 0644, backend host");
	/* Unknown fields are ignored. */
	fl_add(&l, "x:foo", "anything at all");
	fl_add(&l, "holder:n1:12", "1");
	fl_add(&l, "dtypex", "garbage");
	fl_add(&l, "", "");
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == 0 && back.dtype == TFS_U8 && back.bytes == 1,
	      "meta: unknown fields (x:foo, holder:n1:12, dtypex, '') ignored");
	/* Values with trailing newline (dtype and shape parsers accept them). */
	l.n = 0;
	fl_add(&l, "dtype", "float32\n");
	fl_add(&l, "shape", "[2, 2]\n");
	fl_add(&l, "bytes", "0");
	fl_add(&l, "node", "n1");
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == -EBADMSG, "meta: bytes 0 for a [2,2] f32 record -EBADMSG");
	l.vl[2] = 2;
	l.v[2] = "16";
	fl_addn(&l, "ipc_handle", (const char *)handle, sizeof(handle));
	rc = fl_parse(&l, &back, why, sizeof(why));
	CHECK(rc == 0 && back.dtype == TFS_F32 && back.shape.ndim == 2 && back.bytes == 16,
	      "meta: record with alias dtype and spaced shape");

	/* Rejections. */
	sample_meta(&m);
	tfs_meta_to_fields(&m, &mf);
	for (size_t k = 0; k < sizeof(required) / sizeof(required[0]); k++) {
		fl_from(&l, &mf, required[k], NULL, 0);
		why[0] = '\0';
		rc = fl_parse(&l, &back, why, sizeof(why));
		snprintf(desc, sizeof(desc), "meta: missing %s -EBADMSG with a reason", required[k]);
		CHECK(rc == -EBADMSG && strstr(why, required[k]) != NULL, desc);
	}
	{
		static const struct { const char *field, *value; const char *what; } bad[] = {
			{ "dtype", "f33", "unknown dtype" },
			{ "dtype", "", "empty dtype" },
			{ "shape", "[3,5", "bad shape" },
			{ "shape", "[3,-5,7]", "negative dim" },
			{ "shape", "[3,5,8]", "shape not matching bytes" },
			{ "bytes", "211", "bytes not matching dtype x shape" },
			{ "bytes", "420", "bytes double" },
			{ "bytes", "-210", "negative bytes" },
			{ "bytes", "abc", "non-numeric bytes" },
			{ "bytes", "", "empty bytes" },
			{ "dtype", "f32", "dtype changes byte count" },
			{ "ipc_handle", "short", "handle of 5 bytes" },
			{ "refcount", "-1", "negative refcount" },
			{ "refcount", "1.5", "fractional refcount" },
			{ "mode", "0x1ff", "non-octal mode 0x1ff" },
			{ "mode", "0648", "non-octal mode 0648" },
			{ "mode", "17777", "mode over 07777" },
			{ "mode", "", "empty mode" },
			{ "mode", "-644", "negative mode" },
			{ "device", "-1", "negative device" },
			{ "device", "gpu0", "non-numeric device" },
			{ "ctime", "yesterday", "non-numeric ctime" },
			{ "mtime", "1e9", "non-integer mtime" },
			{ "ipc_offset", "-4", "negative ipc_offset" },
			{ "node", "", "empty node" },
			{ "node", "0123456789012345678901234567890123456789012345678901234567890123",
			  "64-byte node" },
			{ "backend", "rocm", "unknown backend" },
			{ "uid", "4294967295", "uid -1 (2^32-1)" },
			{ "gid", "-5", "negative gid" },
		};
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			fl_from(&l, &mf, bad[k].field, bad[k].value, strlen(bad[k].value));
			why[0] = '\0';
			rc = fl_parse(&l, &back, why, sizeof(why));
			snprintf(desc, sizeof(desc), "meta: %s ('%s': '%s') -EBADMSG", bad[k].what,
				 bad[k].field, bad[k].value);
			CHECK(rc == -EBADMSG && why[0] != '\0', desc);
		}
	}
	{
		char big[TFS_IPC_HANDLE_SIZE + 1];

		memset(big, 'h', sizeof(big));
		fl_from(&l, &mf, "ipc_handle", big, 65);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == -EBADMSG,
		      "meta: handle of 65 bytes -EBADMSG");
		fl_from(&l, &mf, "ipc_handle", big, 63);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == -EBADMSG,
		      "meta: handle of 63 bytes -EBADMSG");
		fl_from(&l, &mf, "ipc_handle", big, 0);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == -EBADMSG,
		      "meta: bytes > 0 without a handle -EBADMSG");
		fl_from(&l, &mf, "ipc_handle", NULL, 0);
		CHECK(fl_parse(&l, &back, NULL, 0) == -EBADMSG,
		      "meta: bytes > 0 with no ipc_handle field -EBADMSG (why NULL)");
		fl_from(&l, &mf, "node", "n\0x", 3);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == -EBADMSG,
		      "meta: binary node -EBADMSG");
		fl_from(&l, &mf, "mode", "0755", 4);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == 0 && back.mode == 0755,
		      "meta: mode with leading 0");
		fl_from(&l, &mf, "mode", "7777", 4);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == 0 && back.mode == 07777,
		      "meta: mode 7777");
		fl_from(&l, &mf, "refcount", "0", 1);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == 0 && back.refcount == 0,
		      "meta: refcount 0 accepted");
		fl_from(&l, &mf, "uid", "4294967294", 10);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == 0 && back.uid == 4294967294u,
		      "meta: uid 2^32-2 accepted");
		fl_from(&l, &mf, "shape", "[3,5,7]\n", 8);
		CHECK(fl_parse(&l, &back, why, sizeof(why)) == 0 && back.shape.ndim == 3,
		      "meta: shape with trailing newline accepted");
	}
	/* Overflowing shape in a record. */
	l.n = 0;
	fl_add(&l, "dtype", "f32");
	fl_add(&l, "shape", "[4294967296,4294967296]");
	fl_add(&l, "bytes", "0");
	fl_add(&l, "node", "n1");
	CHECK(fl_parse(&l, &back, why, sizeof(why)) == -EBADMSG,
	      "meta: record with overflowing shape -EBADMSG");
}

/* js (tfs_meta_to_json's text) with the value of key, and all after it, replaced by each
 * of the n texts bad: each must parse, the 64-bit field at offset off of the metadata
 * (ino, ctime_ns) read as unknown (0). */
static void check_bad_digits(const char *js, const char *key, const char *const *bad, size_t n,
			     size_t off)
{
	char pat[64], text[1024], desc[160];
	struct tfs_meta back;
	const char *p;
	uint64_t v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(js, pat);
	snprintf(desc, sizeof(desc), "meta: %s is in the JSON its bad values are tried in", key);
	CHECK(p != NULL, desc);
	for (size_t i = 0; p && i < n; i++) {
		snprintf(text, sizeof(text), "%.*s%s}", (int)(p - js + strlen(pat)), js, bad[i]);
		memset(&back, 0x77, sizeof(back));
		snprintf(desc, sizeof(desc), "meta: %s %s parses as unknown (0)", key, bad[i]);
		v = 1;
		if (tfs_meta_from_json(text, strlen(text), &back) == 0)
			memcpy(&v, (const char *)&back + off, sizeof(v));
		CHECK(v == 0, desc);
	}
}

static void test_meta_json(void)
{
	static const char *garbage[] = {
		"", "not json", "[1,2]", "42", "\"str\"", "null", "{", "{}",
		"{\"dtype\":\"f32\"}",
	};
	struct tfs_meta m, back;
	char *js, *js2, desc[160];
	int rc;

	sample_meta(&m);
	js = tfs_meta_to_json(&m, "dir/t1");
	CHECK(js != NULL, "meta: to_json returns text");
	if (!js)
		return;
	CHECK(strstr(js, "\"name\":\"dir/t1\"") != NULL, "meta: json has the name");
	CHECK(strstr(js, "\"dtype\":\"bf16\"") != NULL, "meta: json has dtype");
	CHECK(strstr(js, "\"shape\":[3,5,7]") != NULL, "meta: json has shape array");
	CHECK(strstr(js, "\"bytes\":210") != NULL, "meta: json has exact bytes");
	CHECK(strstr(js, "\"ipc_offset\":1099511627776") != NULL, "meta: json has exact offset");
	CHECK(strstr(js, "\"mode\":\"1750\"") != NULL, "meta: json mode is an octal string");
	CHECK(strstr(js, "\"ipc_handle\":\"00fefdfcfb00") != NULL,
	      "meta: json handle is lower-case hex");
	memset(&back, 0x77, sizeof(back));
	rc = tfs_meta_from_json(js, strlen(js), &back);
	CHECK(rc == 0, "meta: from_json accepts to_json output");
	CHECK(rc == 0 && meta_equal(&m, &back), "meta: json round trip keeps every field");
	CHECK(back.shape.ndim == 3 && back.shape.dims[2] == 7 && back.bytes == 210 &&
	      back.ipc_offset == 1ull << 40 && strcmp(back.node, "node-7.example") == 0 &&
	      back.mode == 01750 && back.has_handle &&
	      memcmp(back.ipc_handle, m.ipc_handle, TFS_IPC_HANDLE_SIZE) == 0,
	      "meta: json round trip of shape, bytes, handle, offset, node, mode");
	free(js);

	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && strstr(js, "\"name\"") == NULL, "meta: to_json without name has no name key");
	CHECK(js && strstr(js, "\"ino\"") == NULL, "meta: no ino key when it is unknown (0)");
	free(js);

	/* The inode number travels as a string, exactly, where a double would round it. */
	m.ino = INT64_MAX - 2;
	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && strstr(js, "\"ino\":\"9223372036854775805\"") != NULL,
	      "meta: json ino is a decimal string");
	memset(&back, 0x77, sizeof(back));
	CHECK(js && tfs_meta_from_json(js, strlen(js), &back) == 0 && back.ino == m.ino,
	      "meta: json round trip keeps a 63-bit ino exactly");
	if (js) {
		static const char *bad_ino[] = { "\"12a\"", "\"-1\"", "\"\"", "\"9223372036854775808\"",
						 "\"18446744073709551616\"", "12", "null" };

		check_bad_digits(js, "ino", bad_ino, sizeof(bad_ino) / sizeof(bad_ino[0]),
				 offsetof(struct tfs_meta, ino));
	}
	free(js);
	m.ino = 0;

	/* The change time in nanoseconds, which a first open matches to its descriptor's
	 * st_ctim, travels as a string too; anything but digits is unknown (0). */
	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && strstr(js, "\"ctime_ns\"") == NULL, "meta: no ctime_ns key when it is unknown (0)");
	free(js);
	m.ctime_ns = 1795430393123456789LL;
	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && strstr(js, "\"ctime_ns\":\"1795430393123456789\"") != NULL,
	      "meta: json ctime_ns is a decimal string");
	memset(&back, 0x77, sizeof(back));
	CHECK(js && tfs_meta_from_json(js, strlen(js), &back) == 0 &&
	      back.ctime_ns == m.ctime_ns, "meta: json round trip keeps ctime_ns exactly");
	if (js) {
		static const char *bad_ns[] = { "\"1795430393123456789x\"", "\"-5\"", "\"\"",
						"\"9223372036854775808\"", "1795430393", "null", "{}" };

		check_bad_digits(js, "ctime_ns", bad_ns, sizeof(bad_ns) / sizeof(bad_ns[0]),
				 offsetof(struct tfs_meta, ctime_ns));
	}
	free(js);
	m.ctime_ns = 0;

	/* No handle, huge exact dims (beyond 2^53) travel through shape_text. */
	memset(&m, 0, sizeof(m));
	m.dtype = TFS_U8;
	tfs_shape_parse("[0,9007199254740993]", 20, &m.shape);
	strcpy(m.node, "n2");
	strcpy(m.backend, "host");
	m.mode = 0600;
	js = tfs_meta_to_json(&m, "x");
	CHECK(js && strstr(js, "\"ipc_handle\":\"\"") != NULL,
	      "meta: json handle empty when there is none");
	rc = js ? tfs_meta_from_json(js, strlen(js), &back) : -1;
	CHECK(rc == 0 && meta_equal(&m, &back) && back.shape.dims[1] == 9007199254740993ull &&
	      back.has_handle == 0, "meta: json round trip keeps a dim of 2^53+1 exactly");
	/* Inconsistent bytes are refused, and so is a bad handle. */
	js2 = js ? strdup(js) : NULL;
	if (js2) {
		char *p = strstr(js2, "\"bytes\":0");
		if (p)
			p[8] = '5';
		CHECK(p && tfs_meta_from_json(js2, strlen(js2), &back) == -EBADMSG,
		      "meta: from_json refuses bytes not matching the shape");
	}
	free(js2);
	free(js);

	sample_meta(&m);
	js = tfs_meta_to_json(&m, NULL);
	if (js) {
		char *p = strstr(js, "\"ipc_handle\":\"");
		js2 = strdup(js);
		if (p && js2) {
			js2[p - js + 14] = 'z';
			CHECK(tfs_meta_from_json(js2, strlen(js2), &back) == -EBADMSG,
			      "meta: from_json refuses a non-hex handle");
			memcpy(js2, js, strlen(js) + 1);
			memmove(js2 + (p - js) + 14, js2 + (p - js) + 16, strlen(js2 + (p - js) + 16) + 1);
			CHECK(tfs_meta_from_json(js2, strlen(js2), &back) == -EBADMSG,
			      "meta: from_json refuses a 63-byte handle");
		}
		free(js2);
		CHECK(tfs_meta_from_json(js, strlen(js) - 1, &back) == -EBADMSG,
		      "meta: from_json refuses truncated text");
		free(js);
	}
	for (size_t k = 0; k < sizeof(garbage) / sizeof(garbage[0]); k++) {
		snprintf(desc, sizeof(desc), "meta: from_json refuses '%s'", garbage[k]);
		CHECK(tfs_meta_from_json(garbage[k], strlen(garbage[k]), &back) == -EBADMSG, desc);
	}
	{
		const char *neg = "{\"dtype\":\"u8\",\"shape_text\":\"[1]\",\"bytes\":1,"
				  "\"ipc_offset\":0,\"device\":-1,\"refcount\":1,\"node\":\"n\","
				  "\"backend\":\"host\",\"ipc_handle\":\"\"}";
		const char *okj = "{\"dtype\":\"u8\",\"shape_text\":\"[1]\",\"bytes\":1,"
				  "\"ipc_offset\":0,\"device\":2,\"refcount\":1,\"node\":\"n\","
				  "\"backend\":\"host\",\"ipc_handle\":\"\"}";
		const char *baddt = "{\"dtype\":\"q7\",\"shape_text\":\"[1]\",\"bytes\":1,"
				    "\"ipc_offset\":0,\"device\":2,\"refcount\":1,\"node\":\"n\","
				    "\"backend\":\"host\",\"ipc_handle\":\"\"}";
		CHECK(tfs_meta_from_json(okj, strlen(okj), &back) == 0 && back.device == 2 &&
		      back.bytes == 1 && back.refcount == 1, "meta: from_json of a hand-written object");
		CHECK(tfs_meta_from_json(neg, strlen(neg), &back) == -EBADMSG,
		      "meta: from_json refuses a negative device");
		CHECK(tfs_meta_from_json(baddt, strlen(baddt), &back) == -EBADMSG,
		      "meta: from_json refuses an unknown dtype");
	}
}

/* A VMM tensor's text names the handle socket and the tensor (docs/vmm.md): both travel
 * exactly, and a socket path that is not absolute or does not fit is refused. */
static void test_meta_hsock(void)
{
	struct tfs_meta m, back;
	char name[64], *js, *bad;
	const char *p;

	sample_meta(&m);
	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && strstr(js, "handle_socket") == NULL, "meta: no handle_socket key when none");
	free(js);
	strcpy(m.hsock, "/run/tensorfs/handles.0123456789abcdef.sock");
	js = tfs_meta_to_json(&m, "d/t");
	memset(&back, 0x77, sizeof(back));
	CHECK(js && tfs_meta_from_json(js, strlen(js), &back) == 0 &&
	      strcmp(back.hsock, m.hsock) == 0, "meta: json round trip keeps handle_socket");
	CHECK(js && tfs_meta_json_name(js, strlen(js), name, sizeof(name)) == 0 &&
	      strcmp(name, "d/t") == 0, "meta: json_name gives the name");
	CHECK(js && tfs_meta_json_name(js, strlen(js), name, 3) == -EBADMSG,
	      "meta: json_name refuses a name that does not fit");
	if (js && (p = strstr(js, "\"/run/")) && (bad = strdup(js))) {
		bad[p - js + 1] = 'r';                   /* "run/...": relative */
		CHECK(tfs_meta_from_json(bad, strlen(bad), &back) == -EBADMSG,
		      "meta: from_json refuses a relative handle_socket");
		free(bad);
	}
	free(js);
	js = tfs_meta_to_json(&m, NULL);
	CHECK(js && tfs_meta_json_name(js, strlen(js), name, sizeof(name)) == -ENODATA,
	      "meta: json_name: -ENODATA without a name");
	free(js);
	js = tfs_meta_to_json(&m, "../x");
	CHECK(js && tfs_meta_json_name(js, strlen(js), name, sizeof(name)) == -EBADMSG,
	      "meta: json_name refuses a name with ..");
	free(js);
	memset(m.hsock, 'a', sizeof(m.hsock) - 1);
	m.hsock[0] = '/';
	m.hsock[sizeof(m.hsock) - 1] = '\0';
	js = tfs_meta_to_json(&m, NULL);
	if (js && (p = strstr(js, "\"/aaa")) && (bad = malloc(strlen(js) + 2))) {
		/* one byte more than a socket path holds */
		size_t at = (size_t)(p - js) + 1;

		memcpy(bad, js, at);
		bad[at] = '/';
		strcpy(bad + at + 1, js + at);
		CHECK(tfs_meta_from_json(bad, strlen(bad), &back) == -EBADMSG,
		      "meta: from_json refuses a handle_socket longer than a socket path");
		free(bad);
	}
	free(js);
}

static void test_meta_misc(void)
{
	char name[5000];
	char desc[160];

	CHECK(strcmp(tfs_errno_name(EEXIST), "EEXIST") == 0, "meta: errno_name(EEXIST)");
	CHECK(strcmp(tfs_errno_name(-EEXIST), "EEXIST") == 0, "meta: errno_name(-EEXIST)");
	CHECK(strcmp(tfs_errno_name(ENOENT), "ENOENT") == 0, "meta: errno_name(ENOENT)");
	CHECK(strcmp(tfs_errno_name(-E2BIG), "E2BIG") == 0, "meta: errno_name(-E2BIG)");
	CHECK(strcmp(tfs_errno_name(9999), "E9999") == 0, "meta: errno_name(9999) = E9999");
	CHECK(strcmp(tfs_errno_name(-9999), "E9999") == 0, "meta: errno_name(-9999) = E9999");
	CHECK(tfs_errno_from_name("EEXIST") == EEXIST, "meta: errno_from_name(EEXIST)");
	CHECK(tfs_errno_from_name("EOVERFLOW") == EOVERFLOW, "meta: errno_from_name(EOVERFLOW)");
	CHECK(tfs_errno_from_name("ENOPE") == EIO, "meta: errno_from_name(unknown) = EIO");
	CHECK(tfs_errno_from_name("") == EIO, "meta: errno_from_name('') = EIO");
	CHECK(tfs_errno_from_name("eexist") == EIO, "meta: errno_from_name is case-sensitive");
	{
		static const int errs[] = { EPERM, ENOENT, EIO, ENOMEM, EACCES, EBUSY, EEXIST,
					    EINVAL, ENOSPC, ERANGE, ENAMETOOLONG, ENODATA,
					    EOVERFLOW, EBADMSG, E2BIG, ENOTSUP, ETIMEDOUT,
					    ECONNREFUSED, EPROTO, ESRCH, EREMOTE, ENODEV };
		for (size_t k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
			const char *n = tfs_errno_name(errs[k]);
			snprintf(desc, sizeof(desc), "meta: errno %d -> %s -> back", errs[k], n);
			CHECK(n[0] == 'E' && tfs_errno_from_name(n) == errs[k], desc);
		}
	}

	CHECK(tfs_name_check("a") == 0, "name: 'a' ok");
	CHECK(tfs_name_check("a/b") == 0, "name: 'a/b' ok");
	CHECK(tfs_name_check("dir/sub/t.0") == 0, "name: 'dir/sub/t.0' ok");
	CHECK(tfs_name_check("...") == 0, "name: '...' ok");
	CHECK(tfs_name_check(".a/..b") == 0, "name: '.a/..b' ok");
	{
		static const char *bad[] = { "", "/", "/a", "a/", "a//b", ".", "..", "a/../b",
					     "./a", "a/.", "a/..", "//" };
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			snprintf(desc, sizeof(desc), "name: '%s' -EINVAL", bad[k]);
			CHECK(tfs_name_check(bad[k]) == -EINVAL, desc);
		}
	}
	memset(name, 'c', 255);
	name[255] = '\0';
	CHECK(tfs_name_check(name) == 0, "name: 255-byte component ok");
	memset(name, 'c', 256);
	name[256] = '\0';
	CHECK(tfs_name_check(name) == -ENAMETOOLONG, "name: 256-byte component -ENAMETOOLONG");
	memcpy(name, "a/", 2);
	memset(name + 2, 'c', 256);
	memcpy(name + 258, "/b", 3);
	CHECK(tfs_name_check(name) == -ENAMETOOLONG,
	      "name: 256-byte middle component -ENAMETOOLONG");
	/* Components of 99 bytes + '/' : 40 of them make 4000 bytes, then pad. */
	{
		size_t n = 0;

		while (n + 100 <= 4000) {
			memset(name + n, 'd', 99);
			name[n + 99] = '/';
			n += 100;
		}
		memset(name + n, 'e', 95);      /* 4095 bytes in all */
		name[n + 95] = '\0';
		CHECK(strlen(name) == 4095 && tfs_name_check(name) == 0, "name: 4095-byte name ok");
		name[n + 95] = 'e';
		name[n + 96] = '\0';
		CHECK(strlen(name) == 4096 && tfs_name_check(name) == -ENAMETOOLONG,
		      "name: 4096-byte name -ENAMETOOLONG");
	}
}

/* ------------------------------------------------------------------ cmd */

static void test_cmd_parse(void)
{
	struct tfs_cmd c;
	char err[256], desc[200], big[6000];
	int rc;

	rc = cmd_parse("{\"op\":\"create\",\"name\":\"models/w1\",\"dtype\":\"f32\",\"shape\":[2,3],"
		       "\"device\":1,\"pid\":123,\"node\":\"n1\",\"id\":\"req-17\","
		       "\"reply\":\"tfs:reply:17\",\"future\":{\"x\":1}}", &c, err, sizeof(err));
	CHECK(rc == 0, "cmd: full create parses (unknown field ignored)");
	CHECK(c.op == TFS_OP_CREATE && strcmp(c.name, "models/w1") == 0, "cmd: create op and name");
	CHECK(c.has_dtype && c.dtype == TFS_F32, "cmd: create dtype");
	CHECK(c.has_shape && c.shape.ndim == 2 && c.shape.dims[0] == 2 && c.shape.dims[1] == 3,
	      "cmd: create shape");
	CHECK(c.has_device && c.device == 1, "cmd: create device");
	CHECK(c.pid == 123, "cmd: create pid");
	CHECK(strcmp(c.node, "n1") == 0, "cmd: create node");
	CHECK(strcmp(c.id, "req-17") == 0 && strcmp(c.reply, "tfs:reply:17") == 0,
	      "cmd: create id and reply");

	rc = cmd_parse("{\"op\":\"create\",\"name\":\"s\",\"dtype\":\"bfloat16\",\"shape\":\"[4, 5]\\n\"}",
		       &c, err, sizeof(err));
	CHECK(rc == 0 && c.dtype == TFS_BF16 && c.shape.ndim == 2 && c.shape.dims[1] == 5,
	      "cmd: create with alias dtype and shape as text");
	rc = cmd_parse("{\"op\":\"create\",\"name\":\"s\",\"dtype\":\"u8\",\"shape\":[]}", &c, err,
		       sizeof(err));
	CHECK(rc == 0 && c.has_shape && c.shape.ndim == 0, "cmd: create scalar shape []");
	rc = cmd_parse("{\"op\":\"create\",\"name\":\"s\",\"dtype\":\"u8\",\"shape\":[0,2]}", &c, err,
		       sizeof(err));
	CHECK(rc == 0 && c.shape.dims[0] == 0, "cmd: create zero-size shape");
	rc = cmd_parse("{\"op\":\"create\",\"name\":\"s\",\"dtype\":\"u8\",\"shape\":[2.0]}", &c, err,
		       sizeof(err));
	CHECK(rc == 0 && c.shape.dims[0] == 2, "cmd: dim 2.0 is an integer");

	rc = cmd_parse("{\"op\":\"get\",\"name\":\"a/b\"}", &c, err, sizeof(err));
	CHECK(rc == 0 && c.op == TFS_OP_GET && strcmp(c.name, "a/b") == 0 && !c.has_dtype &&
	      !c.has_shape && !c.has_device && c.pid == 0 && c.node[0] == '\0' &&
	      c.id[0] == '\0' && c.reply[0] == '\0', "cmd: get with only a name");
	rc = cmd_parse("{\"op\":\"delete\",\"name\":\"x\"}", &c, err, sizeof(err));
	CHECK(rc == 0 && c.op == TFS_OP_DELETE && strcmp(c.name, "x") == 0,
	      "cmd: delete with only a name");
	rc = cmd_parse("{\"op\":\"get\",\"name\":\"x\",\"pid\":5,\"lease\":30}", &c, err, sizeof(err));
	CHECK(rc == 0 && c.op == TFS_OP_GET && c.lease == 30, "cmd: get with a lease");
	rc = cmd_parse("{\"op\":\"renew\",\"name\":\"x\",\"pid\":5,\"lease\":1}", &c, err, sizeof(err));
	CHECK(rc == 0 && c.op == TFS_OP_RENEW && c.lease == 1 && c.pid == 5, "cmd: renew");
	rc = cmd_parse("{\"op\":\"renew\",\"name\":\"x\",\"pid\":5}", &c, err, sizeof(err));
	CHECK(rc == -EINVAL, "cmd: renew without a lease refused");
	rc = cmd_parse("{\"op\":\"get\",\"name\":\"x\",\"pid\":5,\"lease\":0}", &c, err, sizeof(err));
	CHECK(rc == -EINVAL, "cmd: lease 0 refused");
	rc = cmd_parse("{\"op\":\"get\",\"name\":\"x\",\"pid\":5,\"lease\":86401}", &c, err, sizeof(err));
	CHECK(rc == -EINVAL, "cmd: lease over a day refused");
	rc = cmd_parse("{\"op\":\"get\",\"name\":\"x\",\"pid\":null,\"device\":null,\"id\":null}", &c,
		       err, sizeof(err));
	CHECK(rc == 0 && c.pid == 0 && !c.has_device && c.id[0] == '\0', "cmd: null fields = absent");
	{
		static const char two[] = "{\"op\":\"get\",\"name\":\"x\"}{\"op\":\"zap\"}";
		rc = tfs_cmd_parse(two, strlen(two) - strlen("{\"op\":\"zap\"}"), &c, err,
				   sizeof(err));
	}
	CHECK(rc == 0 && strcmp(c.name, "x") == 0, "cmd: reads only len bytes");

	/* Errors where id and reply must survive. */
	{
		static const struct { const char *body; int rc; const char *what; } bad[] = {
			{ "", -EINVAL, "missing op" },
			{ ",\"op\":7", -EINVAL, "non-string op" },
			{ ",\"op\":\"rename\"", -EINVAL, "unknown op" },
			{ ",\"op\":\"CREATE\"", -EINVAL, "upper-case op" },
			{ ",\"op\":\"get\"", -EINVAL, "missing name" },
			{ ",\"op\":\"get\",\"name\":\"\"", -EINVAL, "empty name" },
			{ ",\"op\":\"get\",\"name\":\"/abs\"", -EINVAL, "leading-slash name" },
			{ ",\"op\":\"get\",\"name\":\"a/../b\"", -EINVAL, "name with .." },
			{ ",\"op\":\"get\",\"name\":12", -EINVAL, "non-string name" },
			{ ",\"op\":\"create\\u0000junk\",\"name\":\"x\",\"dtype\":\"u8\",\"shape\":[1]",
			  -EINVAL, "op with an escaped NUL (was read as create)" },
			{ ",\"op\":\"get\",\"name\":\"nul\\u0000/../x\"", -EINVAL,
			  "name with an escaped NUL (was read as nul)" },
			{ ",\"op\":\"get\",\"name\":\"a\\nforged log line\"", -EINVAL,
			  "name with a newline" },
			{ ",\"op\":\"get\",\"name\":\"x\",\"node\":\"n:1\"", -EINVAL,
			  "node with ':'" },
			{ ",\"op\":\"get\",\"name\":\"x\",\"node\":\"\\u00ff\"", -EINVAL,
			  "node with a byte past ASCII" },
			{ ",\"op\":\"get\",\"name\":\"x\",\"node\":\"a b\"", -EINVAL,
			  "node with a space" },
			{ ",\"op\":\"get\",\"name\":[\"a\"]", -EINVAL, "array name" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"shape\":[2]", -EINVAL,
			  "create without dtype" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\"", -EINVAL,
			  "create without shape" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":[2,-1]", -EINVAL,
			  "negative dim" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":[2.5]", -EINVAL,
			  "fractional dim" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":[\"2\"]", -EINVAL,
			  "string dim" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":{\"a\":1}", -EINVAL,
			  "object shape" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":\"[2,x]\"", -EINVAL,
			  "bad shape text" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\",\"shape\":[1e300]", -EINVAL,
			  "dim 1e300" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\","
			  "\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", -E2BIG, "17 dims" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\","
			  "\"shape\":\"1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\"", -E2BIG, "17 dims as text" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f32\","
			  "\"shape\":[4294967296,4294967296]", -EOVERFLOW, "byte count overflow" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"u8\","
			  "\"shape\":[0,4294967296,4294967296]", -EOVERFLOW,
			  "overflow hidden behind a zero dim" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":\"f33\",\"shape\":[1]", -EINVAL,
			  "bad dtype" },
			{ ",\"op\":\"create\",\"name\":\"t\",\"dtype\":4,\"shape\":[1]", -EINVAL,
			  "non-string dtype" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"pid\":0", -EINVAL, "pid 0" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"pid\":-5", -EINVAL, "pid negative" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"pid\":1.5", -EINVAL, "pid fractional" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"pid\":\"12\"", -EINVAL, "pid as string" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"device\":-1", -EINVAL, "device negative" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"device\":0.5", -EINVAL, "device fractional" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"device\":\"0\"", -EINVAL, "device as string" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"node\":5", -EINVAL, "non-string node" },
			{ ",\"op\":\"get\",\"name\":\"t\",\"node\":"
			  "\"0123456789012345678901234567890123456789012345678901234567890123\"",
			  -EINVAL, "64-byte node" },
		};
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			snprintf(big, sizeof(big), "{\"id\":\"e%zu\",\"reply\":\"rk:%zu\"%s}", k, k,
				 bad[k].body);
			err[0] = '\0';
			rc = cmd_parse(big, &c, err, sizeof(err));
			snprintf(desc, sizeof(desc), "cmd: %s -> %s with a message", bad[k].what,
				 tfs_errno_name(bad[k].rc));
			CHECK(rc == bad[k].rc && err[0] != '\0', desc);
			snprintf(big, sizeof(big), "e%zu", k);
			snprintf(desc, sizeof(desc), "cmd: %s keeps id and reply", bad[k].what);
			CHECK(strcmp(c.id, big) == 0 && strncmp(c.reply, "rk:", 3) == 0 &&
			      strcmp(c.reply + 3, big + 1) == 0, desc);
		}
	}
	/* A name with a 256-byte component: -ENAMETOOLONG, id still there. */
	memset(big, 0, sizeof(big));
	strcpy(big, "{\"id\":\"long\",\"reply\":\"r\",\"op\":\"get\",\"name\":\"");
	memset(big + strlen(big), 'n', 256);
	strcat(big, "\"}");
	rc = cmd_parse(big, &c, err, sizeof(err));
	CHECK(rc == -ENAMETOOLONG && strcmp(c.id, "long") == 0 && strcmp(c.reply, "r") == 0,
	      "cmd: 256-byte name component -ENAMETOOLONG, keeps id and reply");

	/* Errors before id could be read. */
	err[0] = '\0';
	CHECK(cmd_parse("{\"op\":\"get\",\"name\":", &c, err, sizeof(err)) == -EINVAL &&
	      err[0] != '\0' && c.id[0] == '\0' && c.reply[0] == '\0',
	      "cmd: malformed JSON -EINVAL, id empty");
	CHECK(cmd_parse("not json", &c, err, sizeof(err)) == -EINVAL, "cmd: 'not json' -EINVAL");
	CHECK(cmd_parse("", &c, err, sizeof(err)) == -EINVAL, "cmd: empty text -EINVAL");
	CHECK(cmd_parse("[{\"op\":\"get\",\"name\":\"x\",\"id\":\"i\"}]", &c, err, sizeof(err)) ==
	      -EINVAL && c.id[0] == '\0', "cmd: array (non-object) -EINVAL");
	CHECK(cmd_parse("\"get\"", &c, NULL, 0) == -EINVAL, "cmd: string (non-object), err NULL");
	CHECK(cmd_parse("{\"id\":5,\"op\":\"get\",\"name\":\"x\"}", &c, err, sizeof(err)) == -EINVAL,
	      "cmd: non-string id -EINVAL");
	CHECK(cmd_parse("{\"id\":\"i\",\"reply\":[],\"op\":\"get\",\"name\":\"x\"}", &c, err,
			sizeof(err)) == -EINVAL && strcmp(c.id, "i") == 0,
	      "cmd: non-string reply -EINVAL, id kept");
	memset(big, 0, sizeof(big));
	strcpy(big, "{\"op\":\"get\",\"name\":\"x\",\"id\":\"");
	memset(big + strlen(big), 'i', TFS_CMD_STR);
	strcat(big, "\"}");
	CHECK(cmd_parse(big, &c, err, sizeof(err)) == -EINVAL, "cmd: id of 256 bytes -EINVAL");
	/* A tiny err buffer is not overrun. */
	{
		char small[4] = "xyz";
		CHECK(cmd_parse("{\"op\":\"nope\",\"name\":\"x\"}", &c, small, 3) == -EINVAL &&
		      small[2] == '\0' && small[3] == '\0', "cmd: error message truncated to errlen");
	}
}

static void test_cmd_build(void)
{
	struct tfs_cmd c, back;
	char err[256], *js;
	int rc;

	memset(&c, 0, sizeof(c));
	c.op = TFS_OP_CREATE;
	strcpy(c.name, "dir/tensor \"quoted\" \\ ü");
	c.has_dtype = 1;
	c.dtype = TFS_F8E5M2;
	c.has_shape = 1;
	tfs_shape_parse("[1,2,3,4]", 9, &c.shape);
	c.has_device = 1;
	c.device = 0;
	c.pid = 4194304;
	strcpy(c.node, "node-1");   /* a node is a plain word (tfs_word_ok) */
	strcpy(c.id, "id \"x\"");
	strcpy(c.reply, "reply:key");
	js = tfs_cmd_build(&c);
	CHECK(js != NULL, "cmd: build returns text");
	rc = js ? cmd_parse(js, &back, err, sizeof(err)) : -1;
	CHECK(rc == 0, "cmd: build -> parse accepts");
	CHECK(rc == 0 && back.op == c.op && strcmp(back.name, c.name) == 0 &&
	      back.has_dtype && back.dtype == c.dtype && back.has_shape &&
	      tfs_shape_equal(&back.shape, &c.shape) && back.has_device && back.device == 0 &&
	      back.pid == c.pid && strcmp(back.node, c.node) == 0 && strcmp(back.id, c.id) == 0 &&
	      strcmp(back.reply, c.reply) == 0, "cmd: build -> parse round trip of every field");
	free(js);

	memset(&c, 0, sizeof(c));
	c.op = TFS_OP_DELETE;
	strcpy(c.name, "t");
	js = tfs_cmd_build(&c);
	rc = js ? cmd_parse(js, &back, err, sizeof(err)) : -1;
	CHECK(rc == 0 && back.op == TFS_OP_DELETE && strcmp(back.name, "t") == 0 &&
	      !back.has_dtype && !back.has_shape && !back.has_device && back.pid == 0 &&
	      back.node[0] == '\0' && back.id[0] == '\0' && back.reply[0] == '\0',
	      "cmd: build -> parse of a bare delete leaves optional fields absent");
	CHECK(js && strstr(js, "dtype") == NULL && strstr(js, "pid") == NULL &&
	      strstr(js, "reply") == NULL, "cmd: bare delete has no optional keys");
	free(js);

	memset(&c, 0, sizeof(c));
	c.op = TFS_OP_GET;
	strcpy(c.name, "g");
	c.has_shape = 1;                /* scalar */
	c.has_device = 1;
	c.device = 7;
	js = tfs_cmd_build(&c);
	rc = js ? cmd_parse(js, &back, err, sizeof(err)) : -1;
	CHECK(rc == 0 && back.op == TFS_OP_GET && back.has_shape && back.shape.ndim == 0 &&
	      back.device == 7, "cmd: build -> parse of get with scalar shape and device");
	free(js);
}

static void test_reply(void)
{
	struct tfs_meta m, back;
	char id[64], msg[128], *js;
	int rc;

	sample_meta(&m);
	js = tfs_reply_ok("req-17", "models/w1", &m);
	CHECK(js != NULL && strncmp(js, "{\"id\":\"req-17\",\"ok\":true,", 25) == 0,
	      "reply: ok starts with id and ok:true");
	memset(&back, 0, sizeof(back));
	strcpy(msg, "stale");
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, sizeof(id), msg, sizeof(msg)) : -1;
	CHECK(rc == 0, "reply: parse of ok reply returns 0");
	CHECK(rc == 0 && meta_equal(&m, &back), "reply: ok reply gives the metadata back");
	CHECK(strcmp(id, "req-17") == 0, "reply: ok reply gives the id");
	CHECK(msg[0] == '\0', "reply: ok reply clears msg");
	CHECK(js && tfs_reply_parse(js, strlen(js), &back, NULL, 0, NULL, 0) == 0,
	      "reply: parse with NULL id and msg");
	free(js);

	js = tfs_reply_ok(NULL, NULL, &m);
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, sizeof(id), msg, sizeof(msg)) : -1;
	CHECK(rc == 0 && id[0] == '\0', "reply: ok reply with NULL id gives empty id");
	free(js);

	js = tfs_reply_ok("quote\"and\\slash", "n", &m);
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, sizeof(id), msg, sizeof(msg)) : -1;
	CHECK(rc == 0 && strcmp(id, "quote\"and\\slash") == 0, "reply: id with quotes escaped");
	free(js);

	js = tfs_reply_err("req-18", EEXIST, "tensor 'x' exists");
	CHECK(js && strstr(js, "\"error\":\"EEXIST\"") && strstr(js, "\"ok\":false"),
	      "reply: err has error EEXIST and ok:false");
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, sizeof(id), msg, sizeof(msg)) : -1;
	CHECK(rc == -EEXIST, "reply: err EEXIST parses to -EEXIST");
	CHECK(strcmp(msg, "tensor 'x' exists") == 0, "reply: err message copied");
	CHECK(strcmp(id, "req-18") == 0, "reply: err id copied");
	free(js);

	js = tfs_reply_err("r", -ENOENT, NULL);
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, sizeof(id), msg, sizeof(msg)) : -1;
	CHECK(rc == -ENOENT && msg[0] == '\0', "reply: err -ENOENT (negative) with NULL message");
	free(js);

	js = tfs_reply_err("r", E2BIG, "a long message that will not fit");
	rc = js ? tfs_reply_parse(js, strlen(js), &back, id, 2, msg, 5) : -1;
	CHECK(rc == -E2BIG && strcmp(msg, "a lo") == 0 && strcmp(id, "r") == 0,
	      "reply: message and id truncated to their buffers");
	free(js);

	{
		const char *unk = "{\"id\":\"u\",\"ok\":false,\"error\":\"EWHATEVER\",\"message\":\"m\"}";
		const char *noerr = "{\"id\":\"u\",\"ok\":false}";
		static const char *malformed[] = {
			"", "nope", "[]", "{\"id\":\"x\"}", "{\"id\":\"x\",\"ok\":\"true\"}",
			"{\"id\":\"x\",\"ok\":1}", "{\"id\":\"x\",\"ok\":true}",
			"{\"id\":\"x\",\"ok\":true,\"dtype\":\"f32\"}", "{\"id\":\"x\",\"ok\":false",
		};
		char desc[160];

		CHECK(tfs_reply_parse(unk, strlen(unk), &back, id, sizeof(id), msg, sizeof(msg)) ==
		      -EIO && strcmp(msg, "m") == 0, "reply: unknown error name -> -EIO");
		CHECK(tfs_reply_parse(noerr, strlen(noerr), &back, id, sizeof(id), msg, sizeof(msg)) ==
		      -EIO, "reply: ok:false without error -> -EIO");
		for (size_t k = 0; k < sizeof(malformed) / sizeof(malformed[0]); k++) {
			snprintf(desc, sizeof(desc), "reply: malformed '%s' -EBADMSG", malformed[k]);
			CHECK(tfs_reply_parse(malformed[k], strlen(malformed[k]), &back, id,
					      sizeof(id), msg, sizeof(msg)) == -EBADMSG, desc);
		}
	}
}

/* ------------------------------------------------------------------ url */

/* ------------------------------------------------------------------ secret */

static void test_secret(void)
{
	static const char *const cases[][2] = {
		{ "redis://host", "redis://host" },
		{ "redis://:pw@host", "redis://:***@host" },
		{ "redis://pw@host:1/2", "redis://***@host:1/2" },
		{ "redis://u:p:q@h/3", "redis://u:***@h/3" },
		{ "redis://user:@h", "redis://user:@h" },
		{ "redis://u:p@ss@h:2", "redis://u:***@h:2" },
		{ "unix:///tmp/x.sock", "unix:///tmp/x.sock" },
		{ "unix://:secret@/run/r.sock?db=2", "unix://:***@/run/r.sock?db=2" },
		{ "unix://u7.q:pw@/run/r@x.sock", "unix://u7.q:***@/run/r@x.sock" },
		{ "unix://nocolon@/s", "unix://***@/s" },
		{ "http://u:pw@x", "http://u:***@x" },
		{ "not a url", "not a url" },
	};
	char out[200], desc[300], a0[] = "tensorfs", a1[] = "--redis=unix://admin:hunter2@/s",
	     a2[] = "-oredis=redis://:pw1@h,x=redis://u:pw22@h2/1,allow_other", a3[] = "/mnt",
	     a4[] = "-oredis=redis://:p@w@h,log=/var/log/a@b.log";
	char *argv[] = { a0, a1, a2, a3, a4 };
	struct tfs_redis_url u;
	char path[] = "/tmp/tfs-secret-XXXXXX";
	int fd, n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tfs_url_redact(cases[i][0], out, sizeof(out));
		snprintf(desc, sizeof(desc), "secret: '%s' redacted as '%s' (got '%s')", cases[i][0],
			 cases[i][1], out);
		CHECK(strcmp(out, cases[i][1]) == 0, desc);
		/* Where the parser finds a password, the redaction hid exactly it. */
		if (tfs_url_parse(cases[i][0], &u, NULL, 0) == 0 && u.password[0]) {
			snprintf(desc, sizeof(desc), "secret: '%s' keeps no byte of its password",
				 cases[i][0]);
			CHECK(!strstr(out, u.password), desc);
		}
	}
	tfs_url_redact("redis://:pw@host", out, 8);
	CHECK(strcmp(out, "redis:/") == 0, "secret: redaction truncates to the buffer");

	n = tfs_argv_scrub(5, argv);
	CHECK(n == 4, "secret: argv scrub takes out 4 passwords");
	CHECK(strcmp(a4, "-oredis=redis://:@h,log=/var/log/a@b.log") == 0,
	      "secret: an '@' in a later -o option is not the URL's");
	CHECK(strcmp(a1, "--redis=unix://admin:@/s") == 0, "secret: --redis=URL scrubbed");
	CHECK(strcmp(a2, "-oredis=redis://:@h,x=redis://u:@h2/1,allow_other") == 0,
	      "secret: both URLs of an -o list scrubbed");
	CHECK(memchr(a1, 'h', sizeof(a1)) == NULL && !memmem(a2, sizeof(a2), "pw", 2),
	      "secret: no byte of a password left in the argument strings' memory");
	CHECK(strcmp(a0, "tensorfs") == 0 && strcmp(a3, "/mnt") == 0,
	      "secret: other arguments untouched");
	CHECK(tfs_argv_scrub(5, argv) == 0, "secret: a second scrub finds nothing");

	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, "s3cret\nignored\n", 15) == 15, "secret: password file made");
	CHECK(tfs_password_file(path, out, sizeof(out), desc, sizeof(desc)) == 0 &&
	      strcmp(out, "s3cret") == 0, "secret: a 0600 file gives its first line");
	fchmod(fd, 0640);
	CHECK(tfs_password_file(path, out, sizeof(out), desc, sizeof(desc)) == -EPERM &&
	      strstr(desc, "chmod 600"), "secret: a group-readable file -EPERM, says chmod 600");
	fchmod(fd, 0600);
	CHECK(ftruncate(fd, 0) == 0 && tfs_password_file(path, out, sizeof(out), desc,
	      sizeof(desc)) == -EINVAL, "secret: an empty file -EINVAL");
	close(fd);
	unlink(path);

	setenv("TFS_TEST_PW", "envpw", 1);
	CHECK(tfs_env_take("TFS_TEST_PW", out, sizeof(out)) == 1 && strcmp(out, "envpw") == 0 &&
	      !getenv("TFS_TEST_PW"), "secret: env taken and unset");
	CHECK(tfs_env_take("TFS_TEST_PW", out, sizeof(out)) == 0, "secret: unset env: 0");
}

static void test_url(void)
{
	struct tfs_redis_url u;
	char err[256], desc[200], url[400];
	int rc;

	rc = tfs_url_parse("redis://host", &u, err, sizeof(err));
	CHECK(rc == 0 && !u.is_unix && strcmp(u.host, "host") == 0 && u.port == 6379 &&
	      u.db == 0 && u.user[0] == '\0' && u.password[0] == '\0', "url: redis://host");
	rc = tfs_url_parse("redis://host:6380/2", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.host, "host") == 0 && u.port == 6380 && u.db == 2,
	      "url: redis://host:6380/2");
	rc = tfs_url_parse("redis://127.0.0.1:65535/", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.host, "127.0.0.1") == 0 && u.port == 65535 && u.db == 0,
	      "url: redis://127.0.0.1:65535/ (empty db)");
	rc = tfs_url_parse("redis://:pw@host", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.host, "host") == 0 && u.user[0] == '\0' &&
	      strcmp(u.password, "pw") == 0 && u.port == 6379, "url: redis://:pw@host");
	rc = tfs_url_parse("redis://user:pw@host:1/3", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.host, "host") == 0 && strcmp(u.user, "user") == 0 &&
	      strcmp(u.password, "pw") == 0 && u.port == 1 && u.db == 3,
	      "url: redis://user:pw@host:1/3");
	rc = tfs_url_parse("redis://u:p:q@h", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.user, "u") == 0 && strcmp(u.password, "p:q") == 0 &&
	      strcmp(u.host, "h") == 0, "url: password may hold a colon");
	rc = tfs_url_parse("redis://u:p@ss@h", &u, err, sizeof(err));
	CHECK(rc == 0 && strcmp(u.password, "p@ss") == 0 && strcmp(u.host, "h") == 0,
	      "url: password may hold an '@'");
	rc = tfs_url_parse("unix:///tmp/x.sock", &u, err, sizeof(err));
	CHECK(rc == 0 && u.is_unix && strcmp(u.path, "/tmp/x.sock") == 0 && u.db == 0 &&
	      u.password[0] == '\0', "url: unix:///tmp/x.sock");
	rc = tfs_url_parse("unix:///tmp/x.sock?db=4", &u, err, sizeof(err));
	CHECK(rc == 0 && u.is_unix && strcmp(u.path, "/tmp/x.sock") == 0 && u.db == 4,
	      "url: unix:///tmp/x.sock?db=4");
	rc = tfs_url_parse("unix://:secret@/run/r.sock", &u, err, sizeof(err));
	CHECK(rc == 0 && u.is_unix && strcmp(u.path, "/run/r.sock") == 0 &&
	      strcmp(u.password, "secret") == 0, "url: unix://:secret@/run/r.sock");
	rc = tfs_url_parse("unix://u7.q:pw@/run/r.sock?db=2", &u, err, sizeof(err));
	CHECK(rc == 0 && u.is_unix && strcmp(u.path, "/run/r.sock") == 0 && u.db == 2 &&
	      strcmp(u.user, "u7.q") == 0 && strcmp(u.password, "pw") == 0,
	      "url: unix://user:password@/path (a per-user queue's credentials)");
	rc = tfs_url_parse("unix://nocolon@/run/r.sock", &u, err, sizeof(err));
	CHECK(rc == -EINVAL, "url: unix credentials without ':' refused");

	/* Longest unix path that fits sun_path (107 bytes + NUL). */
	strcpy(url, "unix://");
	url[7] = '/';
	memset(url + 8, 'p', 106);
	url[114] = '\0';
	rc = tfs_url_parse(url, &u, err, sizeof(err));
	CHECK(rc == 0 && strlen(u.path) == 107, "url: unix path of 107 bytes fits");

	{
		static const char *bad[] = {
			"http://x", "", "redis:/host", "redis://", "redis://host:0",
			"redis://host:99999", "redis://host:65536", "redis://host:", "redis://host:-1",
			"redis://host:12ab", "redis://host/abc", "redis://host/-1", "redis://host/1000001",
			"redis://:6379", "redis://user:pw@", "redis://user:pw@/2", "unix://relative",
			"unix://", "unix://?db=1", "unix:///tmp/x.sock?db=", "unix:///tmp/x.sock?db=x",
			"unix:///tmp/x.sock?foo=1",
		};
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			err[0] = '\0';
			rc = tfs_url_parse(bad[k], &u, err, sizeof(err));
			snprintf(desc, sizeof(desc), "url: '%s' -EINVAL with a reason", bad[k]);
			CHECK(rc == -EINVAL && err[0] != '\0', desc);
		}
	}
	/* Over-long unix path (108 bytes) and host. */
	strcpy(url, "unix://");
	url[7] = '/';
	memset(url + 8, 'p', 107);
	url[115] = '\0';
	CHECK(tfs_url_parse(url, &u, err, sizeof(err)) == -EINVAL,
	      "url: unix path of 108 bytes -EINVAL");
	strcpy(url, "redis://");
	memset(url + 8, 'h', 256);
	url[264] = '\0';
	CHECK(tfs_url_parse(url, &u, NULL, 0) == -EINVAL, "url: 256-byte host -EINVAL (err NULL)");
	memset(url + 8, 'h', 255);
	url[263] = '\0';
	CHECK(tfs_url_parse(url, &u, err, sizeof(err)) == 0 && strlen(u.host) == 255,
	      "url: 255-byte host ok");
	strcpy(url, "redis://:");
	memset(url + 9, 'w', 256);
	strcpy(url + 265, "@h");
	CHECK(tfs_url_parse(url, &u, err, sizeof(err)) == -EINVAL,
	      "url: 256-byte password -EINVAL");
}

/* Whole reads and writes, and the mapping of pages before a copy: what lies past the end
 * of a mapped file (SIGBUS to touch) is an error to tfs_populate, in every page its range
 * reaches, even from an unaligned start. */
static void test_fileio(void)
{
	char path[] = "/tmp/tfs-test-fileio.XXXXXX", buf[8192];
	long pg = sysconf(_SC_PAGESIZE);
	int fd = mkstemp(path), rc;
	char *m;

	CHECK(fd >= 0, "fileio: temporary file");
	if (fd < 0)
		return;
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	CHECK(tfs_pwrite_full(fd, buf, (size_t)pg, 0) == 0, "fileio: pwrite of a page");
	CHECK(tfs_pread_full(fd, buf, (size_t)pg, 0) == 0, "fileio: pread of that page");
	CHECK(tfs_pread_full(fd, buf, (size_t)pg + 1, 0) == -ENODATA, "fileio: pread past the end -ENODATA");
	m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "fileio: mapping of two pages over a one-page file");
	if (m != MAP_FAILED) {
		rc = tfs_populate(m + 100, (size_t)pg - 200, MADV_POPULATE_WRITE);
		CHECK(rc == 0 || rc == -EINVAL, "fileio: populate inside the file: 0 (or -EINVAL before 5.14)");
		if (rc == 0) {
			CHECK(tfs_populate(m + pg - 100, 200, MADV_POPULATE_WRITE) == -EFAULT,
			      "fileio: populate reaching past the end, from an unaligned start: -EFAULT");
			CHECK(tfs_populate(m + pg, (size_t)pg, MADV_POPULATE_READ) == -EFAULT,
			      "fileio: populate (read) of the page past the end: -EFAULT");
		}
		munmap(m, (size_t)pg * 2);
	}
	close(fd);
}

int main(void)
{
	test_dtype();
	test_shape();
	test_strutil();
	test_meta_fields();
	test_meta_json();
	test_meta_hsock();
	test_meta_misc();
	test_cmd_parse();
	test_cmd_build();
	test_reply();
	test_url();
	test_secret();
	test_fileio();
	return failures ? 1 : 0;
}
