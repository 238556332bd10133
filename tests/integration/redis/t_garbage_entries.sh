# Garbage in Redis does not take a directory down: entries that cannot be names are left
# out of listings, and a record of the wrong Redis type shows as a mode-0 file that rm
# removes (issue 15, item 16).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/good"
rcli hset tensorfs:dirents: "bad/name" t >/dev/null
rcli hset tensorfs:dirents: "" t >/dev/null
rcli hset tensorfs:dirents: "." d >/dev/null
check "ls of the root still works" ls "$M"
eq "and lists the good name" good "$(ls "$M" | grep -x good)"
eq "and none of the garbage" 0 "$(ls -a "$M" | grep -c '/\|^$')"
rcli set tensorfs:tensor:str "not a hash" >/dev/null
rcli hset tensorfs:dirents: str t >/dev/null
eq "a record that is a string shows as a mode-0 file" "0 regular empty file" "$(stat -c '%a %F' "$M/str" 2>&1)"
check "rm removes it" rm -f "$M/str"
eq "its key is gone" 0 "$(rcli exists tensorfs:tensor:str)"
check "the name is gone" test ! -e "$M/str"
finish
