# Commands popped together: the daemon claims the names of a batch's creates in one round
# trip, and a name that an earlier command of the batch uses is claimed in its turn. One
# LPUSH puts them all in the queue at once, in this order.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --max-bytes 64M
batch=()
bcmd() { batch+=("{${1},\"id\":\"b${#batch[@]}\",\"reply\":\"tq:b:${#batch[@]}\"}"); }
bcmd '"op":"create","name":"b1","dtype":"f32","shape":[4]'
bcmd '"op":"create","name":"b2","dtype":"f32","shape":[4]'
bcmd '"op":"create","name":"b1","dtype":"u8","shape":[1]'
bcmd '"op":"delete","name":"b2"'
bcmd '"op":"create","name":"b2","dtype":"u8","shape":[7]'
bcmd '"op":"create","name":"b3","dtype":"f32","shape":[1024,1024,1024]'
bcmd '"op":"create","name":"b3","dtype":"u8","shape":[5]'
bcmd '"op":"get","name":"b1","pid":1'
bcmd '"op":"create","name":"b4","dtype":"u8","shape":[2]'
rcli lpush tensor_lifecycle "${batch[@]}" >/dev/null
breply() { rcli brpop "tq:b:$1" 20 | tail -n 1; }
# bfields N KEY...: the KEYs of reply N, on one line
bfields() { local r k; r=$(breply "$1"); shift; for k; do jfield "$r" "$k"; done | paste -sd' '; }
eq "batch: create b1" True "$(jfield "$(breply 0)" ok)"
eq "batch: create b2" True "$(jfield "$(breply 1)" ok)"
eq "batch: second create of b1: EEXIST" EEXIST "$(jfield "$(breply 2)" error)"
eq "batch: delete b2" True "$(jfield "$(breply 3)" ok)"
eq "batch: b2 made again after its delete" "True 7" "$(bfields 4 ok bytes)"
eq "batch: b3 over --max-bytes: ENOSPC" ENOSPC "$(jfield "$(breply 5)" error)"
eq "batch: b3 made after the ENOSPC gave its name back" "True 5" "$(bfields 6 ok bytes)"
eq "batch: get b1 sees the first create" "True 16 2" "$(bfields 7 ok bytes refcount)"
eq "batch: create b4" True "$(jfield "$(breply 8)" ok)"
eq "batch: sizes in the mount" "16 7 5 2" "$(stat -c %s "$M/b1" "$M/b2" "$M/b3" "$M/b4" | paste -sd' ')"
eq "batch: records" "2 1 1 1" "$(for n in b1 b2 b3 b4; do rcli hget tensorfs:tensor:$n refcount; done | paste -sd' ')"
eq "batch: directory entries" "t t t t" "$(for n in b1 b2 b3 b4; do rcli hget tensorfs:dirents: $n; done | paste -sd' ')"
finish
