# Tensors per owner are bounded (issue 32, item 8): past max_user_tensors, a user's create
# through the mount or its own queue gets EDQUOT, empty tensors counted like any, removed
# ones still open counted until closed, and the count survives a crash of the daemon.
# Root is not bound, as disk quotas do not bind it.
EXPECT_RESTARTS=1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/quser_lib.sh"
start_redis || exit 1
M=$T/m
quser_mount "$M" --node n1 --backend host --allow-other -o max_user_tensors=20 || exit 1
chmod 777 "$M"
# mk N PREFIX: as uid $QUID, N empty tensors; prints how many were made and the first error
mk() {
	as_user /usr/bin/python3 -c 'import os, sys
n, err = 0, ""
for i in range(int(sys.argv[2])):
    try:
        os.close(os.open("%s/%s%d" % (sys.argv[1], sys.argv[3], i), os.O_CREAT | os.O_WRONLY, 0o644))
        n += 1
    except OSError as e:
        err = err or os.strerror(e.errno)
print(n, err)' "$M" "$1" "$2"
}
eq "uid $QUID: 20 empty tensors, then EDQUOT" "20 Disk quota exceeded" "$(mk 25 a)"
r=$(usend '{"op":"create","name":"q","dtype":"f32","shape":[4]}')
eq "its queue's create: EDQUOT" EDQUOT "$(jfield "$r" error)"
check "a directory is still made" as_user mkdir "$M/d"
check "root makes 30" sh -c "for i in \$(seq 30); do touch '$M/root'\$i || exit 1; done"
check "rm of one of its tensors" as_user rm "$M/a0"
eq "makes room for one" "1 " "$(mk 1 b)"
exec 7<"$M/a1"
check "rm of one held open" as_user rm "$M/a1"
eq "no room while it is open" "0 Disk quota exceeded" "$(mk 1 c)"
exec 7<&-
for _ in $(seq 100); do [ "$(mk 1 c)" = "1 " ] && break; sleep 0.2; done
check "room once it is closed" test -e "$M/c0"
check "the daemon restarted after kill -9" kill9_and_serve "$M"
eq "the count survives: EDQUOT" "0 Disk quota exceeded" "$(mk 1 e)"
check "rm of it all" rm -rf "$M"/*
eq "then 20 again" "20 " "$(mk 20 f)"
rm -f "$M"/*
finish
