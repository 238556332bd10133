# Sourced by tests/run.sh and tests/gpu/run.sh: counts the "ok - ", "not ok - " and
# "skip - " lines of test programs and prints the run's last line, "N passed, N failed"
# (", N skipped" when any were).
pass=0 fail=0 skip=0
failed=()

# count LABEL < lines: echoes each result line labelled "[LABEL] ..." and counts it. Lines
# already labelled "[X] ok - ..." (tests/run.sh's, read by tests/gpu/run.sh) keep theirs.
# Another program's own summary line is shown in parentheses, so that only the last line
# of the run reads as the summary.
count() {
	local label=$1 line l body
	while IFS= read -r line || [ -n "$line" ]; do
		l=$label body=$line
		case "$line" in "["*"] "*) l=${line%%] *}; l=${l#[}; body=${line#*] } ;; esac
		case "$body" in
		"ok - "*) pass=$((pass + 1)); echo "[$l] $body" ;;
		"not ok - "*) fail=$((fail + 1)); failed+=("[$l] ${body#not ok - }"); echo "[$l] $body" ;;
		"skip - "*) skip=$((skip + 1)); echo "[$l] $body" ;;
		*" passed, "*" failed"*) echo "    ($line)" ;;
		*) echo "    $line" ;;
		esac
	done
}

# summary: the failures again, then the counts; returns 0 when nothing failed.
summary() {
	if [ ${#failed[@]} -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${failed[@]}"
	fi
	if [ $skip -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ $fail -eq 0 ]
}
