# Raw files: load as 1-D u8 or with a dtype and shape that must fit, save byte-identical,
# save refuses to overwrite unless -f, and no output off a terminal.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
head -c 3000000 /dev/urandom > raw.bin
quiet() { "$CTL" load raw.bin "$M/quiet" 2>err.txt && [ ! -s err.txt ]; }
check "load raw" "$CTL" load raw.bin "$M/raw"
check "raw bytes in the tensor" cmp raw.bin "$M/raw"
eq "raw is 1-D u8" "[3000000]" "$(xget "$M/raw" shape)"
check "save raw" "$CTL" save "$M/raw" raw.out
check "raw round trip byte-identical" cmp raw.bin raw.out
check "load raw with dtype and shape" "$CTL" load --dtype f32 --shape 750,1000 raw.bin "$M/rawf"
eq "raw dtype" f32 "$(xget "$M/rawf" dtype)"
eq "raw shape" "[750,1000]" "$(xget "$M/rawf" shape)"
fails_with "raw with a wrong shape" "needs" "$CTL" load --dtype f32 --shape 10 raw.bin "$M/rawbad"
gone "$M/rawbad" "raw with a wrong shape"
fails_with "save over an existing file" "File exists" "$CTL" save "$M/raw" raw.out
check "save -f replaces it" "$CTL" save -f "$M/rawf" raw.out
check "quiet when not on a terminal" quiet
finish
