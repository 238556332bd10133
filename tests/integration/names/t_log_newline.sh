# A name with a newline (or another control character) reaches the log escaped, as \x0a:
# one message is one line, so a user who names a file cannot forge a log line (issue 32,
# item 10). The daemon logs every LOOKUP's path under --debug; the queue's refusal of a
# command (here one with a raw newline, which is no JSON) quotes it at every level.
. "$(dirname "$0")/../lib.sh"
one_mount --debug
LOG=$T/m.log
bad=$'x\ntensorfs: error: FORGED-1 \033[31mred'
touch "$M/$bad"
check "the name with a newline is a tensor" test -e "$M/$bad"
send $'{"op":"delete","name":"nosuch\ntensorfs: error: FORGED-2"}' >/dev/null
tfs_flush
eq "no line of the log starts with a forged message" "" "$(grep -a '^tensorfs: error: FORGED' "$LOG")"
check "the name is in the log, its newline as \\x0a" grep -aqF 'x\x0atensorfs: error: FORGED-1 \x1b[31mred' "$LOG"
check "the queue's command too" grep -aqF 'nosuch\x0atensorfs: error: FORGED-2' "$LOG"
eq "no escape character reaches the log" 0 "$(grep -ac $'\033' "$LOG")"
rm "$M/$bad"
finish
