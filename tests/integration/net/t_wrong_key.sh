# A daemon with another cluster key is refused both ways: its requests fail the
# challenge, and it does not accept the owner's proof; each side says why; nothing moves.
. "$(dirname "$0")/netlib.sh"
start_redis || exit 1
make_key "$T/k1"
make_key "$T/k2"
A=$T/a B=$T/b
mount_tfs "$A" --node n1 --cluster-key "$T/k1" || exit 1
mount_tfs "$B" --node n2 --cluster-key "$T/k2" || exit 1
soon test -n "$(rcli get tensorfs:ucx:n1)"
printf 'ABCDEFGH' > "$A/x"
check_err "n2 reading n1's tensor with another key: refused" "Permission denied" cat "$B/x"
check_err "n2 writing it: refused" "Permission denied" \
	sh -c "printf zz | dd of='$B/x' conv=notrunc status=none"
eq "n1's bytes unchanged" ABCDEFGH "$(cat "$A/x")"
check "n2 says the owner does not prove the key" grep -q "does not prove the cluster key" "$T/b.log"
check "no key in either log" sh -c "! grep -qF -e '$(cat "$T/k1")' -e '$(cat "$T/k2")' '$T/a.log' '$T/b.log'"
check "no key in Redis" sh -c "! redis-cli -s '$SOCK' --scan | xargs -r -n1 redis-cli -s '$SOCK' --raw dump 2>/dev/null | grep -qaF '$(cat "$T/k1")'"
finish
