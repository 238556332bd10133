# tensorctl's help: --help for the tool and for each command; an unknown command or a
# missing required option is one message and a non-zero exit.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
usage_of() { "$CTL" "$1" --help | grep -q "^usage: tensorctl $1"; }
check "tensorctl --help" "$CTL" --help
for c in create ls info rm df stat load save mount umount; do
	check "$c --help" usage_of "$c"
done
fails_with "unknown command" "unknown command" "$CTL" frobnicate
fails_with "create without --shape" "required" "$CTL" create "$M/x" --dtype f32
finish
