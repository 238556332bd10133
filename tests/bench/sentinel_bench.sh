#!/bin/bash
# How far one Sentinel group carries: a daemon mounted with --redis sentinel://... on a
# group of one primary, one replica and three sentinels (tests/integration/sentinel/
# group.sh), all on 127.0.0.1. Measures, on the primary:
#   - creates per second through the mount (one process: open O_EXCL, write 64 bytes,
#     close), and the primary's CPU seconds per create (INFO cpu), so its ceiling:
#     1 / (CPU per create) creates per second, all nodes together;
#   - Redis commands per create (INFO stats total_commands_processed);
#   - bytes per tensor: MEMORY USAGE of the records, and used_memory per tensor (records,
#     directory entries and Redis's own overhead);
#   - what one idle node costs the primary per second (its lease, its queue): commands
#     and CPU, so how many nodes one primary serves at a given share of its CPU;
#   - the same creates from a second daemon given the primary's redis:// address.
# Usage: tests/bench/sentinel_bench.sh [BUILD] (N=10000 tensors, IDLE_S=20).
BUILD=${1:-build}
export BUILD
N=${N:-10000}
IDLE_S=${IDLE_S:-20}
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/sentinel/group.sh"
sentinel_group 5000 || exit 1
info() { pcli info "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}'; }
cpu() { echo "$(info cpu used_cpu_user) + $(info cpu used_cpu_sys)" | bc -l; }
# The group alone first (sentinels' pings and INFO, the replica's acknowledgements).
c0=$(info stats total_commands_processed); u0=$(cpu)
sleep "$IDLE_S"
c1=$(info stats total_commands_processed); u1=$(cpu)
base_c=$(echo "($c1 - $c0) / $IDLE_S" | bc -l); base_u=$(echo "($u1 - $u0) * 1000 / $IDLE_S" | bc -l)
URL=$SURL
M=$T/m
mount_tfs "$M" --node n1 --backend host || exit 1
mkdir "$M/b"
sleep 2
c0=$(info stats total_commands_processed); u0=$(cpu); m0=$(info memory used_memory)
t0=$(date +%s.%N)
/usr/bin/python3 - "$M/b" "$N" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 64
for i in range(n):
    with open("%s/t%d" % (d, i), "xb") as f:
        f.write(data)
PY
[ $? = 0 ] || { echo "not ok - the creates failed:"; grep -v "info:" "$T/m.log" | tail -5; FAILS=1; }
tfs_flush
t1=$(date +%s.%N)
c1=$(info stats total_commands_processed); u1=$(cpu); m1=$(info memory used_memory)
wall=$(echo "$t1 - $t0" | bc -l)
cpu_per=$(echo "($u1 - $u0) / $N" | bc -l)
samples=$(for i in $(seq 0 $((N / 100)) $((N - 1))); do echo "memory usage tensorfs:tensor:b/t$i samples 0"; done)
mu=$(echo "$samples" | pcli | awk '{s += $1; n++} END {printf "%.0f", s / n}')
dirents=$(pcli memory usage tensorfs:dirents:b samples 0)
printf '# %d creates through the mount in %.2f s: %.0f creates/s\n' "$N" "$wall" "$(echo "$N / $wall" | bc -l)"
printf '# primary: %.1f commands per create, %.1f us CPU per create: ceiling %.0f creates/s\n' \
	"$(echo "($c1 - $c0) / $N" | bc -l)" "$(echo "$cpu_per * 1000000" | bc -l)" "$(echo "1 / $cpu_per" | bc -l)"
printf '# bytes per tensor: MEMORY USAGE of a record %d, its directory entry %.0f, used_memory %.0f\n' \
	"$mu" "$(echo "$dirents / $N" | bc -l)" "$(echo "($m1 - $m0) / $N" | bc -l)"
c0=$(info stats total_commands_processed); u0=$(cpu)
sleep "$IDLE_S"
c1=$(info stats total_commands_processed); u1=$(cpu)
idle_c=$(echo "($c1 - $c0) / $IDLE_S - $base_c" | bc -l); idle_u=$(echo "($u1 - $u0) * 1000 / $IDLE_S - $base_u" | bc -l)
# The same creates from a second daemon given the primary's address (redis://), in the
# same run: what the sentinel:// resolution costs, which is nothing once connected.
URL=redis://127.0.0.1:$(primary_port)
M2=$T/m2
mount_tfs "$M2" --node n2 --prefix direct --backend host || exit 1
mkdir "$M2/b"
t0=$(date +%s.%N)
/usr/bin/python3 - "$M2/b" "$N" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 64
for i in range(n):
    with open("%s/t%d" % (d, i), "xb") as f:
        f.write(data)
PY
tfs_flush
t1=$(date +%s.%N)
printf '# the same %d creates through redis://127.0.0.1:PORT (no sentinel): %.0f creates/s\n' \
	"$N" "$(echo "$N / ($t1 - $t0)" | bc -l)"
printf '# the group alone: %.1f commands/s, %.2f ms CPU/s of the primary\n' "$base_c" "$base_u"
printf '# one idle node more: %.1f commands/s, %.2f ms CPU/s of the primary\n' "$idle_c" "$idle_u"
finish
