# A record edited by hand into garbage: the name stats with no permissions, its bytes and
# xattrs are EIO, rm removes it, the daemon logs it and serves everything else; a local
# tensor is served from memory, not from its edited record.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
touch "$M/g" "$M/t"
rcli hset tensorfs:tensor:g2 dtype nonsense shape '[[' bytes -5 node other >/dev/null
rcli hset tensorfs:dirents: g2 t >/dev/null
listed() { ls "$M" | grep -qx g2; }
eq "garbage record: stat shows no permissions" 0:0 "$(stat -c %a:%s "$M/g2")"
check_err "garbage record: reading fails with EIO" "Input/output error" cat "$M/g2"
check_err "garbage record: xattrs fail with EIO" "Input/output error" getfattr -n user.tensor.shape "$M/g2"
check "daemon alive after garbage" stat "$M/g"
check "ls still works with garbage present" listed
check "rm removes the garbage record" rm "$M/g2"
eq "garbage record gone" 0 "$(rcli exists tensorfs:tensor:g2)"
check "logged the malformed record" grep -q "malformed" "$T/m.log"
rcli hset tensorfs:tensor:t refcount banana >/dev/null
eq "local tensors are served from memory, not the edited record" 1 "$(xget "$M/t" refcount)"
finish
