#!/usr/bin/env bash
# redis-sentinel.sh start|stop: a Redis master with one replica, watched by
# three sentinels (quorum 2), on 127.0.0.1: the master on $SENTINEL_PORT
# (7300 by default), the replica on the next port, the sentinels on the
# three after; data under $SENTINEL_DIR. start prints the
# redis-sentinel:// URL the service and the tests take. A master that stops
# answering is declared down after 2 s and its replica promoted.
# Needs redis-server and redis-cli (Debian's redis-server package).
set -euo pipefail

port=${SENTINEL_PORT:-7300}
dir=${SENTINEL_DIR:-${TMPDIR:-/tmp}/domaind-redis-sentinel}
replica=$((port + 1))
sentinels=$(seq $((port + 2)) $((port + 4)))

serve() { # serve <port> [redis-server arguments...]
	local p=$1
	shift
	mkdir -p "$dir/$p"
	redis-cli -p "$p" ping >/dev/null 2>&1 && return
	redis-server "$@" --port "$p" --bind 127.0.0.1 --dir "$dir/$p" --daemonize yes \
		--appendonly no --save '' --logfile "$dir/$p/redis.log" --pidfile "$dir/$p/redis.pid"
	for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && return; sleep 0.1; done
	echo "redis on $p did not start; see $dir/$p" >&2
	exit 1
}

case ${1:-} in
start)
	serve "$port"
	serve "$replica" --replicaof 127.0.0.1 "$port"
	for _ in $(seq 100); do
		redis-cli -p "$replica" info replication | grep -q 'master_link_status:up' && break
		sleep 0.1
	done
	addrs=()
	for p in $sentinels; do
		mkdir -p "$dir/$p"
		if [ ! -f "$dir/$p/sentinel.conf" ]; then
			cat >"$dir/$p/sentinel.conf" <<-CONF
				sentinel monitor domaind 127.0.0.1 $port 2
				sentinel down-after-milliseconds domaind 2000
				sentinel failover-timeout domaind 10000
			CONF
		fi
		serve "$p" "$dir/$p/sentinel.conf" --sentinel
		addrs+=("127.0.0.1:$p")
	done
	for _ in $(seq 100); do
		known=0
		for p in $sentinels; do
			n=$(redis-cli -p "$p" sentinel master domaind 2>/dev/null | grep -A1 '^num-other-sentinels$' | tail -1 || true)
			[ "${n:-0}" = 2 ] && known=$((known + 1))
		done
		[ "$known" -eq 3 ] && break
		sleep 0.1
	done
	[ "$known" -eq 3 ] || { echo "the sentinels did not find each other; see $dir" >&2; exit 1; }
	echo "redis-sentinel://$(IFS=,; echo "${addrs[*]}")?master=domaind"
	;;
stop)
	for p in $sentinels $replica $port; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
	rm -rf "$dir"
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
