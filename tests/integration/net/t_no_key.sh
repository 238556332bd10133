# Without --cluster-key another node's bytes stay EREMOTE, and the log says why: on the
# daemon without a key, and on a keyed daemon asking a node that publishes no address.
. "$(dirname "$0")/netlib.sh"
start_redis || exit 1
make_key "$T/k"
A=$T/a B=$T/b
mount_tfs "$A" --node n1 --cluster-key "$T/k" || exit 1
mount_tfs "$B" --node n2 || exit 1
soon test -n "$(rcli get tensorfs:ucx:n1)"
printf 'ABCDEFGH' > "$A/x"
printf 'abcdefgh' > "$B/y"
check_err "keyless n2 reading n1's tensor: EREMOTE" "Object is remote" cat "$B/x"
check "n2's log says it has no key" grep -q "no --cluster-key" "$T/b.log"
check_err "n1 reading keyless n2's tensor: EREMOTE" "Object is remote" cat "$A/y"
check "n1's log says n2 publishes no address" grep -q "node n2 publishes no UCX address" "$T/a.log"
eq "n2 publishes no address" "" "$(rcli get tensorfs:ucx:n2)"
finish
