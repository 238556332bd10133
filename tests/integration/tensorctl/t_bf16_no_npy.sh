# A dtype .npy cannot hold (bf16) fails to save with one message and leaves neither the
# file nor a temporary one.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
no_temp() { ! ls | grep -q "tensorctl-\|tfs-"; }
"$CTL" create "$M/h" --dtype bf16 --shape 4
fails_with "bf16 has no .npy form" "no .npy equivalent" "$CTL" save "$M/h" h.npy
gone h.npy "failed save"
check "no temporary file left by a failed save" no_temp
finish
