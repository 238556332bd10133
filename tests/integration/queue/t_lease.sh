# Holds nobody could reap are refused, and leased holds go when their holder stops
# renewing (issue 15, item 3): a holder on another node, in a container or in another pid
# namespace takes a hold with "lease":S and renews it ("op":"renew") within S seconds.
. "$(dirname "$0")/../lib.sh"
start_redis || exit 1
M=$T/m
mount_tfs "$M" --node n1 || exit 1
touch "$M/t"
r=$(qsend '{"op":"get","name":"t","pid":1234,"node":"elsewhere"}')
eq "another node's pid without a lease: refused" ESRCH "$(jfield "$r" error)"
r=$(qsend '{"op":"get","name":"t","pid":4000000}')
eq "a pid that does not exist here: refused" ESRCH "$(jfield "$r" error)"
eq "neither took a reference" 1 "$(xget "$M/t" refcount)"
# elsewhere takes a 10 s lease and never renews it; container takes one of 60 s and renews
# it. Nothing here depends on how fast the machine is: the renewing holder's lease is far
# longer than any wait, and every wait polls for the event with a generous deadline.
r=$(qsend '{"op":"get","name":"t","pid":1234,"node":"elsewhere","lease":10}')
eq "with a lease: held" True "$(jfield "$r" ok)"
r=$(qsend '{"op":"get","name":"t","pid":77,"node":"container","lease":60}')
eq "a second leased holder" True "$(jfield "$r" ok)"
eq "refcount 3" 3 "$(xget "$M/t" refcount)"
for _ in 1 2 3; do
	r=$(qsend '{"op":"renew","name":"t","pid":77,"node":"container","lease":60}')
	[ "$(jfield "$r" ok)" = True ] || break
done
eq "renewals answered" True "$(jfield "$r" ok)"
for _ in $(seq 300); do [ "$(xget "$M/t" refcount)" = 2 ] && break; sleep 0.1; done
eq "the holder that stopped renewing was dropped, the other kept" 2 "$(xget "$M/t" refcount)"
eq "its Redis field went too" "" "$(rcli hget tensorfs:tensor:t holder:elsewhere:1234)"
check "the renewing holder's field is still there" test -n "$(rcli hget tensorfs:tensor:t holder:container:77)"
# The renewing one shortens its lease to 1 s and stops: it goes.
r=$(qsend '{"op":"renew","name":"t","pid":77,"node":"container","lease":1}')
eq "a renew may shorten the lease" True "$(jfield "$r" ok)"
for _ in $(seq 300); do [ "$(xget "$M/t" refcount)" = 1 ] && break; sleep 0.1; done
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
