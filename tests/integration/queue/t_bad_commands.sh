# Bad commands get an error reply naming the errno (unknown dtype or op, bad shapes, no
# space, bad names, a missing parent) and leave nothing half-made.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
nothing_half_made() { [ ! -e "$M/bad4" ] && [ "$(rcli exists tensorfs:tensor:bad4)" = 0 ]; }
r=$(send '{"op":"create","name":"bad1","dtype":"f99","shape":[1]}')
eq "unknown dtype: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"explode","name":"x"}')
eq "unknown op: EINVAL" EINVAL "$(jfield "$r" error)"
check "unknown op message names it" grep -q explode <<< "$r"
r=$(send '{"op":"create","name":"bad2","dtype":"f32","shape":[-1]}')
eq "negative dim: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"bad3","dtype":"f32","shape":[4294967296,4294967296,4]}')
eq "overflowing shape: EOVERFLOW" EOVERFLOW "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"bad4","dtype":"f32","shape":[1024,1024,1024]}')
eq "over --max-bytes: ENOSPC" ENOSPC "$(jfield "$r" error)"
check "nothing half-made after ENOSPC" nothing_half_made
r=$(send '{"op":"create","name":"../etc","dtype":"f32","shape":[1]}')
eq "bad name: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(send '{"op":"create","name":"nodir/x","dtype":"f32","shape":[1]}')
eq "missing parent: ENOENT" ENOENT "$(jfield "$r" error)"
finish
