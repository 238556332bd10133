# The queue fuzzer (issue 15): a few thousand hostile commands (truncated JSON, wrong
# types, huge numbers, NULs, deep nesting, reply keys aimed at the daemon's own keys, names
# with "..", "/" and newlines). Every command that names a readable reply is answered
# exactly once, no reply lands on a key that is not a reply key, the daemon keeps serving,
# and once the names are removed and the holders gone nothing is left: no memory, records,
# holds or shared-memory objects. FUZZ_N and FUZZ_SEED change the run.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 --max-bytes 256M || exit 1
N=${FUZZ_N:-3000}
SEED=${FUZZ_SEED:-$RANDOM}
echo "# seed $SEED, $N commands"
mkdir "$M/d"; touch "$M/keep"
rcli set fz:string s >/dev/null; rcli hset fz:hash f v >/dev/null
sleep 600 & live=$!
true & dead=$!; wait $dead
/usr/bin/python3 "$(dirname "$0")/fuzz_gen.py" "$T/ids" "$N" "$live" "$SEED" "$dead" > "$T/cmds.resp"
expected=$(grep -c . "$T/ids")
redis-cli -s "$SOCK" --pipe < "$T/cmds.resp" > "$T/pipe.out" 2>&1
check "all $N commands pushed" grep -q "errors: 0, replies: $N" "$T/pipe.out"
# Wait until the queue is drained and the replies stop coming (bounded: 60 s).
last=-1
for _ in $(seq 120); do
	n=$(rcli llen fz:replies)
	[ "$(rcli llen tensor_lifecycle)" = 0 ] && [ "$n" = "$last" ] && [ "$n" -ge "$expected" ] && break
	last=$n; sleep 0.5
done
rcli lrange fz:replies 0 -1 > "$T/replies"
/usr/bin/python3 - "$T/replies" "$T/ids" > "$T/answered" <<'PY'
import json, sys
got = {}
bad = 0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        i = json.loads(line)["id"]
    except Exception:
        bad += 1
        continue
    got[i] = got.get(i, 0) + 1
want = set(open(sys.argv[2]).read().split())
missing = [i for i in want if i not in got]
twice = [i for i, n in got.items() if n > 1]
extra = [i for i in got if i not in want]
print(len(missing), len(twice), len(extra), bad, " ".join(sorted(missing)[:10]))
PY
read -r missing twice extra bad ex < "$T/answered"
eq "every answerable command answered ($expected)" 0 "$missing"
[ "$missing" = 0 ] || echo "#   first missing: $ex"
eq "none answered twice" 0 "$twice"
eq "no unexpected answers" 0 "$extra"
eq "every answer is JSON" 0 "$bad"
eq "the root's record is still a hash" hash "$(rcli type tensorfs:dir:)"
eq "its entries too" hash "$(rcli type tensorfs:dirents:)"
eq "d's record too" hash "$(rcli type tensorfs:dir:d)"
check "no reply made a list of a tensor record" sh -c "[ \"\$(redis-cli -s $SOCK type tensorfs:tensor:keep)\" != list ]"
eq "the queue is a list (or drained)" none "$(rcli type tensor_lifecycle)"
eq "a user's string is untouched" "string -1" "$(rcli type fz:string) $(rcli ttl fz:string)"
eq "a user's hash is untouched" "hash -1" "$(rcli type fz:hash) $(rcli ttl fz:hash)"
eq "no daemon key has a TTL but the registry's" "" "$(rcli --scan --pattern 'tensorfs:*' | grep -v '^tensorfs:alive:' | while read -r k; do [ "$(redis-cli -s "$SOCK" ttl "$k")" = -1 ] || echo "$k"; done)"
check "the mount still works" stat "$M/d"
r=$(qsend '{"op":"create","name":"after","dtype":"u8","shape":[1]}')
check "the daemon keeps serving" sh -c "echo '$r' | grep -q '\"ok\":true'"
# Nothing left once the names go and the holders are gone (leases are at most 2 s).
kill $live; wait $live 2>/dev/null
find "$M" -mindepth 1 -type f -delete; find "$M" -mindepth 1 -type d -delete
# An empty tensor held by a lease uses no memory: wait for its record as well.
for _ in $(seq 60); do
	[ "$(used_bytes "$M")" = 0 ] && [ -z "$(rcli --scan --pattern 'tensorfs:unlinked:*')" ] && break
	sleep 0.1
done
eq "statfs: no memory in use" 0 "$(used_bytes "$M")"
eq "no tensor records" "" "$(rcli --scan --pattern 'tensorfs:tensor:*')"
eq "no unlinked records" "" "$(rcli --scan --pattern 'tensorfs:unlinked:*')"
pid=${MNT_PID[$M]}
# Empty blocks of packed tensors go a second or two after the last (docs/handles.md).
soon test -z "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
eq "no shared-memory objects" "" "$(ls /dev/shm | grep "^tensorfs\.$pid\." || true)"
check "the daemon is alive" kill -0 "$pid"
finish
