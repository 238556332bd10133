#!/bin/sh
# Installs what tensorfs needs to build, run and test on Debian 12 (bookworm).
# Skips apt when everything is already there, so it is cheap to run every time.
set -e
PKGS="build-essential pkg-config fuse3 libfuse3-dev libhiredis-dev libcjson-dev liburing-dev libucx-dev ucx-utils socat iproute2 redis-server attr libdlpack-dev util-linux python3 python3-numpy valgrind python3-venv python3-pytest python3-setuptools python3-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "install-deps: missing:$missing; run as root, or install sudo" >&2
			exit 1
		}
		SUDO=sudo
	fi
	echo "installing:$missing"
	$SUDO apt-get update -qq
	# Through env: sudo would drop the variable.
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
# FUSE needs its device; in containers it may need loading or passing in.
[ -e /dev/fuse ] || { echo "warning: /dev/fuse is missing (modprobe fuse, or run the container with --device /dev/fuse)" >&2; }
