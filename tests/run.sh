#!/usr/bin/env bash
# tests/run.sh [-j N] [BUILD...]: the unit tests and the integration tests of each build
# folder given (default: build build-asan), the Python package's tests on the builds
# without ASan, the GPU tests, then the library's tests under valgrind on the first build
# without ASan. Ends with the line "N passed, N failed[, N skipped]".
#
# Each test program or script is a job; N jobs run at once (-j N, else $JOBS, else the
# number of CPUs): every integration script has its own redis-server and mounts, so they
# do not see each other. A job's output goes to a file of its own and is printed whole
# when the job ends, its result lines labelled "[BUILD/NAME] ok - ..." (tests/tally.sh),
# then "    # BUILD/NAME: S s". Jobs start longest first, as the last run measured them
# (BUILD/test-times of the first build). Where a CUDA device is present the GPU tests
# (tests/gpu/t_*.sh) run after all the others, one at a time: they fill the GPU.
#
# Integration tests need root (FUSE mounts), redis-server, fusermount3, getfattr.
# TESTS="basic/t_xattrs queue/t_batch posix/t_efbig" limits the integration files run
# ("python": the Python package's tests, tests/python/run.sh; a GPU test by its file name
# without .sh: "t_ipc").
set -u
cd "$(dirname "$0")/.."
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
	echo "tests/run.sh: needs bash 5.1 or later (wait -n -p), not $BASH_VERSION" >&2
	exit 2
fi

usage() { echo "usage: tests/run.sh [-j N] [BUILD...]" >&2; exit 2; }
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
while getopts j: o; do
	case $o in
	j) jobs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: -j wants a number of jobs, 1 or more, not '$jobs'" >&2; exit 2; }
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(build build-asan)

# Every job's output, sanitizer reports and figures live in WORK/<n>/.
WORK=$(mktemp -d /tmp/tfs-run.XXXXXX)

. tests/tally.sh

# The jobs, in the order given: LABEL (what the result lines are labelled with), NAME (what
# a failure of the job as a whole is called), CMD (a command line, quoted with %q),
# EXCL (1: runs alone, after the others).
jlabel=() jname=() jcmd=() jexcl=()
# job LABEL NAME EXCL CMD...
job() {
	local label=$1 name=$2 excl=$3 q
	shift 3
	printf -v q '%q ' "$@"
	jlabel+=("$label") jname+=("$name") jexcl+=("$excl") jcmd+=("$q")
}
wanted() { [ -z "${TESTS:-}" ] || [[ " $TESTS " == *" $1 "* ]]; }

