# A save writes the same bytes whichever way it fills the file: through a shared mapping in
# per-thread stretches (the default on local file systems), with more threads than
# stretches, with 1 MiB pieces, or by pwrite (TFS_SAVE_MMAP=0), from the mapped tensors or
# read through their files (straight into the output's pages); and into a file system
# too small for it, it fails with ENOSPC, kills nothing and leaves no file.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
no_temp() { ! ls "$1" | grep -q "tfs-"; }
# a directory of 70 small tensors (more than one stretch's share of the open window) and
# two large ones of odd sizes, so stretches end inside tensors and between them
mkdir -p "$M/d/small"
for i in $(seq 0 69); do head -c $((i * 37 + 5)) /dev/urandom > "s$i.bin"; done
for i in $(seq 0 69); do "$CTL" load -q "s$i.bin" "$M/d/small/s$i" || exit 1; done
head -c $((9 * 1048576 + 4093)) /dev/urandom > big1.bin
head -c $((5 * 1048576 + 1)) /dev/urandom > big2.bin
"$CTL" load -q big1.bin "$M/d/big1" && "$CTL" load -q big2.bin "$M/d/big2" || exit 1
check "save, the default (a mapping, stretches of the file per thread)" "$CTL" save -q "$M/d" map.safetensors
check "save by pwrite (TFS_SAVE_MMAP=0)" env TFS_SAVE_MMAP=0 "$CTL" save -q "$M/d" pw.safetensors
check "mapping and pwrite write the same bytes" cmp map.safetensors pw.safetensors
check "save through the tensors' files (TENSORCTL_COPY=fuse)" env TENSORCTL_COPY=fuse "$CTL" save -q "$M/d" fuse.safetensors
check "through the files: the same bytes" cmp map.safetensors fuse.safetensors
check "through the files by pwrite" env TENSORCTL_COPY=fuse TFS_SAVE_MMAP=0 "$CTL" save -q "$M/d" fusepw.safetensors
check "through the files by pwrite: the same bytes" cmp map.safetensors fusepw.safetensors
check "save with 3 threads and 1 MiB pieces" env TFS_LOAD_CHUNK_MB=1 "$CTL" save -q -j 3 "$M/d" j3.safetensors
check "3 threads, 1 MiB pieces: the same bytes" cmp map.safetensors j3.safetensors
check "save with 16 threads" "$CTL" save -q -j 16 "$M/d" j16.safetensors
check "16 threads: the same bytes" cmp map.safetensors j16.safetensors
check "a large raw tensor in 1 MiB pieces, 5 threads" env TFS_LOAD_CHUNK_MB=1 "$CTL" save -q -j 5 "$M/d/big1" big1.out
check "the raw bytes round trip" cmp big1.bin big1.out
check "load back what the mapping wrote" "$CTL" load -q map.safetensors "$M/back"
check "a small tensor came back" cmp s69.bin "$M/back/small/s69"
check "a large tensor came back" cmp big2.bin "$M/back/big2"
# ENOSPC: a 4 MiB tmpfs cannot hold 14 MiB (mounting one needs root)
if [ "$(id -u)" = 0 ] && mkdir -p small && mount -t tmpfs -o size=4m tensorfs-test small 2>/dev/null; then
	fails_with "save into a full file system (mapping): ENOSPC" "No space left" "$CTL" save -q "$M/d" small/x.safetensors
	check "no file left by the failed save (mapping)" no_temp small
	fails_with "save into a full file system (pwrite): ENOSPC" "No space left" env TFS_SAVE_MMAP=0 "$CTL" save -q "$M/d" small/y.safetensors
	check "no file left by the failed save (pwrite)" no_temp small
	eq "nothing left in the small file system" "" "$(ls -A small)"
	umount small
else
	echo "skip - not root or no tmpfs mount here: the ENOSPC cases"
fi
finish
