# Shared by tests/integration/net/t_*.sh: two daemons as two nodes of one Redis, joined by
# UCX on the loopback only, each with the cluster key KEY (mode 600).
. "$(dirname "$0")/../lib.sh"
# UCX pinned: TCP over the loopback (the network path), unless a test sets UCX_TLS first.
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
export UCX_TLS=${UCX_TLS:-tcp}
export UCX_WARN_UNUSED_ENV_VARS=n
# make_key FILE [BYTES]: a random key only its owner reads
make_key() {
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$1"
	chmod 600 "$1"
}
# net_nodes [OPTS...]: $A (n1) and $B (n2) with the key $KEY, and OPTS for both
net_nodes() {
	start_redis || exit 1
	KEY=$T/cluster.key
	make_key "$KEY"
	A=$T/a
	B=$T/b
	mount_tfs "$A" --node n1 --cluster-key "$KEY" "$@" || exit 1
	mount_tfs "$B" --node n2 --cluster-key "$KEY" "$@" || exit 1
	cd "$T" || exit 1
	# Both addresses published (the network thread's first renewal).
	soon test -n "$(rcli get tensorfs:ucx:n1)" && soon test -n "$(rcli get tensorfs:ucx:n2)"
}
# rand_tensor PATH BYTES: a u8 tensor of BYTES random bytes, their copy in PATH.src
rand_tensor() {
	head -c "$2" /dev/urandom > "$T/$(basename "$1").src"
	cp "$T/$(basename "$1").src" "$1"
}
# waiting PID: a thread of PID is in ioctl(2) (tensorctl cp's pull, which the daemon
# answers once the other node did) or read(2): a transfer is under way and not done.
waiting() {
	local f
	for f in /proc/"$1"/task/*/syscall; do
		case $(cut -d' ' -f1 "$f" 2>/dev/null) in 16 | 17 | 0) return 0 ;; esac
	done
	return 1
}
# PY: python3 with this tree's package and BUILD's library; a sanitizer build's library
# needs its runtime loaded first, and Python's own allocations are not the test's leaks.
PY=(env PYTHONPATH="$ROOT/python" TENSORFS_LIBRARY="$ROOT/$BUILD/libtensorfs.so")
if ldd "$ROOT/$BUILD/libtensorfs.so" 2>/dev/null | grep -q libasan; then
	PY+=(LD_PRELOAD="$(cc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0)
fi
PY+=(/usr/bin/python3)
# TFS_TEST_NET_THREADS=N: every daemon of these tests mounted by mount_tfs runs
# -o net_threads=N (the suite is run with one network thread and with several), unless the
# test names its own.
if [ -n "${TFS_TEST_NET_THREADS:-}" ]; then
	eval "$(declare -f mount_tfs | sed '1s/mount_tfs/_mount_tfs_plain/')"
	mount_tfs() {
		local d=$1
		shift
		case " $* " in
		*net_threads=*) _mount_tfs_plain "$d" "$@" ;;
		*) _mount_tfs_plain "$d" "$@" -o net_threads="$TFS_TEST_NET_THREADS" ;;
		esac
	}
fi
