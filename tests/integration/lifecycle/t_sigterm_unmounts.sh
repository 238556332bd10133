# SIGTERM (a service manager's stop) unmounts cleanly: exit 0, records gone, memory
# freed; a LOCK_STATS build logs the namespace lock's figures then, and only then.
SIG=TERM . "$(dirname "$0")/signal_stop.sh"
# make LOCK_STATS=1 (the ASan build of make test has it)
if grep -q "namespace lock: %" "$TFS"; then
	check "LOCK_STATS build: the namespace lock's figures are logged at unmount" \
		grep -Eq "namespace lock: [1-9][0-9]* acquisitions, held [0-9]+ us in all \(mean [0-9.]+ us" "$T/sigTERM.log"
else
	check "plain build: no lock figures logged" not grep -q 'namespace lock:' "$T/sigTERM.log"
fi
finish
