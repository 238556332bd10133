# A Hugging Face model directory (an index, 3 shards of bf16, f16, f32 and fp8 tensors, the
# small files) loads into one directory of tensors named by their keys, with the small
# files beside them as u8 tensors of their bytes; README.md, hidden files and
# subdirectories stay out. Saved back it is a model directory again: the same shards, an
# index equal in content with the right total_size, the small files byte for byte.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
D=$ROOT/tests/integration/load
python3 "$D/hf_make.py" src 7 3 || exit 1
check "load DIR DEST" "$CTL" load -q --threads 2 src "$M/m"
check "every key and small file, bytes, dtype and shape" python3 "$D/hf_cmp.py" tensors src "$M/m"
check "cat DEST/config.json is the file" cmp src/config.json "$M/m/config.json"
eq "the index is a u8 tensor" "u8" "$(xget "$M/m/model.safetensors.index.json" dtype)"
check "README.md and .gitattributes stay out" test ! -e "$M/m/README.md" -a ! -e "$M/m/.gitattributes" -a ! -e "$M/m/original"
eq "__metadata__ kept" '{"format":"pt"}' "$(getfattr --only-values -n user.safetensors.metadata "$M/m")"
check "save DEST DIR" "$CTL" save -q "$M/m" out
check "saved: same shards, keys, bytes, index and small files" python3 "$D/hf_cmp.py" dirs src out
check "no temporary left beside it" test -z "$(ls -d out.tfs-* 2>/dev/null)"
check_err "save into an existing DIR refused" "File exists" "$CTL" save -q "$M/m" out
check "with -f it is rewritten in place" "$CTL" save -q -f "$M/m" out
check "and still equal" python3 "$D/hf_cmp.py" dirs src out
# without an index: every *.safetensors, saved back as one model.safetensors
python3 "$D/hf_make.py" one 8 1 --no-index || exit 1
check "load of a directory without an index" "$CTL" load -q one "$M/one"
check "its keys and small files" python3 "$D/hf_cmp.py" tensors one "$M/one"
check "save with no index" "$CTL" save -q "$M/one" one_out
check "one model.safetensors, no index" test -f one_out/model.safetensors -a ! -e one_out/model.safetensors.index.json
check "equal" python3 "$D/hf_cmp.py" dirs one one_out
finish
