# Ctrl-C on a daemon in the foreground unmounts cleanly: exit 0, records gone, memory freed.
SIG=INT . "$(dirname "$0")/signal_stop.sh"
finish
