#!/usr/bin/env bash
# The FUSE request path against its ceiling (issue 19), in one run, alternating passes:
# nullfs (tests/bench/nullfs.c: replies from a static buffer, writes discarded; again
# with NULLFS_SERIAL_WRITES=1, the kernel taking one write to a file at a time; and with
# NULLFS_MEM=1, the bytes held in memory, one copy per request as any in-memory file
# system makes) and tensorfs
# host and cuda mounts (cuda where a GPU is), each: 1 MiB pread/pwrite in 1 and 8 streams
# (tfsbench io), `cat` and `dd bs=16M` of the whole file.
#   tests/bench/fusepath.sh [BUILD [BASE_BUILD]]
# BASE_BUILD: a second build (another commit's daemon) mounted beside BUILD's, for an A/B
# in the same run (NEW_OPTS, BASE_OPTS: daemon options for each). URING=1: also BUILD's
# daemon with -o io_uring (requests over io_uring, Linux 6.14+), with
# /sys/module/fuse/parameters/enable_uring Y for the run and put back after; the other
# mounts stay on /dev/fuse (nullfs's libfuse 3.14 does not ask for the ring, and the
# others are not told to). Prints one Markdown table of medians over PASSES passes (default 3).
# Needs root (FUSE) and redis-server; BUILD built by make.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}
BASE=${2:-}
BUILD=$B
. tests/integration/lib.sh
PASSES=${PASSES:-3}
IO_BYTES=${IO_BYTES:-$((1 << 30))}      # per pread/pwrite measurement
CAT_BYTES=${CAT_BYTES:-$((2 << 30))}    # the file cat and dd read whole
BENCH=$ROOT/$B/bench/tfsbench
NULLFS=$ROOT/$B/bench/nullfs
RES=$T/results

if [ -n "${URING:-}" ]; then
	ENABLE=/sys/module/fuse/parameters/enable_uring
	[ -w "$ENABLE" ] || { echo "URING=1: $ENABLE is not writable (root, Linux 6.14+)"; exit 1; }
	URING_PREV=$(cat "$ENABLE")
	restore_uring() { echo "$URING_PREV" > "$ENABLE"; }
	eval "$(trap -p EXIT | sed "s/^trap -- '/trap -- 'restore_uring; /")"
	echo Y > "$ENABLE"
fi
start_redis || exit 1
# Per filesystem: big, of IO_BYTES, for tfsbench; cat, of CAT_BYTES, for cat and dd.
names=() files=() cats=() NULL_PIDS=() NULL_DIRS=()
# mount_nullfs NAME DIR [VAR=VALUE...]: nullfs on $T/DIR, with those variables set
mount_nullfs() {
	local name=$1 d=$T/$2
	shift 2
	names+=("$name") files+=("$d/big") cats+=("$d/cat")
	mkdir -p "$d"
	env "$@" NULLFS_BYTES="$CAT_BYTES" "$NULLFS" -f "$d" 2>"$d.log" &
	NULL_PIDS+=($!) NULL_DIRS+=("$d")
	# NULLFS_MEM touches its 2 GiB before it mounts
	for _ in $(seq 300); do mountpoint -q "$d" && return 0; sleep 0.05; done
	echo "nullfs did not mount on $d"; cat "$d.log"; exit 1
}
mount_nullfs nullfs null
mount_nullfs "nullfs, serial writes" nulls NULLFS_SERIAL_WRITES=1
mount_nullfs "nullfs, bytes in memory" nullm NULLFS_MEM=1

backends=(host)
[ -e /dev/nvidiactl ] && backends+=(cuda)
i=0
for be in "${backends[@]}"; do
	for v in new ${BASE:+base} ${URING:+uring}; do
		bin=$TFS
		if [ "$v" = base ]; then
			bin=$BASE/tensorfs
			[[ $BASE = /* ]] || bin=$ROOT/$BASE/tensorfs
		fi
		m=$T/$be-$v
		opts=${NEW_OPTS:-}
		[ "$v" = base ] && opts=${BASE_OPTS:-}
		[ "$v" = uring ] && opts="${NEW_OPTS:-} -o io_uring"
		# shellcheck disable=SC2086 # the options split into words
		TFS=$bin mount_tfs "$m" --node n$i --prefix p$i --queue q$i --backend "$be" $opts || exit 1
		if [ "$v" = uring ]; then
			soon grep -q "io_uring: serving over" "$T/$(basename "$m").log" ||
				{ echo "$m: not served over io_uring:"; cat "$T/$(basename "$m").log"; exit 1; }
			names+=("$be io_uring${BASE:+ (new)}")
		else
			names+=("$be${BASE:+ $v}")
		fi
		files+=("$m/big") cats+=("$m/cat")
		# Sized and written once: the passes time copies, not allocation or first touch.
		"$BENCH" io "$m/big" "$IO_BYTES" 1 write >/dev/null || exit 1
		"$BENCH" io "$m/cat" "$CAT_BYTES" 1 write >/dev/null || exit 1
		i=$((i + 1))
	done
done

# gbps FILE CMD...: runs CMD, prints FILE's size / CMD's wall time in GB/s
gbps() {
	local t0 t1 b=$(stat -c %s "$1")
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || { echo fail; return; }
	t1=$(date +%s.%N)
	awk -v b="$b" -v a="$t0" -v z="$t1" 'BEGIN {printf "%.2f\n", b / (z - a) / 1e9}'
}

for p in $(seq "$PASSES"); do
	for k in "${!names[@]}"; do
		f=${files[$k]}
		for s in 1 8; do
			for op in read write; do
				v=$("$BENCH" io "$f" "$IO_BYTES" $s $op | awk '{print $2}')
				echo "$k ${op}_$s ${v:-fail}" >>"$RES"
			done
		done
		c=${cats[$k]}
		echo "$k cat $(gbps "$c" cat "$c")" >>"$RES"
		echo "$k dd $(gbps "$c" dd if="$c" of=/dev/null bs=16M)" >>"$RES"
	done
done

echo "# $(date -u +%FT%TZ) $(uname -n) $(uname -r); $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1); $(nproc) CPUs; libfuse $(pkg-config --modversion fuse3 2>/dev/null); fs.pipe-max-size $(cat /proc/sys/fs/pipe-max-size); fuse max_pages_limit $(cat /proc/sys/fs/fuse/max_pages_limit 2>/dev/null), enable_uring $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null); median of $PASSES passes, GB/s"
grep -ho "reads: [a-z ]*" "$T"/*.log 2>/dev/null | sort | uniq -c | sed 's/^ */# /'
echo
echo "| filesystem | read 1 | write 1 | read 8 | write 8 | cat | dd bs=16M |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for k in "${!names[@]}"; do
	printf "| %s" "${names[$k]}"
	for m in read_1 write_1 read_8 write_8 cat dd; do
		awk -v k="$k" -v m="$m" '$1 == k && $2 == m {print $3}' "$RES" | sort -g |
			awk '{v[NR] = $1} END {printf " | %s", NR ? v[int((NR + 1) / 2)] : "-"}'
	done
	echo " |"
done
echo
echo "all passes (filesystem index, measurement, GB/s):"
sort -k1,1n -k2,2 "$RES" | awk '{a[$1" "$2] = a[$1" "$2] " " $3} END {for (x in a) print "  " x ":" a[x]}' | sort
for d in "${NULL_DIRS[@]}"; do fusermount3 -u "$d"; done
wait "${NULL_PIDS[@]}"
cd /
finish
