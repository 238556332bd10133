# make install ships a header, the libraries and tensorfs.pc that a program builds and
# links against, shared and static (plain build only: the ASan library needs ASan
# programs).
. "$(dirname "$0")/../lib.sh"
client_mount
printf '\x01\x02\x03' > "$M/ex"
I=$T/inst
L=$I/opt/tfs/lib
# A sysroot (the GPU machine's package root sets one) would be prefixed to our paths.
pc() { env -u PKG_CONFIG_SYSROOT_DIR pkg-config --define-variable=prefix="$I/opt/tfs" "$@"; }
build_shared() { cc -o "$T/obp" "$ROOT/examples/open_by_path.c" $(pc --cflags --libs tensorfs); }
build_static() {
	cc -o "$T/qlc" "$ROOT/examples/queue_lifecycle.c" $(pc --cflags tensorfs) "$L/libtensorfs.a" \
		$(pc --static --libs-only-l tensorfs | sed 's/-ltensorfs//') && "$T/qlc" "$URL" st1
}
if [[ "$BUILD" == *asan* ]]; then
	echo "skip - install test under $BUILD"
elif [ -n "$VG" ]; then
	echo "skip - install test under valgrind: the plain pass runs it"
# -o all: install what this build folder holds, without rebuilding it here.
elif make -s -C "$ROOT" -o all install O="$BUILD" DESTDIR="$I" PREFIX=/opt/tfs >"$T/install.out" 2>&1; then
	check "installed header, libraries and tensorfs.pc" test -f "$I/opt/tfs/include/tensorfs.h" \
		-a -f "$L/libtensorfs.a" -a -L "$L/libtensorfs.so" -a -f "$L/pkgconfig/tensorfs.pc"
	export PKG_CONFIG_PATH="$L/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
	check "a program builds against the installed tensorfs.pc" build_shared
	check "and runs with the installed libtensorfs.so" env LD_LIBRARY_PATH="$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$T/obp" "$M/ex"
	check "and against the installed libtensorfs.a (pkg-config --static)" build_static
else
	nok "make install DESTDIR=$I"; sed 's/^/      /' "$T/install.out" | tail -5
fi
finish
