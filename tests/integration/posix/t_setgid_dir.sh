# A set-group-ID directory gives its group to every entry made in it, and its
# set-group-ID bit to every subdirectory, as ext4 does: through the mount (by root and
# by another uid) and through the queue (issue 32, item 10). Elsewhere an entry takes its
# creator's group.
. "$(dirname "$0")/../lib.sh"
other_uid_mount
mkdir "$M/g"
chgrp 4321 "$M/g"
chmod 2777 "$M/g"
eq "the directory is set-group-ID, group 4321" "2777 4321" "$(stat -c '%a %g' "$M/g")"
touch "$M/g/f"
eq "a tensor made in it takes its group" 4321 "$(stat -c %g "$M/g/f")"
( umask 022; mkdir "$M/g/sub" )
eq "a subdirectory takes its group and its set-group-ID bit" "2755 4321" "$(stat -c '%a %g' "$M/g/sub")"
touch "$M/g/sub/f"
eq "and passes them on" 4321 "$(stat -c %g "$M/g/sub/f")"
check "another uid makes a tensor in it" $NOBODY touch "$M/g/n"
eq "which takes the directory's group too" "65534 4321" "$(stat -c '%u %g' "$M/g/n")"
check "another uid makes a directory in it" $NOBODY mkdir "$M/g/nd"
eq "set-group-ID, the directory's group" "4321" "$(stat -c %g "$M/g/nd")"
check "set-group-ID bit kept" test -g "$M/g/nd"
mk2775() { /usr/bin/python3 -c 'import os, sys; os.umask(0o022); os.close(os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o2775))' "$1"; }
export -f mk2775
check "another uid makes a tensor of mode 2775 in it" $NOBODY bash -c 'mk2775 "$0"' "$M/g/s"
eq "not in the group: the tensor loses its own set-group-ID" "755 4321" "$(stat -c '%a %g' "$M/g/s")"
mk2775 "$M/g/r"
eq "root's keeps it" "2755 4321" "$(stat -c '%a %g' "$M/g/r")"
r=$(send '{"op":"create","name":"g/q","dtype":"f32","shape":[2]}')
eq "the queue's create succeeds" True "$(jfield "$r" ok)"
eq "the queue's tensor takes the directory's group" 4321 "$(stat -c %g "$M/g/q")"
mkdir "$M/plain"
chmod 777 "$M/plain"
touch "$M/plain/f"
$NOBODY touch "$M/plain/n"
mkdir "$M/plain/d"
eq "elsewhere: the creator's group, no set-group-ID" "0 65534 0 755" \
	"$(stat -c %g "$M/plain/f") $(stat -c %g "$M/plain/n") $(stat -c '%g %a' "$M/plain/d")"
rm -r "$M/g" "$M/plain"
check_nothing_left "$M"
finish
