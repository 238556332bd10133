# While Redis is away, open/close cycles of a tensor do not pile up one queued write each:
# the refcount writes of one tensor merge into one, so what is replayed when Redis is back
# stays small (it was two writes per cycle, all replayed).
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
echo data > "$M/a"
exec 3<"$M/a"
rcli shutdown nosave >/dev/null 2>&1
wait "$REDIS_PID" 2>/dev/null; REDIS_PID=
okn=0; for _ in $(seq 1000); do : 2>/dev/null < "$M/a" && okn=$((okn + 1)); done
eq "opens work while Redis is away" 1000 "$okn"
start_redis || exit 1
for _ in $(seq 200); do [ "$(redis-cli -s "$SOCK" exists tensorfs:tensor:a)" = 1 ] && break; sleep 0.1; done
sync "$M"; sleep 0.5
# Every HSET the new server ran (INFO counts them from its start: no race with the replay).
n=$(redis-cli -s "$SOCK" info commandstats | sed -n 's/^cmdstat_hset:calls=\([0-9]*\),.*/\1/p')
check "the record is back" [ "$(rcli exists tensorfs:tensor:a)" = 1 ]
check "1000 open/close cycles replay a few writes, not 2000 ($n HSETs)" [ "${n:-0}" -gt 0 -a "${n:-0}" -lt 50 ]
eq "the refcount counts the open fd" 2 "$(rcli hget tensorfs:tensor:a refcount)"
exec 3<&-
finish
