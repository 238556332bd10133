/* Unit tests of the keeper's link of an allocation to the one it continues (keeper.h,
 * TFS_KEEPER_LINK_AT: a --memory vmm tensor grown in place) on raw handle bytes: written
 * little-endian where the VMM handle has zeros, read back, absent in a handle without it,
 * and the bytes before it untouched. */
#include <stdint.h>
#include <string.h>

#include "mem/keeper/keeper.h"
#include "tap.h"

int main(void)
{
	uint8_t h[TFS_IPC_HANDLE_SIZE], ref[TFS_IPC_HANDLE_SIZE];
	uint64_t head = 77, off = 77;

	memset(h, 0, sizeof(h));
	memcpy(h, "TFSVMM01", 8);
	for (int i = 8; i < 32; i++)
		h[i] = (uint8_t)(i * 7);
	memcpy(ref, h, sizeof(h));
	ok(tfs_keeper_link_get(h, &head, &off) == 0 && head == 0 && off == 0,
	   "a handle without a link: 0");
	tfs_keeper_link_put(h, 0x0102030405060708ull, 4194304);
	ok(!memcmp(h, ref, TFS_KEEPER_LINK_AT), "the link leaves the bytes before it alone");
	ok(h[48] == 0x08 && h[55] == 0x01 && h[56] == 0x00 && h[58] == 0x40 && h[63] == 0,
	   "little-endian at bytes 48..63");
	ok(tfs_keeper_link_get(h, &head, &off) == 1 && head == 0x0102030405060708ull &&
	   off == 4194304, "read back");
	tfs_keeper_link_put(h, UINT64_MAX, UINT64_MAX);
	ok(tfs_keeper_link_get(h, &head, &off) == 1 && head == UINT64_MAX && off == UINT64_MAX,
	   "the largest values");
	tfs_keeper_link_put(h, 0, 12345);
	ok(tfs_keeper_link_get(h, &head, &off) == 0 && off == 12345,
	   "head 0 is no link (ids start at 1)");
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
