#!/bin/sh
# Installs what tensorfs needs to build, run and test on Debian 12 (bookworm).
# Skips apt when everything is already there, so it is cheap to run every time.
set -e
PKGS="build-essential pkg-config fuse3 libfuse3-dev libhiredis-dev libcjson-dev redis-server attr libdlpack-dev util-linux python3 python3-numpy valgrind python3-venv python3-pytest python3-setuptools python3-dev"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "installing:$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# FUSE needs its device; in containers it may need loading or passing in.
[ -e /dev/fuse ] || { echo "warning: /dev/fuse is missing (modprobe fuse, or run the container with --device /dev/fuse)" >&2; }
