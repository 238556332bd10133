# A Redis Sentinel group of the test's own, on 127.0.0.1: one primary, one replica, three
# sentinels (quorum 2), each on a TCP port the test allocates. Sourced after lib.sh by the
# tests of this folder. Sets SURL (the sentinel:// URL of master $MASTER), PORT_P and
# PID_P (the first primary), PORT_R and PID_R (the replica), SPORT[0..2]; pcli runs
# redis-cli on whichever server the sentinels name the primary now.
MASTER=tfsm
# GROUP_PASS (set before sentinel_group): the password of every server and sentinel of the
# group (requirepass, masterauth, the sentinels' auth-pass and requirepass).
GROUP_PASS=${GROUP_PASS:-}
PIDS_GROUP=()
SPORT=()

gcli() { redis-cli --no-auth-warning ${GROUP_PASS:+-a "$GROUP_PASS"} "$@"; }

# A port nobody listens on now; the server started on it may still lose it to another
# process, so start_server tries again with another.
free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME ARGS...: a redis-server (or, with --sentinel among ARGS, a sentinel
# whose config file is $T/NAME.conf) on a fresh port; sets LAST_PORT and LAST_PID.
start_server() {
	local name=$1 try port pid; shift
	for try in 1 2 3 4 5; do
		port=$(free_port)
		if [ "${1:-}" = --sentinel ]; then
			sed "s/^port .*/port $port/" "$T/$name.conf.in" > "$T/$name.conf"
			redis-server "$T/$name.conf" --sentinel >/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
		else
			mkdir -p "$T/$name"
			redis-server --port "$port" --bind 127.0.0.1 --dir "$T/$name" --save "" \
				--appendonly no --logfile "$T/$name.log" --daemonize no \
				${GROUP_PASS:+--requirepass "$GROUP_PASS" --masterauth "$GROUP_PASS"} "$@" \
				>/dev/null 2>&1 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&- &
		fi
		pid=$!
		PIDS_GROUP+=("$pid")
		for _ in $(seq 400); do
			kill -0 "$pid" 2>/dev/null || break
			gcli -p "$port" ping 2>/dev/null | grep -q PONG && {
				LAST_PORT=$port; LAST_PID=$pid; return 0; }
			sleep 0.05
		done
		kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	done
	echo "$name did not start"; return 1
}

group_kill() {
	local p
	for p in "${PIDS_GROUP[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${PIDS_GROUP[@]}"; do wait "$p" 2>/dev/null; done
	PIDS_GROUP=()
}
finish_hook() { group_kill; }
trap 'group_kill; '"$(trap -p EXIT | sed "s/^trap -- '//; s/' EXIT\$//")" EXIT

# waits_for SECONDS CMD...: CMD succeeds within SECONDS, polled every 0.2 s.
waits_for() {
	local n=$(( $1 * 5 )); shift
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	return 1
}

replica_linked() { gcli -p "$PORT_R" info replication | grep -q "master_link_status:up"; }
# Every sentinel sees the replica and enough of the others to fail over.
group_ready() {
	local s
	for s in "${SPORT[@]}"; do
		gcli -p "$s" sentinel ckquorum "$MASTER" | grep -q '^OK' || return 1
		gcli -p "$s" sentinel replicas "$MASTER" | grep -qx "127.0.0.1:$PORT_R" || return 1
	done
}

# sentinel_group [DOWN_AFTER_MS]: starts the group and waits until it can fail over.
sentinel_group() {
	local down=${1:-1000} i
	start_server primary || return 1
	PORT_P=$LAST_PORT; PID_P=$LAST_PID
	start_server replica --replicaof 127.0.0.1 "$PORT_P" || return 1
	PORT_R=$LAST_PORT; PID_R=$LAST_PID
	waits_for 60 replica_linked || { echo "the replica did not link"; return 1; }
	for i in 0 1 2; do
		cat > "$T/sentinel$i.conf.in" <<-EOF
		port 0
		bind 127.0.0.1
		dir $T
		logfile $T/sentinel$i.log
		sentinel monitor $MASTER 127.0.0.1 $PORT_P 2
		sentinel down-after-milliseconds $MASTER $down
		sentinel failover-timeout $MASTER 4000
		sentinel parallel-syncs $MASTER 1
		EOF
		[ -z "$GROUP_PASS" ] || printf 'sentinel auth-pass %s %s\nrequirepass %s\n' \
			"$MASTER" "$GROUP_PASS" "$GROUP_PASS" >> "$T/sentinel$i.conf.in"
		start_server "sentinel$i" --sentinel || return 1
		SPORT[$i]=$LAST_PORT
	done
	SURL="sentinel://127.0.0.1:${SPORT[0]},127.0.0.1:${SPORT[1]},127.0.0.1:${SPORT[2]}/$MASTER"
	waits_for 120 group_ready || { echo "the sentinels did not see each other"; return 1; }
}

# The port the first sentinel that answers names for the master.
primary_port() {
	local s a
	for s in "${SPORT[@]}"; do
		a=$(gcli -p "$s" sentinel get-master-addr-by-name "$MASTER" 2>/dev/null | sed -n 2p)
		[ -n "$a" ] && { echo "$a"; return 0; }
	done
	return 1
}
pcli() { gcli -p "$(primary_port)" "$@"; }
rcli() { tfs_flush; pcli "$@"; }

# Every sentinel names the replica, and the replica says it is the primary.
failed_over() {
	local s
	for s in "${SPORT[@]}"; do
		[ "$(gcli -p "$s" sentinel get-master-addr-by-name "$MASTER" | sed -n 2p)" = "$PORT_R" ] || return 1
	done
	gcli -p "$PORT_R" role | head -1 | grep -qx master
}
# wait_failover: after the primary's death, the replica promoted (a long deadline: the
# sentinels need down-after-milliseconds, an election and the promotion).
wait_failover() { waits_for 180 failed_over; }
