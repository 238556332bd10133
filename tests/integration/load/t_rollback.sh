# A load that fails after it made tensors (the 16th of 30 names is also a directory, which
# only shows when it is created) removes everything it made: no directory, no tensor, no
# memory in use, no Redis record left.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
specs=()
for i in $(seq -w 0 29); do specs+=("t$i:F32:262144"); done
python3 "$ROOT/tests/integration/load/st_make.py" bad.safetensors 4 "${specs[@]}" t15/x:F32:4 || exit 1
check_err "refused" "t15" "$CTL" load -q --threads 2 bad.safetensors "$M/bad"
check "nothing left" test ! -e "$M/bad"
eq "no memory in use" 0 "$(used_bytes "$M")"
eq "no tensor or directory records in Redis" "" "$(rcli --scan --pattern '*:tensor:*' | head -3; rcli --scan --pattern '*:dir:?*' | head -3)"
finish
