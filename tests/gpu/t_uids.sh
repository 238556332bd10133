# Tensors of different uids never share a block: a CUDA IPC handle maps its whole block,
# so sharing would expose one user's tensors to another. chown moves a tensor out of a
# shared block. A user who cannot read a file cannot read its handle.
. "$(dirname "$0")/gpulib.sh"
gpu_tests "two uids never share a block" "chown moves a pooled tensor to the new owner's blocks" \
	"another uid cannot read a private tensor's handle"
start_redis || exit 1
M=$T/m
mount_cuda "$M" --node n1 --allow-other || exit 1
cd "$T"
mkdir "$M/s"; chmod 1777 "$M/s"
chmod 755 "$T"
# as uid U: create N small tensors named PREFIX* with mode 600
mk_as() {
	python3 -c "
import os, sys
uid = int(sys.argv[1])
os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.umask(0o077)
for i in range(int(sys.argv[3])):
    with open('$M/s/%s%03d' % (sys.argv[2], i), 'wb') as f:
        f.write(bytes([uid % 256]) * 3000)
" "$@"
}
check "uid 1001 creates 30 small tensors" mk_as 1001 a 30
check "uid 1002 creates 30 small tensors" mk_as 1002 b 30
check "root creates 30 small tensors" bash -c "for i in \$(seq 30); do head -c 3000 /dev/zero > '$M/s/r'\$i; done"
eq "owner of a000" 1001 "$(stat -c %u "$M/s/a000")"
for p in a b r; do
	for f in "$M"/s/$p*; do hexh "$f"; echo; done | sort -u > "$T/h.$p"
done
eq "two uids never share a block" "" "$(cat "$T/h.a" "$T/h.b" "$T/h.r" | sort | uniq -d)"
check "one uid's small tensors do share blocks ($(wc -l < "$T/h.a") handles for 30)" test "$(wc -l < "$T/h.a")" -lt 30
cp "$M/s/a005" "$T/a005"
check "chown a pooled tensor" chown 1002:1002 "$M/s/a005"
h=$(hexh "$M/s/a005")
check "chown moves a pooled tensor to the new owner's blocks" bash -c "! grep -qx '$h' '$T/h.a'"
check "its bytes survive the move (file and handle)" bash -c "cmp '$M/s/a005' '$T/a005' && dump '$M/s/a005' | cmp - '$T/a005'"
check "another uid cannot read a private tensor's handle" python3 -c "
import os, errno
os.setgid(1002); os.setuid(1002)
try:
    os.getxattr('$M/s/a001', 'user.tensor.ipc_handle')
except PermissionError:
    raise SystemExit(0)
raise SystemExit('readable')
"
rm -rf "$M/s"
cd /
finish
