# A model directory whose keys clash, or whose shard fails, makes nothing: a key in two
# shards (EEXIST, naming the key and both shards), a key named like a small file (EEXIST),
# a key that is also another key's directory (EINVAL), an index naming a shard that is
# missing or a key a shard lacks, a shard cut short (EBADMSG: every shard's header is
# checked against its size before anything is made) and a hostile header: no directory,
# no memory, no Redis record left. (A failure after tensors were made: t_model_dir_merge.)
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
D=$ROOT/tests/integration/load
nothing() {
	check "$1: nothing left" test ! -e "$M/m"
	eq "$1: no memory in use" 0 "$(used_bytes "$M")"
	eq "$1: no records in Redis" "" "$(rcli --scan --pattern '*:tensor:*' | head -3)"
}
python3 "$D/hf_make.py" dup 1 3 --dup || exit 1
check_err "a key in two shards" "key 'model.embed_tokens.weight' is in both model-00001-of-00003.safetensors and model-00002-of-00003.safetensors: File exists" \
	"$CTL" load -q dup "$M/m"
nothing "duplicate key"
python3 "$D/hf_make.py" col 2 3 --collide || exit 1
check_err "a key named like a small file" "key 'config.json' of model-00001-of-00003.safetensors collides with the file config.json: File exists" \
	"$CTL" load -q col "$M/m"
nothing "collision"
mkdir dirkey
python3 "$D/st_make.py" dirkey/model.safetensors 3 a:F32:4 a/b:F32:4 || exit 1
check_err "a key that is another's directory" "'a' is a key and the directory of the key 'a/b'" "$CTL" load -q dirkey "$M/m"
nothing "key and directory"
python3 "$D/hf_make.py" miss 3 3 || exit 1
rm miss/model-00002-of-00003.safetensors
check_err "an index naming a missing shard" "the index names the shard model-00002-of-00003.safetensors, which is not a file here" \
	"$CTL" load -q miss "$M/m"
nothing "missing shard"
python3 "$D/hf_make.py" wrong 4 3 || exit 1
sed -i 's/"model.norm.weight": "model-0000[0-9]/"model.norm.weight": "model-00003/' wrong/model.safetensors.index.json
check_err "an index placing a key in the wrong shard" "the index puts 'model.norm.weight' in model-00003-of-00003.safetensors, which does not hold it" \
	"$CTL" load -q wrong "$M/m"
nothing "wrong shard"
sed -i 's/"model-00003-of-00003.safetensors"/"..\/..\/etc\/passwd"/' wrong/model.safetensors.index.json
check_err "an index naming a path outside" "is not a file name of the directory" "$CTL" load -q wrong "$M/m"
nothing "shard outside"
python3 "$D/hf_make.py" cut 5 3 || exit 1
truncate -s -100 cut/model-00003-of-00003.safetensors
check_err "a truncated shard" "cut/model-00003-of-00003.safetensors: bad safetensors header" "$CTL" load -q cut "$M/m"
nothing "truncated shard"
python3 "$D/hf_make.py" hostile 6 3 || exit 1
printf '\xff\xff\xff\xff\xff\xff\xff\x7f{}' | dd of=hostile/model-00002-of-00003.safetensors conv=notrunc status=none
check_err "a hostile header" "header length" "$CTL" load -q hostile "$M/m"
nothing "hostile header"
finish
