# Loading into an existing directory is refused unless --merge; a merge adds new names
# only (one that exists refuses the whole load before anything is made), and a merge that
# fails after it made tensors (its last key needs a directory where a tensor is) removes
# what it made and nothing else.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
D=$ROOT/tests/integration/load
python3 "$D/hf_make.py" src 1 2 || exit 1
mkdir extra bad
python3 "$D/st_make.py" extra/adapter.safetensors 2 lora.a:BF16:8,4 lora.b:F8_E5M2:4,8 zz:F32:4 || exit 1
specs=()
for i in $(seq -w 0 29); do specs+=("t$i:F32:262144"); done
python3 "$D/st_make.py" bad/model.safetensors 3 "${specs[@]}" zz/x:F32:4 || exit 1
"$CTL" load -q src "$M/m" || exit 1
listing() { (cd "$M/m" && find . | sort | md5sum); }
before=$(listing)
check_err "a second load into DEST refused" "File exists (--merge loads into an existing directory)" "$CTL" load -q src "$M/m"
eq "DEST unchanged" "$before" "$(listing)"
check "--merge of new names" "$CTL" load -q --merge extra "$M/m"
check "the new tensors' bytes" cmp <(python3 -c "
import json,struct,sys
f=open('extra/adapter.safetensors','rb'); n=struct.unpack('<Q',f.read(8))[0]; h=json.loads(f.read(n))
a,b=h['lora.a']['data_offsets']; f.seek(8+n+a); sys.stdout.buffer.write(f.read(b-a))") "$M/m/lora.a"
check "the model's tensors unchanged" python3 -c "
import sys; sys.argv=['', 'tensors', 'src', '$M/m']
exec(open('$D/hf_cmp.py').read().replace('if got != want:', 'if not want <= got:'))"
after=$(listing)
used=$(used_bytes "$M")
check_err "--merge of a name that exists refused" "exists; a merge only adds new names" "$CTL" load -q --merge extra "$M/m"
eq "DEST unchanged" "$after" "$(listing)"
check_err "--merge failing after it made tensors" "zz/x" "$CTL" load -q --merge --threads 2 bad "$M/m"
eq "what it made is gone, the rest unchanged" "$after" "$(listing)"
eq "memory in use as before" "$used" "$(used_bytes "$M")"
check_err "--merge into a tensor refused" "File exists" "$CTL" load -q --merge extra "$M/m/zz"
finish
