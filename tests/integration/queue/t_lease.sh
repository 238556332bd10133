# Holds nobody could reap are refused, and leased holds go when their holder stops
# renewing (issue 15, item 3): a holder on another node, in a container or in another pid
# namespace takes a hold with "lease":S and renews it ("op":"renew") within S seconds.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
jfield() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d.get('$2'))" "$1" 2>/dev/null || echo PARSE_ERROR; }
touch "$M/t"
r=$(qsend '{"op":"get","name":"t","pid":1234,"node":"elsewhere"}')
eq "another node's pid without a lease: refused" ESRCH "$(jfield "$r" error)"
r=$(qsend '{"op":"get","name":"t","pid":4000000}')
eq "a pid that does not exist here: refused" ESRCH "$(jfield "$r" error)"
eq "neither took a reference" 1 "$(xget "$M/t" refcount)"
r=$(qsend '{"op":"get","name":"t","pid":1234,"node":"elsewhere","lease":2}')
eq "with a lease: held" True "$(jfield "$r" ok)"
r=$(qsend '{"op":"get","name":"t","pid":77,"node":"container","lease":2}')
eq "a second leased holder" True "$(jfield "$r" ok)"
eq "refcount 3" 3 "$(xget "$M/t" refcount)"
# container renews every half second for 3 s; elsewhere does not.
for _ in 1 2 3 4 5 6; do
	r=$(qsend '{"op":"renew","name":"t","pid":77,"node":"container","lease":2}')
	[ "$(jfield "$r" ok)" = True ] || break
	sleep 0.5
done
eq "renewals answered" True "$(jfield "$r" ok)"
eq "the holder that stopped renewing was dropped, the other kept" 2 "$(xget "$M/t" refcount)"
eq "its Redis field went too" "" "$(rcli hget tensorfs:tensor:t holder:elsewhere:1234)"
for _ in $(seq 50); do [ "$(xget "$M/t" refcount)" = 1 ] && break; sleep 0.1; done
eq "then the renewing one, once it stops" 1 "$(xget "$M/t" refcount)"
r=$(qsend '{"op":"renew","name":"t","pid":77,"node":"container","lease":2}')
eq "renew of a hold that is gone: ESRCH" ESRCH "$(jfield "$r" error)"
r=$(qsend '{"op":"renew","name":"t","pid":77}')
eq "renew without a lease: EINVAL" EINVAL "$(jfield "$r" error)"
r=$(qsend '{"op":"get","name":"t","pid":1,"lease":1e9}')
eq "a lease out of range: EINVAL" EINVAL "$(jfield "$r" error)"
rm "$M/t"
eq "nothing held: the memory is free" 0 "$(used_bytes "$M")"
finish
