# .npy files load with their dtype and shape (a scalar too) and save back byte-identical;
# numpy reads what tensorctl saves and np.save files round trip; then rm -rf frees all.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
npy_round_trip() { "$CTL" save "$M/n_$1" "$1.out.npy" && cmp "$1.npy" "$1.out.npy"; }
data_is_tail() { cmp <(tail -c 240 a.npy) "$M/n_a"; }
for f in a b s big; do
	check "load $f.npy" "$CTL" load "$f.npy" "$M/n_$f"
	check "save $f.npy round trip byte-identical" npy_round_trip "$f"
done
eq "npy dtype" f32 "$(xget "$M/n_a" dtype)"
eq "npy shape" "[3,4,5]" "$(xget "$M/n_a" shape)"
eq "npy scalar shape" "[]" "$(xget "$M/n_s" shape)"
eq "npy i64 shape" "[512,1024]" "$(xget "$M/n_big" shape)"
check "npy data bytes are the file's tail" data_is_tail
NPY_PY=
for py in python3 /usr/bin/python3; do "$py" -c 'import numpy' 2>/dev/null && { NPY_PY=$py; break; }; done
if [ -n "$NPY_PY" ]; then
	check "numpy reads the saved .npy" "$NPY_PY" -c "import numpy as np; a=np.load('a.out.npy'); assert a.shape==(3,4,5) and a.dtype==np.float32"
	check "np.save files load and save back byte-identical" "$NPY_PY" -c "
import numpy as np, subprocess
for i, (dt, sh) in enumerate([('<f4', (2, 3)), ('|u1', (7,)), ('<f8', ()), ('|b1', (2, 2)), ('<i2', (1, 2, 3)), ('<f2', (0,))]):
    a = (np.arange(int(np.prod(sh))) % 3).astype(dt).reshape(sh)
    np.save('np%d.npy' % i, a)
    subprocess.run(['$CTL', 'load', 'np%d.npy' % i, '$M/np%d' % i], check=True)
    subprocess.run(['$CTL', 'save', '$M/np%d' % i, 'np%d.out.npy' % i], check=True)
    assert open('np%d.npy' % i, 'rb').read() == open('np%d.out.npy' % i, 'rb').read(), (dt, sh)
    assert (np.load('np%d.out.npy' % i) == a).all()
"
else
	echo "skip - numpy not installed: numpy reading the saved .npy"
fi
check "rm -rf everything" rm -rf "$M"/n_* "$M"/np*
soon test "$(used_bytes "$M")" = 0
eq "statfs used back to 0" 0 "$(used_bytes "$M")"
finish
