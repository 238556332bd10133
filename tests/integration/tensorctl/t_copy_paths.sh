# Both copy paths round trip byte-identical: the direct one (TENSORCTL_COPY=direct,
# through the mapping) and the FUSE one, for .npy and .safetensors.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
# round_trip PATH FILE NAME: load FILE as $M/NAME and save it back with TENSORCTL_COPY=PATH
round_trip() {
	TENSORCTL_COPY=$1 "$CTL" load "$2" "$M/$3" && TENSORCTL_COPY=$1 "$CTL" save "$M/$3" "$3.${2#*.}" &&
		cmp "$2" "$3.${2#*.}"
}
tail_is() { cmp <(tail -c $((4 << 20)) big.npy) "$M/$1"; }
check "direct path (TENSORCTL_COPY=direct) round trip" round_trip direct big.npy d_big
check "and the tensor holds the data" tail_is d_big
check "direct path safetensors round trip" round_trip direct m.safetensors d_m
check "FUSE path (TENSORCTL_COPY=fuse) round trip" round_trip fuse big.npy nd_big
check "and the tensor holds the data" tail_is nd_big
check "FUSE path safetensors round trip" round_trip fuse m.safetensors nd_m
finish
