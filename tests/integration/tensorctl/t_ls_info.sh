# tensorctl ls (names, -l columns, one tensor, TENSORFS_MOUNT) and info (every field, user
# attributes, --json), and their errors.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
ctl_two
ls_names() { "$CTL" ls "$M" | paste -sd' ' | grep -qx 'a d/ sc'; }
ls_long() { "$CTL" ls -l "$M" | grep -Eq '^f32 +\[2,3,4\] +96 +0 +1 +n1 +a$'; }
ls_header() { "$CTL" ls -l "$M" | head -1 | grep -q 'DTYPE.*SHAPE.*BYTES.*DEVICE.*REFCOUNT.*NODE'; }
ls_one() { "$CTL" ls -l "$M/a" | grep -q '96'; }
ls_relative() { TENSORFS_MOUNT=$M "$CTL" ls -l | grep -q ' a$'; }
info_all() {
	"$CTL" info "$M/a" > info.out && grep -q '^dtype *f32' info.out && grep -q '^shape *\[2,3,4\]' info.out &&
		grep -q '^ipc_handle *[0-9a-f]\{128\}' info.out && grep -q '^refcount *1' info.out && grep -q '^node *n1' info.out
}
info_user() { "$CTL" info "$M/a" | grep -q 'owner=alice'; }
info_json() {
	"$CTL" info --json "$M/a" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin); assert m["dtype"]=="f32" and m["shape"]==[2,3,4] and m["bytes"]==96, m'
}
check "ls lists names" ls_names
check "ls -l has dtype shape bytes device refcount node" ls_long
check "ls -l header" ls_header
check "ls of one tensor" ls_one
check "TENSORFS_MOUNT makes names relative" ls_relative
check "info shows everything" info_all
setfattr -n user.owner -v alice "$M/a"
check "info shows user attributes" info_user
check "info --json is the meta object" info_json
fails_with "info of a missing tensor" "No such file" "$CTL" info "$M/nope"
fails_with "info of a directory" "Is a directory" "$CTL" info "$M/d"
finish
