# tensorctl rm: a tensor, a missing name (-f quiet), an empty directory, a full one only
# with -r.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
ctl_two
check "rm a tensor" "$CTL" rm "$M/sc"
gone "$M/sc" "rm"
fails_with "rm of a missing name" "No such file" "$CTL" rm "$M/sc"
check "rm -f of a missing name" "$CTL" rm -f "$M/sc"
check "rm an empty dir" "$CTL" rm "$M/d"
mkdir -p "$M/d/e" && "$CTL" create "$M/d/e/t" --dtype u8 --shape 4
fails_with "rm a full dir without -r" "not empty" "$CTL" rm "$M/d"
check "rm -r a tree" "$CTL" rm -r "$M/d"
gone "$M/d" "rm -r"
finish
