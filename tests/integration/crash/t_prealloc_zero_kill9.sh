# After a SIGKILL of the daemon, a create in a preallocated host tier still reads zeros
# (docs/tiers.md#preallocation): the restarted daemon knows nothing of what the dead one
# freed, or of what lies past a shrunk tensor's end, so everything of an adopted segment
# but its tensors counts dirty (fs/mem/host_pool.h) and is zeroed when a create takes it.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/holders.sh"
. "$(dirname "$0")/../tiers/prealloc_zero.sh"

# x (3 MiB) and y (1 MiB) in the run, both written; x freed; y shrunk to 4 KiB, its
# capacity kept (what lies behind its end is still 0xff)
truncate -s 3M "$H/x"
truncate -s 1M "$H/y"
fill "$H/x"
fill "$H/y"
X=$(off "$H/x")
run=$(shm_of "$H/x")
rm "$H/x"
truncate -s 4K "$H/y"
check "the daemon starts again after its SIGKILL" kill_daemon "$M"
check "y is whole" cmp <(ones 4096) "$H/y"
eq "y is where it was" $((X + (3 << 20))) "$(off "$H/y")"

truncate -s 3M "$H/z"
eq "z (3 MiB) takes x's place in the adopted run" "$X" "$(off "$H/z")"
eq "in the run" "$run" "$(shm_of "$H/z")"
check "z reads zeros where x's bytes were" zeros "$H/z"
truncate -s $((1020 * K)) "$H/v"
eq "v takes what lies behind y's end" $((X + (3 << 20) + 4 * K)) "$(off "$H/v")"
check "v reads zeros where y's cut bytes were" zeros "$H/v"
truncate -s 4M "$H/w"
eq "w takes the rest of the run" "$run" "$(shm_of "$H/w")"
check "w reads zeros" zeros "$H/w"

# after the restart, frees are tracked again
fill "$H/z"
rm "$H/z"
truncate -s 2M "$H/u"
eq "u where z was" "$X" "$(off "$H/u")"
check "u reads zeros" zeros "$H/u"
finish
