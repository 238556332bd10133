# A safetensors file cut short (its header names bytes past the end) is refused before
# anything is made: one message, no directory, no memory in use.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
python3 "$ROOT/tests/integration/load/st_make.py" full.safetensors 2 a:F32:1000000 b:I64:1000 || exit 1
head -c $(( $(stat -c %s full.safetensors) - 100 )) full.safetensors > cut.safetensors
check_err "refused" "past the end" "$CTL" load -q cut.safetensors "$M/cut"
check "nothing left" test ! -e "$M/cut"
eq "no memory in use" 0 "$(used_bytes "$M")"
finish
