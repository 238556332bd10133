# A load of many tensors makes them by batches (core/mkbatch.h), a directory's at a time:
# every tensor made by one (each batch's first created by a create of its own, then typed
# by the batch), byte-exact; and a
# load with batches turned off makes the same; and a merge into a
# directory where a name is taken fails naming it, leaving nothing of its own.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --debug
specs=()
for i in $(seq 0 299); do specs+=("t$i:F32:$((i % 5 + 1)),3"); done
for i in $(seq 0 39); do specs+=("layers/$((i % 4))/w$i:BF16:$((i + 1))"); done
python3 "$ROOT/tests/integration/load/st_make.py" many.safetensors 3 "${specs[@]}" || exit 1
log="$T/m.log"
start=$(wc -l < "$log")
check "load of 340 tensors" "$CTL" load -q many.safetensors "$M/many"
new=$(tail -n +"$((start + 1))" "$log")
made=$(sed -n 's/.*MKBATCH \/many[^:]*: \([0-9]*\) of [0-9]* made (.*/\1/p' <<<"$new" | awk '{s += $1} END {print s}')
creates=$(grep -c ': CREATE /many' <<<"$new")
eq "every tensor made by a batch" 340 "$made"
eq "a create of its own only for each batch's first, which the batch types" "$(grep -c 'MKBATCH /many' <<<"$new")" "$creates"
check "a few batches ($creates)" test "$creates" -le 16
eq "no batch refused anything" 0 "$(grep 'MKBATCH' <<<"$new" | grep -vc ' made (')"
check "a create through the mount is logged as one" sh -c "echo hi > '$M/ctl'"
eq "(the log names it)" 1 "$(grep -c ': CREATE /ctl$' "$log")"
eq "batches of one directory each: 4 of layers" 4 "$(grep -o 'MKBATCH /many/layers/[0-9]' <<<"$new" | sort -u | wc -l)"
eq "the first batch is small" "8 of 8" "$(grep -o 'MKBATCH /many: [0-9]* of [0-9]*' <<<"$new" | head -1 | cut -d' ' -f3-5)"
eq "dtype and shape of layers/1/w5" "bf16 [6]" "$(xget "$M/many/layers/1/w5" dtype) $(xget "$M/many/layers/1/w5" shape)"
check "save back byte-identical" bash -c "'$CTL' save -q '$M/many' out.safetensors && cmp many.safetensors out.safetensors"
start=$(wc -l < "$log")
check "TFS_LOAD_MKBATCH=0: the same load" env TFS_LOAD_MKBATCH=0 "$CTL" load -q many.safetensors "$M/many0"
eq "no batch" 0 "$(tail -n +"$((start + 1))" "$log" | grep -c 'MKBATCH')"
check "byte-identical too" bash -c "'$CTL' save -q '$M/many0' out0.safetensors && cmp many.safetensors out0.safetensors"
mkdir "$M/into"
check "a name taken in the directory" touch "$M/into/zz"
python3 "$ROOT/tests/integration/load/st_make.py" clash2.safetensors 4 a:F32:4 zz:F32:4 || exit 1
out=$("$CTL" load --merge clash2.safetensors "$M/into" 2>&1)
check "a merge onto a taken name fails" test $? -ne 0
check "naming it" grep -q "zz" <<<"$out"
eq "and leaves only what was there" "zz" "$(ls "$M/into" | tr '\n' ' ' | sed 's/ $//')"
finish
