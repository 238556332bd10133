# Broken .npy and .safetensors files (truncated, oversized, a cut header, Fortran order,
# offsets past the end or overlapping, an unknown dtype, a bad header length, trailing
# bytes, too short, a name escaping the directory): one message, nothing half-made.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
# bad FILE DEST DESC TEXT [load options]: loading FILE fails with TEXT and leaves no DEST
bad() {
	local f=$1 d=$2 desc=$3 e=$4; shift 4
	fails_with "$desc" "$e" "$CTL" load "$@" "$f" "$M/$d"
	gone "$M/$d" "$desc"
}
bad trunc.npy t1 "truncated .npy" "truncated"
bad over.npy t2 "oversized .npy" "oversized"
bad hdrcut.npy t3 ".npy with its header cut" "truncated"
bad fortran.npy t4 "Fortran-order .npy" "Fortran"
bad past_end.safetensors s1 "safetensors offsets past the end" "past the end"
bad overlap.safetensors s2 "safetensors overlapping ranges" "overlap"
bad baddtype.safetensors s3 "safetensors unknown dtype" "unknown dtype 'C64'"
bad hdrlen.safetensors s4 "safetensors header length larger than the file" "header length" --format safetensors
bad trailing.safetensors s5 "safetensors trailing bytes" "after the last tensor"
bad short.safetensors s6 "safetensors shorter than 8 bytes" "shorter than 8"
bad badname.safetensors s7 "safetensors name escaping the directory" "cannot be a file name"
finish
