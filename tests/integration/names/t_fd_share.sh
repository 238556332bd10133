# libtensorfs: a tensor the process holds open already is opened again without a FUSE
# request (lib/fd_share.c), unless another node replaced it.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
A=$T/a
B=$T/b
mount_tfs "$A" --node n1 --debug || exit 1
mount_tfs "$B" --node n2 || exit 1
# Until n2's kernel shows the new h (the change reaches it through Redis).
N2_SEES_8="for i in \$(seq 400); do [ \$(stat -c %s $B/h) = 8 ] && break; sleep 0.05; done"
share() { "$HELPERS/tfs_client_tool" share "$1" "$2" 2>&1 | sed 's/ cuda / host /' | paste -sd'|'; }
printf '0123' > "$A/h"
n=$(wc -l < "$T/a.log")
eq "tfs_open of a held tensor shares its descriptor; read-write opens apart" "u8 [4] 4 host ro|shared 1|shared 1|done" \
	"$(share "$A/h" true)"
eq "so the daemon saw two OPENs, not three" 2 "$(tail -n +"$((n + 1))" "$T/a.log" | grep -c "opcode: OPEN ")"
eq "a held tensor that another node replaced is opened anew" "u8 [8] 8 host ro|shared 0|shared 0|done" \
	"$(share "$B/h" "rm $A/h && printf 01234567 > $A/h && sync $A && $N2_SEES_8")"
finish