gpu_excl=0
[ -e /dev/nvidiactl ] && gpu_excl=1
for b in "${builds[@]}"; do
	# The Python package (tests/python/run.sh: venv, offline pip install, pytest), on builds
	# without ASan: an ASan libtensorfs cannot be loaded into python3. Listed first: it is
	# one of the longest jobs.
	if [[ "$b" != *asan* ]] && wanted python; then
		job "$b/python" python 0 timeout 900 tests/python/run.sh "$b"
	fi
	for t in "$b"/tests/test_*; do
		[ -x "$t" ] || continue
		job "$b/$(basename "$t")" "$(basename "$t")" 0 "$t"
	done
	# Unit tests that are scripts (tests/unit/t_*.sh): they check the build BUILD names.
	for f in tests/unit/t_*.sh; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sh)
		job "$b/$name" "$name" 0 env BUILD="$b" timeout 600 bash "$f"
	done
	for f in tests/integration/*/t_*.sh; do
		[ -e "$f" ] || continue
		name=${f#tests/integration/}; name=${name%.sh}
		wanted "$name" || continue
		# A script that changes state the whole machine shares (the fuse module's
		# enable_uring parameter) says "# tfs-test: alone" and runs by itself, after
		# the others: beside it, another test would see the ring come and go.
		excl=0
		grep -q '^# tfs-test: alone' "$f" && excl=1
		job "$b/$name" "$name" "$excl" env BUILD="$b" timeout 600 bash "$f"
	done
	# GPU tests: without a CUDA device (or before make test-gpu built their helpers) each
	# prints "skip - ..." lines.
	for f in tests/gpu/t_*.sh; do
		[ -e "$f" ] || continue
		wanted "$(basename "$f" .sh)" || continue
		name=gpu/$(basename "$f" .sh)
		job "$b/$name" "$name" "$gpu_excl" env BUILD="$b" timeout 600 bash "$f"
	done
done
# The valgrind pass (issue 4): the unit tests of libtensorfs and the client tests
# (tests/integration/client/, TFS_VALGRIND=1: their client programs run under
# tests/valgrind.sh; the daemon stays native, ASan checks it), on the first build given
# without ASan (its programs cannot run under valgrind).
vgb=
for b in "${builds[@]}"; do [[ "$b" == *asan* ]] || { vgb=$b; break; }; done
vgtests=(test_client test_lib)
for f in tests/integration/client/t_*.sh; do
	name=${f#tests/integration/}; name=${name%.sh}
	wanted "$name" && vgtests+=("$name")
done
for t in "${vgtests[@]}"; do
	if [ -z "$vgb" ]; then
		job "valgrind/$t" "$t under valgrind" 0 echo "skip - $t under valgrind: no build without ASan among: ${builds[*]}"
	elif ! command -v valgrind >/dev/null; then
		job "$vgb/valgrind/$t" "$t under valgrind" 0 echo "skip - $t under valgrind: valgrind is not installed (scripts/install-deps.sh installs it)"
	elif [[ "$t" == client/* ]]; then
		job "$vgb/valgrind/$t" "$t under valgrind" 0 env TFS_VALGRIND=1 BUILD="$vgb" timeout 600 bash "tests/integration/$t.sh"
	else
		job "$vgb/valgrind/$t" "$t under valgrind" 0 tests/valgrind.sh "$vgb/tests/$t"
	fi
done

# The seconds each job took the last time, by label: the longest start first, so that
# none of them is left to run alone at the end. Jobs never measured go first, in their
# order.
TIMES=${builds[0]}/test-times
declare -A secs=()
if [ -r "$TIMES" ]; then
	while read -r s l; do [[ "$s" =~ ^[0-9]+$ ]] && secs[$l]=$s; done < "$TIMES"
fi
order=()
while read -r _ i; do order+=("$i"); done < <(
	for i in "${!jlabel[@]}"; do echo "${secs[${jlabel[$i]}]:-100000} $i"; done | sort -s -k1,1nr)

# san_reports NAME DIR: a "not ok" per sanitizer report in DIR, shown in full.
san_reports() {
	local f
	for f in "$2"/*; do
		[ -e "$f" ] || continue
		echo "not ok - $1: sanitizer report $(basename "$f")"
		sed 's/^/      /' "$f" | head -60
	done
}

# run_job I: job I, in a subshell of its own, with its output in WORK/I/out.
# LeakSanitizer: a leak makes the daemon exit non-zero, which teardown reports. The reports
# go to files (a daemon's stderr is its log, which a test may have removed), one folder per
# job, and each one is a failure of that job.
run_job() {
	local i=$1 d=$WORK/$1 t0=$SECONDS rc
	mkdir -p "$d/san"
	export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23:log_path=$d/san/asan"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$d/san/ubsan"
	eval "${jcmd[$i]}" > "$d/out" 2>&1 < /dev/null
	rc=$?
	{
		[ $rc -eq 0 ] || echo "not ok - ${jname[$i]} exited $rc"
		san_reports "${jname[$i]}" "$d/san"
	} >> "$d/out"
	echo $((SECONDS - t0)) > "$d/secs"
}

# Running jobs: pid -> job index.
declare -A running=()
# reap: waits for one running job to end and prints its output.
reap() {
	local pid i s
	wait -n -p pid "${!running[@]}"
	i=${running[$pid]}
	unset "running[$pid]"
	s=$(cat "$WORK/$i/secs" 2>/dev/null || echo 0)
	count "${jlabel[$i]}" < "$WORK/$i/out"
	echo "    # ${jlabel[$i]}: $s s"
	secs[${jlabel[$i]}]=$s
}
# Interrupted: TERM to each running job and to its children; timeout passes it on to the
# test script, whose EXIT trap unmounts and stops its Redis. (timeout runs in a process
# group of its own, which a ^C at the terminal does not reach.)
stop_jobs() {
	local p
	for p in "${!running[@]}"; do kill -TERM $(ps -o pid= --ppid "$p") "$p" 2>/dev/null; done
	wait
	rm -rf "$WORK"
	exit 130
}
trap stop_jobs INT TERM

t_start=$SECONDS
for phase in 0 1; do
	for i in "${order[@]}"; do
		[ "${jexcl[$i]}" = "$phase" ] || continue
		# Exclusive jobs run one at a time, after the others.
		while [ ${#running[@]} -ge $([ "$phase" = 1 ] && echo 1 || echo "$jobs") ]; do reap; done
		run_job "$i" & running[$!]=$i
	done
	while [ ${#running[@]} -gt 0 ]; do reap; done
done
echo "    # ${#jlabel[@]} jobs, $jobs at a time: $((SECONDS - t_start)) s"
{ for l in "${!secs[@]}"; do echo "${secs[$l]} $l"; done | sort -k2 > "$TIMES.new" &&
	mv "$TIMES.new" "$TIMES"; } 2>/dev/null
rm -rf "$WORK"
summary
