# A raw file loads byte-exact: u8 and one dimension by default (17 MiB + 3 bytes: pieces of
# 8, 8 and 1 MiB + 3), or the dtype and shape given; it saves back to the same bytes.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
head -c $((17 * 1048576 + 3)) /dev/urandom > r.bin
check "load" "$CTL" load -q r.bin "$M/r"
eq "dtype" "u8" "$(xget "$M/r" dtype)"
eq "shape" "[$((17 * 1048576 + 3))]" "$(xget "$M/r" shape)"
check "the tensor's bytes are the file's" cmp r.bin "$M/r"
check "save back byte-identical" bash -c "'$CTL' save -q '$M/r' r.out && cmp r.bin r.out"
head -c $((4 * 3 * 1048576)) /dev/urandom > f.bin
check "load with --dtype f32 --shape 3,1048576" "$CTL" load -q --dtype f32 --shape 3,1048576 f.bin "$M/f"
eq "shape given" "[3,1048576]" "$(xget "$M/f" shape)"
check "its bytes" cmp f.bin "$M/f"
finish
