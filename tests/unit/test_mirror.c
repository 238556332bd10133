/* The node's mirror of its Redis records (fs/store/mirror.c): what goes in comes back out under
 * the right key, renames and tree moves carry records and attributes, and nothing else. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fs/store/mirror.c"
#include "../../fs/util/hash.c"

#include "tap.h"

static struct tfs_dirrec rec(uint32_t mode, uint32_t uid)
{
	struct tfs_dirrec d;

	memset(&d, 0, sizeof(d));
	d.mode = mode;
	d.uid = uid;
	return d;
}

static int has_dir(const char *key, uint32_t mode)
{
	struct tfs_dirrec d;

	return tfs_mirror_dir_get(key, &d) && d.mode == mode;
}

/* The value of attribute name of key: 1 when it is value[size]. */
static int attr_is(const char *key, const char *name, const char *value, size_t size)
{
	struct tfs_mirror_item *it;
	int n = tfs_mirror_snapshot(key, 1, &it), found = 0;

	for (struct tfs_mirror_attr *a = n == 1 ? it[0].attrs : NULL; a; a = a->next)
		if (strcmp(a->name, name) == 0)
			found = a->size == size && memcmp(a->value, value, size) == 0;
	tfs_mirror_snapshot_free(it, n > 0 ? n : 0);
	return found;
}

static int count(const char *prefix)
{
	struct tfs_mirror_item *it;
	int n = tfs_mirror_snapshot(prefix, 0, &it);

	tfs_mirror_snapshot_free(it, n > 0 ? n : 0);
	return n;
}

static void test_records(void)
{
	struct tfs_dirrec d = rec(0750, 65534);

	tfs_mirror_dir_put("p:dir:a", &d);
	ok(has_dir("p:dir:a", 0750), "a record put comes back");
	d.mode = 0700;
	tfs_mirror_dir_put("p:dir:a", &d);
	ok(has_dir("p:dir:a", 0700), "a second put replaces it");
	ok(!has_dir("p:dir:b", 0700), "an unknown key has none");
	tfs_mirror_attr_set("p:dir:a", -1, "tag", "x\0y", 3);
	ok(attr_is("p:dir:a", "tag", "x\0y", 3), "an attribute keeps its bytes (a NUL inside)");
	tfs_mirror_attr_set("p:dir:a", -1, "tag", "zz", 2);
	ok(attr_is("p:dir:a", "tag", "zz", 2), "set again: replaced");
	tfs_mirror_attr_set("p:dir:a", -1, "empty", "", 0);
	ok(attr_is("p:dir:a", "empty", "", 0), "an empty value is kept");
	tfs_mirror_attr_drop("p:dir:a", "tag");
	ok(!attr_is("p:dir:a", "tag", "zz", 2), "dropped");
	tfs_mirror_attr_drop("p:dir:nothing", "tag");
	ok(count("p:dir:nothing") == 0, "dropping from an unknown key makes no entry");
	tfs_mirror_forget("p:dir:a");
	ok(!has_dir("p:dir:a", 0700) && count("p:dir:a") == 0, "forgotten: record and attributes");
}

static void test_moves(void)
{
	struct tfs_dirrec d = rec(0711, 0);

	tfs_mirror_attr_set("p:tensor:t", -1, "note", "n", 1);
	tfs_mirror_rename("p:tensor:t", "p:unlinked:n1:1");
	ok(attr_is("p:unlinked:n1:1", "note", "n", 1) && count("p:tensor:t") == 0,
	   "a rename carries the attributes");
	tfs_mirror_dir_put("p:dir:x", &d);
	tfs_mirror_dir_put("p:dir:x/y", &d);
	tfs_mirror_dir_put("p:dir:xy", &d);
	tfs_mirror_attr_set("p:tensor:x/y/t", -1, "note", "deep", 4);
	tfs_mirror_dir_put("q:dir:x", &d);
	tfs_mirror_move_tree("p", "x", "z/w");
	ok(has_dir("p:dir:z/w", 0711) && has_dir("p:dir:z/w/y", 0711), "a tree move moves the directory and those under it");
	ok(attr_is("p:tensor:z/w/y/t", "note", "deep", 4), "and the attributes of its tensors");
	ok(!has_dir("p:dir:x", 0711) && !has_dir("p:dir:x/y", 0711), "nothing left under the old name");
	ok(has_dir("p:dir:xy", 0711), "a sibling sharing the name's first letters stays");
	ok(has_dir("q:dir:x", 0711), "another prefix's keys stay");
	d.mode = 0705;
	tfs_mirror_dir_put("p:dir:xy", &d);
	tfs_mirror_rename("p:dir:xy", "p:dir:z/w");
	ok(has_dir("p:dir:z/w", 0705) && count("p:dir:xy") == 0 && count("p:dir:z/w") == 2,
	   "a rename onto a known key replaces it (one entry, beside z/w/y)");
}

/* The bytes charged to each owner follow every set, replace, removal, owner change,
 * rename and forget: what the quotas of xattr.c read. */
static void test_charges(void)
{
	struct tfs_dirrec d = rec(0755, 7);

	tfs_mirror_attr_set("q:tensor:f", 5, "ab", "xyz", 3);
	ok(tfs_mirror_attr_check("q:tensor:f", 5, "c", 4, 10, 100) == 0, "5 + 5 bytes fit 10");
	ok(tfs_mirror_attr_check("q:tensor:f", 5, "c", 5, 10, 100) == -ENOSPC,
	   "5 + 6 do not: ENOSPC");
	ok(tfs_mirror_attr_check("q:tensor:g", 5, "c", 5, 10, 10) == -EDQUOT,
	   "another file of the same owner: 5 + 6 past its 10: EDQUOT");
	ok(tfs_mirror_attr_check("q:tensor:g", 0, "c", 50, 100, 10) == 0, "root has no quota");
	ok(tfs_mirror_attr_check("q:tensor:f", 5, "ab", 2, 1, 1) == 0,
	   "a smaller value always goes");
	tfs_mirror_attr_set("q:tensor:f", -1, "ab", "x", 1);
	ok(tfs_mirror_attr_check("q:tensor:g", 5, "c", 5, 10, 10) == 0,
	   "a value replaced by a smaller one gives bytes back");
	tfs_mirror_owner("q:tensor:f", 6);
	ok(tfs_mirror_attr_check("q:tensor:g", 5, "c", 9, 10, 10) == 0 &&
	   tfs_mirror_attr_check("q:tensor:g", 6, "c", 8, 10, 10) == -EDQUOT,
	   "chown moves the charge");
	tfs_mirror_rename("q:tensor:f", "q:unlinked:n:1");
	ok(tfs_mirror_attr_check("q:tensor:g", 6, "c", 8, 10, 10) == -EDQUOT,
	   "a rename keeps it");
	tfs_mirror_attr_drop("q:unlinked:n:1", "ab");
	ok(tfs_mirror_attr_check("q:tensor:g", 6, "c", 9, 10, 10) == 0, "a removal frees it");
	tfs_mirror_attr_set("q:dir:d", -1, "k", "vvvv", 4);
	tfs_mirror_dir_put("q:dir:d", &d);
	ok(tfs_mirror_attr_check("q:tensor:g", 7, "c", 5, 10, 10) == -EDQUOT,
	   "a directory's record names whom its attributes are charged to");
	tfs_mirror_forget("q:dir:d");
	ok(tfs_mirror_attr_check("q:tensor:g", 7, "c", 9, 10, 10) == 0, "rmdir frees them");
}

int main(void)
{
	test_records();
	test_moves();
	test_charges();
	printf("# %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
