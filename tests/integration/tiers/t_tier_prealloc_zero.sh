# A create in a preallocated host tier reads zeros (docs/tiers.md#preallocation): the pool
# zeroes only what freed tensors left (fs/mem/dirty_ranges.h), so every way a freed
# tensor's bytes could reach a new one is tried: a smaller tensor where it was, a larger
# one over the rest of it, a neighbour's range and fresh memory at once, a grow in place
# into it, a shrink then a grow, a tensor over the whole run; each read through the mount
# and through its handle.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/prealloc_zero.sh"

# a (3 MiB) takes the run, b (1 MiB) lies behind it
truncate -s 3M "$H/a"
check "a new tensor from fresh memory reads zeros" zeros "$H/a"
fill "$H/a"
truncate -s 1M "$H/b"
fill "$H/b"
check "a's bytes are written" cmp <(ones $((3 << 20))) "$H/a"
A=$(off "$H/a")
eq "b lies right behind a" $((A + (3 << 20))) "$(off "$H/b")"
run=$(shm_of "$H/a")
eq "in the same run" "$run" "$(shm_of "$H/b")"

rm "$H/a"
truncate -s $((2560 * K)) "$H/c"
eq "c (2.5 MiB) takes a's place" "$A" "$(off "$H/c")"
eq "in the run" "$run" "$(shm_of "$H/c")"
check "c reads zeros where a's bytes were" zeros "$H/c"

rm "$H/b"
truncate -s 3M "$H/d"
eq "d (3 MiB) lies over the rest of a, all of b and fresh memory" $((A + 2560 * K)) "$(off "$H/d")"
check "d reads zeros" zeros "$H/d"

# grow in place: c into what d leaves
fill "$H/c"
fill "$H/d"
rm "$H/d"
truncate -s 4M "$H/c"
eq "c grows in place" "$A" "$(off "$H/c")"
check "c keeps its bytes" cmp <(ones $((2560 * K))) <(head -c $((2560 * K)) "$H/c")
check "and grows into zeros where d was" zeros "$H/c" $((2560 * K))
# a shrink, then a grow: what was cut reads zeros
fill "$H/c"
truncate -s 1M "$H/c"
truncate -s 4M "$H/c"
check "shrunk then grown: zeros behind the first MiB" zeros "$H/c" $((1 << 20))

# the whole run: every byte of it was some tensor's
rm "$H/c"
truncate -s 8M "$H/e"
eq "e (8 MiB) takes the whole run" "$run" "$(shm_of "$H/e")"
check "e reads zeros" zeros "$H/e"
rm "$H/e"

# many tensors freed between live ones, then one over all of them
for i in $(seq 0 31); do truncate -s 128K "$H/s$i"; fill "$H/s$i"; done
for i in $(seq 0 2 31); do rm "$H/s$i"; done
for i in $(seq 0 2 31); do truncate -s 64K "$H/s$i"; done
bad=
for i in $(seq 0 2 31); do zeros "$H/s$i" >/dev/null || bad="$bad s$i"; done
eq "16 holes reused by smaller tensors: every one reads zeros" "" "$bad"
rm "$H"/s*
truncate -s 8M "$H/f"
check "one over all of them reads zeros" zeros "$H/f"
finish
