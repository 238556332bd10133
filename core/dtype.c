#include <errno.h>
#include <string.h>

#include "dtype.h"
#include "strutil.h"

struct dtype_info {
	const char *name;
	const char *aliases[3];
	uint8_t size;
	uint8_t dl_code;
};

static const struct dtype_info dtypes[TFS_DTYPE_COUNT] = {
	[TFS_BOOL]   = { "bool",   { "bool_", "b1", NULL },          1, 6 },
	[TFS_U8]     = { "u8",     { "uint8", "ubyte", NULL },       1, 1 },
	[TFS_I8]     = { "i8",     { "int8", "byte", NULL },         1, 0 },
	[TFS_U16]    = { "u16",    { "uint16", "ushort", NULL },     2, 1 },
	[TFS_I16]    = { "i16",    { "int16", "short", NULL },       2, 0 },
	[TFS_U32]    = { "u32",    { "uint32", "uint", NULL },       4, 1 },
	[TFS_I32]    = { "i32",    { "int32", "int", NULL },         4, 0 },
	[TFS_U64]    = { "u64",    { "uint64", "ulong", NULL },      8, 1 },
	[TFS_I64]    = { "i64",    { "int64", "long", NULL },        8, 0 },
	[TFS_F16]    = { "f16",    { "float16", "half", NULL },      2, 2 },
	[TFS_BF16]   = { "bf16",   { "bfloat16", NULL, NULL },       2, 4 },
	[TFS_F32]    = { "f32",    { "float32", "float", NULL },     4, 2 },
	[TFS_F64]    = { "f64",    { "float64", "double", NULL },    8, 2 },
	/* DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2: a consumer older than 1.1 refuses
	 * the code rather than reading the bytes as 8-bit IEEE floats. */
	[TFS_F8E4M3] = { "f8e4m3", { "float8_e4m3fn", "f8_e4m3", NULL }, 1, 10 },
	[TFS_F8E5M2] = { "f8e5m2", { "float8_e5m2", "f8_e5m2", NULL },   1, 12 },
};

int tfs_dtype_parse(const char *s, size_t len, tfs_dtype *out)
{
	tfs_trim(&s, &len);
	if (len == 0)
		return -EINVAL;
	for (int i = 0; i < TFS_DTYPE_COUNT; i++) {
		if (tfs_streq_n(dtypes[i].name, s, len)) {
			*out = (tfs_dtype)i;
			return 0;
		}
		for (int a = 0; a < 3 && dtypes[i].aliases[a]; a++) {
			if (tfs_streq_n(dtypes[i].aliases[a], s, len)) {
				*out = (tfs_dtype)i;
				return 0;
			}
		}
	}
	return -EINVAL;
}

const char *tfs_dtype_name(tfs_dtype dt)
{
	return (unsigned)dt < TFS_DTYPE_COUNT ? dtypes[dt].name : "?";
}

size_t tfs_dtype_size(tfs_dtype dt)
{
	return (unsigned)dt < TFS_DTYPE_COUNT ? dtypes[dt].size : 0;
}

int tfs_dtype_dlpack(tfs_dtype dt, uint8_t *code, uint8_t *bits)
{
	if ((unsigned)dt >= TFS_DTYPE_COUNT)
		return -EINVAL;
	*code = dtypes[dt].dl_code;
	*bits = (uint8_t)(dtypes[dt].size * 8);
	return 0;
}
