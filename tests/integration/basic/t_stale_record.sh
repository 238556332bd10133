# A record left under a free name (a crash, a hand edit) is replaced whole at create:
# none of its fields, holders or user xattrs survive into the new tensor.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
no_stale_xattr() { ! getfattr -d "$M/st" 2>/dev/null | grep -q stale; }
rcli hset tensorfs:tensor:st node n1 x:stale 1 holder:gone:7 1 >/dev/null
check "create over a stale record" touch "$M/st"
eq "its extra fields are gone" 0 "$(rcli hexists tensorfs:tensor:st x:stale)$(rcli hexists tensorfs:tensor:st holder:gone:7 | tr -d 0)"
eq "the new record counts 1" 1 "$(rcli hget tensorfs:tensor:st refcount)"
check "no stale user xattr shows" no_stale_xattr
finish
