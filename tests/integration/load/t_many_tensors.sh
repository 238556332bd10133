# A safetensors file of 1,100 tensors loads and saves back byte-exact under a limit of 200
# open files: the pipeline holds a window of tensors open, not all of them.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
specs=()
for i in $(seq 0 1099); do specs+=("t$i:F32:$((i % 7 + 1)),3"); done
python3 "$ROOT/tests/integration/load/st_make.py" many.safetensors 5 "${specs[@]}" || exit 1
check "load with at most 200 open files" bash -c "ulimit -n 200 && '$CTL' load -q many.safetensors '$M/many'"
eq "all 1,100 tensors are there" 1100 "$(ls "$M/many" | wc -l)"
check "save with at most 200 open files, byte-identical" bash -c "ulimit -n 200 && '$CTL' save -q '$M/many' out.safetensors && cmp many.safetensors out.safetensors"
finish
