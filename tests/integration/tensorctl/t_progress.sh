# On a terminal (script(1) gives one) a load shows a progress bar, -q silences it; 80 MiB
# (>= 64 MiB: the two-thread direct copy) loads and saves byte-identical both ways.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
head -c $((80 << 20)) /dev/urandom > p.bin
bar() { script -qec "'$CTL' load p.bin '$M/p'" /dev/null | tr '\r' '\n' | grep -Eq '[KMGT]iB/s ETA'; }
silent() { [ -z "$(script -qec "'$CTL' load -q p.bin '$M/p2'" /dev/null)" ]; }
large_save() { "$CTL" save "$M/p2" p.out && cmp p.bin p.out && TENSORCTL_COPY=fuse "$CTL" save -f "$M/p2" p.out && cmp p.bin p.out; }
direct_load() { TENSORCTL_COPY=direct "$CTL" load p.bin "$M/p3" && cmp p.bin "$M/p3"; }
if command -v script >/dev/null; then
	check "progress bar on a terminal" bar
	check "-q silences it" silent
	check "progressed bytes are right" cmp p.bin "$M/p"
	check "large save round trip" large_save
	check "large direct load (two threads)" direct_load
else
	echo "skip - script(1) not installed: progress bar"
fi
finish
