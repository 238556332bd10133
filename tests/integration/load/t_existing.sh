# A load into a name that exists is refused (EEXIST) and leaves the existing tensor as it
# was, bytes and all.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c 4096 /dev/urandom > old.bin
head -c 8192 /dev/urandom > new.bin
"$CTL" load -q old.bin "$M/x" || exit 1
check_err "refused" "File exists" "$CTL" load -q new.bin "$M/x"
check "the existing tensor's bytes are unchanged" cmp old.bin "$M/x"
eq "and its shape" "[4096]" "$(xget "$M/x" shape)"
finish
