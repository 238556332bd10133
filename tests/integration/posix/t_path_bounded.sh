# Paths are bounded (issue 32, item 7): past max_depth components or max_path bytes from
# the mount's root, mkdir, create, rename and the queue's create get ENAMETOOLONG, so a
# user's deep chain costs the daemon and Redis a bounded amount; renaming a deep tree is
# one step, the tree whole under its new name, and other users' mkdir goes on meanwhile.
. "$(dirname "$0")/../lib.sh"
one_mount --node n1 --backend host -o max_depth=100 -o max_path=3000
rss() { awk '/^VmRSS/ {print $2 * 1024}' "/proc/$(daemon_pid "$M")/status"; }
redis_mem() { rcli info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r'; }
rss0=$(rss); mem0=$(redis_mem)

# chain DIR NAME N: mkdir NAME and cd into it N times from DIR; prints the depth reached
# and the error of the mkdir that stopped it.
chain() {
	(cd "$1" || exit 1
	 for i in $(seq "$3"); do
		mkdir "$2" 2>"$T/chain.err" || { echo "$((i - 1)) $(sed 's/.*: //' "$T/chain.err")"; exit 0; }
		cd "$2" || exit 1
	 done; echo "$3")
}
eq "a chain of one-byte names stops at depth 100: ENAMETOOLONG" \
	"100 File name too long" "$(chain "$M" d 150)"
n=$(printf 'n%.0s' $(seq 250))
mkdir "$M/long"
eq "a chain of 250-byte names stops past 3000 bytes: ENAMETOOLONG" \
	"11 File name too long" "$(chain "$M/long" "$n" 20)"
down() { cd "$M" && for _ in $(seq "$1"); do cd d || return 1; done; }
check_err "a tensor at depth 101: ENAMETOOLONG" "File name too long" sh -c "$(declare -f down); M=$M; down 100 && touch f"
check "one at depth 100 is fine" sh -c "$(declare -f down); M=$M; down 99 && touch f && rm f"
r=$(qsend "{\"op\":\"create\",\"name\":\"$(printf 'd/%.0s' $(seq 100))t\",\"dtype\":\"u8\",\"shape\":[1]}")
eq "the queue's create past the bound: ENAMETOOLONG" ENAMETOOLONG "$(jfield "$r" error)"
eq "one tensor more makes 'long' 11 levels of 250 bytes: ENAMETOOLONG" "File name too long" \
	"$(cd "$M/long"; for _ in $(seq 11); do cd "$n"; done; touch "$n" 2>&1 | sed 's/.*: //')"

# A rename moves the whole chain in one step; one that would take it past a bound is
# refused and changes nothing.
mkdir "$M/e"
check_err "moving the 100-deep chain one level down: ENAMETOOLONG" "File name too long" mv "$M/d" "$M/e/d"
check "it stayed where it was" test -d "$M/d/d/d" -a ! -e "$M/e/d"
check_err "moving the long chain under a longer name: ENAMETOOLONG" "File name too long" \
	mv "$M/long" "$M/$(printf 'l%.0s' $(seq 250))"
# Renames of the chain back and forth while root makes directories: each mkdir works.
( for i in $(seq 10); do mv "$M/d" "$M/d2" && mv "$M/d2" "$M/d" || exit 1; done ) & mover=$!
okm=0
for i in $(seq 20); do mkdir "$M/root$i" && okm=$((okm + 1)); done
wait "$mover"; eq "the chain renamed 20 times" 0 $?
eq "root's 20 mkdirs meanwhile all made" 20 "$okm"
check "the chain whole under its name" sh -c "$(declare -f down); M=$M; down 99"
eq "and nothing under the other" "" "$(rcli keys 'tensorfs:dir*:d2*')"

rss1=$(rss); mem1=$(redis_mem)
check "the daemon grew by less than 16 MiB ($(( (rss1 - rss0) >> 10 )) KiB)" test $((rss1 - rss0)) -lt $((16 << 20))
check "Redis grew by less than 4 MiB ($(( (mem1 - mem0) >> 10 )) KiB)" test $((mem1 - mem0)) -lt $((4 << 20))
check "rm -r of it all" rm -rf "$M/d" "$M/long" "$M/e" "$M"/root*
eq "nothing left" "" "$(ls "$M")"
finish
