# This node's queue changes names without a FUSE request: the mount shows each create
# and delete at once, and a touch after a queue delete creates the tensor.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1
r=$(qsend '{"op":"create","name":"q","dtype":"f32","shape":[4],"node":"n1"}')
eq "queue create: the mount shows it" 16 "$(size_of "$M/q")"
r=$(qsend '{"op":"delete","name":"q","node":"n1"}')
check "queue delete: stat fails at once" not stat "$M/q"
r=$(qsend '{"op":"create","name":"q","dtype":"f32","shape":[8],"node":"n1"}')
eq "queue create again, bigger: the mount shows the new size at once" 32 "$(size_of "$M/q")"
r=$(qsend '{"op":"delete","name":"q","node":"n1"}')
check "touch after a queue delete creates the tensor" touch "$M/q"
eq "an empty one" 0 "$(size_of "$M/q")"
finish
