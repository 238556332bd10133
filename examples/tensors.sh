#!/usr/bin/env bash
# Tensors with only coreutils and attr tools:  examples/tensors.sh /mnt/tensors
# Creates, inspects, fills, copies and removes tensors under MOUNT/examples-sh.
set -euo pipefail
M=${1:?usage: $0 MOUNTPOINT}
D=$M/examples-sh
mkdir -p "$D"

# create: an empty tensor, then dtype and shape allocate it (zeroed)
touch "$D/a"
setfattr -n user.tensor.dtype -v f32 "$D/a"
setfattr -n user.tensor.shape -v '[4,4]' "$D/a"

# inspect
echo "size: $(stat -c %s "$D/a") bytes"
getfattr -n user.tensor.dtype -n user.tensor.shape -n user.tensor.bytes --only-values "$D/a" | tr '\0' ' '
echo
getfattr -d -m 'user\.tensor\.' "$D/a" | grep -v ipc_handle

# fill: 64 bytes of 0x01 written in place (conv=notrunc keeps the shape)
head -c 64 /dev/zero | tr '\0' '\001' | dd of="$D/a" conv=notrunc status=none
od -An -tx1 -N8 "$D/a"

# copy: cp makes a new tensor, 1-D u8 of the same bytes; cmp proves it
cp "$D/a" "$D/b"
cmp "$D/a" "$D/b" && echo "copy matches: shape $(getfattr --only-values -n user.tensor.shape "$D/b")"

# remove
rm "$D/a" "$D/b"
rmdir "$D"
echo "removed"
