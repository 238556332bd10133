# tensorctl create and tensorctl cp -r type and size each new tensor in one request:
# "DTYPE [SHAPE]" in user.tensor.shape (core/typed.c), as loads do, where dtype and shape
# apart took two SETXATTRs (and the kernel's GETATTR between them). Counted in the
# daemon's --debug log.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --debug || exit 1
setxattrs() { tail -n +"$(($1 + 1))" "$T/m.log" | grep -c "opcode: SETXATTR"; }
n=$(wc -l < "$T/m.log")
check "tensorctl create" "$CTL" create --dtype f32 --shape '[4,8]' "$M/t"
eq "one SETXATTR" 1 "$(setxattrs "$n")"
eq "its dtype" f32 "$(xget "$M/t" dtype)"
eq "its shape" "[4,8]" "$(xget "$M/t" shape)"
eq "its size" 128 "$(size_of "$M/t")"
mkdir "$M/src"
for i in 0 1 2; do "$CTL" create --dtype bf16 --shape "[$((i + 1)),16]" "$M/src/w$i"; done
n=$(wc -l < "$T/m.log")
check "tensorctl cp -r of 3 tensors" "$CTL" cp -r -q "$M/src" "$M/dst"
eq "one SETXATTR each" 3 "$(setxattrs "$n")"
for i in 0 1 2; do
	eq "  w$i: dtype and shape" "bf16 [$((i + 1)),16]" "$(xget "$M/dst/w$i" dtype) $(xget "$M/dst/w$i" shape)"
done
check_err "a shape the mount refuses: the error names the allocation" "allocate f32 \[1099511627776\]" \
	"$CTL" create --dtype f32 --shape '[1099511627776]' "$M/huge"
check "and the file made for it is gone" test ! -e "$M/huge"
umount_tfs "$M"
finish
