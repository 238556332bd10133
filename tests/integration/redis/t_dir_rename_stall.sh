# A directory rename is atomic across a Redis stall (issue 32, item 9): Redis stopped for
# 2 s before or during `mv big big2` (4,500 tensors) leaves the whole tree under one name,
# in Redis and through the mount, before and after a kill -9 of the daemon; its tensors
# keep their bytes; a retry is answered as for any tree that moved, never EREMOTE.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --backend host
N=3000
mkdir "$M/big"
make_empty "$M/big" "$N"
printf 'first' > "$M/big/t0"
printf 'last' > "$M/big/t$((N - 1))"
mkdir "$M/big/sub"; printf 'deep' > "$M/big/sub/x"
/usr/bin/python3 -c 'import os, sys
for i in range(1500): os.close(os.open("%s/s%d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY))' "$M/big/sub"
TOTAL=$(redis-cli -s "$SOCK" --scan --pattern "tensorfs:tensor:big/*" | wc -l)
stall() { kill -STOP "$REDIS_PID"; sleep 2; kill -CONT "$REDIS_PID"; }
keys() { redis-cli -s "$SOCK" --scan --pattern "tensorfs:tensor:$1/*" | wc -l; }
# whole: the tree is under exactly one of big and big2, all of it; prints which.
whole() {
	local a b la lb
	a=$(keys big); b=$(keys big2)
	la=$(ls "$M/big" "$M/big/sub" 2>/dev/null | grep -c '^[ts]')
	lb=$(ls "$M/big2" "$M/big2/sub" 2>/dev/null | grep -c '^[ts]')
	if [ "$a" = "$TOTAL" ] && [ "$b" = 0 ] && [ "$la" = "$TOTAL" ] && [ "$lb" = 0 ]; then echo big
	elif [ "$b" = "$TOTAL" ] && [ "$a" = 0 ] && [ "$lb" = "$TOTAL" ] && [ "$la" = 0 ]; then echo big2
	else echo "split: Redis $a under big, $b under big2; listed $la and $lb"; fi
}
# bytes_kept DIR: the tensors written before read back the same under DIR
bytes_kept() { [ "$(cat "$M/$1/t0")" = first ] && [ "$(cat "$M/$1/t$((N - 1))")" = last ] && [ "$(cat "$M/$1/sub/x")" = deep ]; }
# settled: the daemon serves metadata changes again (the move was settled)
settled() { for _ in $(seq 400); do touch "$M/probe" 2>/dev/null && rm -f "$M/probe" && return 0; sleep 0.05; done; return 1; }
eq "the tree is whole to begin with" big "$(whole)"

# 1. Redis stops before the rename: its answer is lost, whether it ran is settled later.
kill -STOP "$REDIS_PID"
( sleep 2; kill -CONT "$REDIS_PID" ) & cont=$!
mv "$M/big" "$M/big2" 2>"$T/mv.err"; rc=$?
wait "$cont"
check "the daemon settles it once Redis is back" settled
w=$(whole); echo "# after a stall before the rename (mv exited $rc): $w"
check "whole under one name ($w)" test "$w" = big -o "$w" = big2
check "its tensors keep their bytes" bytes_kept "$w"
other=big2; [ "$w" = big2 ] && other=big
mv "$M/$other" "$M/big3" 2>"$T/retry.err"
check "a retry of the old name: ENOENT, not EREMOTE" grep -q "No such file" "$T/retry.err"
check "the daemon restarted after kill -9" kill9_and_serve "$M"
eq "still whole under $w after the restart" "$w" "$(whole)"
check "its tensors keep their bytes" bytes_kept "$w"

# 2. Redis stops as soon as one of ten tensors of the subdirectory shows under the new
# name: a rename made of many steps is then part-way; one made in one step is over.
probe=(); for i in $(seq 0 9); do probe+=("tensorfs:tensor:$other/sub/s$i"); done
( redis-cli -s "$SOCK" -r 200000 -i 0 exists "${probe[@]}" | grep -q -m1 -v '^0$'
  stall ) & staller=$!
sleep 0.5     # the probe under way (no harm if not: the stall then comes later)
mv "$M/$w" "$M/$other" 2>"$T/mv.err"; rc=$?
wait "$staller"
check "the daemon settles it once Redis is back" settled
w2=$(whole); echo "# after a stall during the rename (mv exited $rc): $w2"
check "whole under one name ($w2)" test "$w2" = big -o "$w2" = big2
check "its tensors keep their bytes" bytes_kept "$w2"
check "the daemon restarted after kill -9" kill9_and_serve "$M"
eq "still whole under $w2 after the restart" "$w2" "$(whole)"
check "a rename back works" mv "$M/$w2" "$M/back"
check "and keeps the bytes" bytes_kept back
check "rm -r of the tree" rm -rf "$M/back"
eq "no record left" "" "$(rcli keys 'tensorfs:tensor:*')"
finish
