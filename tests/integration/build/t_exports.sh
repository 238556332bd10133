#!/usr/bin/env bash
# libtensorfs.so exports exactly the calls that tensorfs.h declares: nothing of core/ or
# of the library's insides leaks into the ABI, and nothing the header promises is missing.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${BUILD:-build}
so=$ROOT/$BUILD/libtensorfs.so
fails=0
[ -e "$so" ] || { echo "not ok - $so is missing"; exit 1; }
exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWiD]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
# Functions of the header: a tfs_ name directly followed by "(" on a declaration line.
declared=$(grep -v '^[[:space:]]*\*\|^[[:space:]]*/\*\|^#' "$ROOT/lib/tensorfs.h" |
	grep -oE '\btfs_[a-z0-9_]+\(' | tr -d '(' | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -z "$extra" ]; then echo "ok - libtensorfs.so exports nothing beyond tensorfs.h"
else echo "not ok - libtensorfs.so exports symbols not in tensorfs.h:"; echo "$extra" | sed 's/^/      /'; fails=1; fi
if [ -z "$missing" ]; then echo "ok - every call of tensorfs.h is exported ($(echo "$declared" | wc -l) calls)"
else echo "not ok - calls of tensorfs.h not exported:"; echo "$missing" | sed 's/^/      /'; fails=1; fi
n=$(echo "$exported" | grep -vc '^tfs_')
if [ "$n" -eq 0 ]; then echo "ok - every exported symbol is tfs_*"; else echo "not ok - $n exported symbols are not tfs_*"; fails=1; fi
exit $fails
