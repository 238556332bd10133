#!/bin/sh
# tests/valgrind.sh PROGRAM [ARGS...]: runs a client program of libtensorfs under valgrind
# with the suite's settings: any memory error, and any definitely or indirectly lost block,
# makes it exit 97. It execs, so the program keeps this script's pid.
# VG_LOG=DIR writes the report to DIR/PROGRAM.PID.log (created, empty when clean) instead
# of stderr: for runs whose exit status and output the test itself checks.
exec valgrind -q --error-exitcode=97 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	${VG_LOG:+--log-file="$VG_LOG/$(basename "$1").%p.log"} "$@"
