# A get without a pid is refused: its hold could never be reaped and would pin the
# tensor's memory for good (issue 15, item 3).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
touch "$M/x"
r=$(qsend '{"op":"get","name":"x"}')
eq "get without pid: EINVAL" EINVAL "$(jfield "$r" error)"
eq "no holder recorded" "" "$(rcli hkeys tensorfs:tensor:x | grep holder)"
eq "refcount still 1" 1 "$(xget "$M/x" refcount)"
rm "$M/x"
eq "rm frees it: statfs back to 0" 0 "$(used_bytes "$M")"
eq "and no record left" 0 "$(rcli exists tensorfs:tensor:x)"
finish
