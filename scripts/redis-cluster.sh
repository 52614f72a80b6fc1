#!/usr/bin/env bash
# redis-cluster.sh start|stop: a 6-node Redis Cluster (3 masters, each with
# a replica) on 127.0.0.1, ports $CLUSTER_PORT..$CLUSTER_PORT+5 (7000 by
# default), data under $CLUSTER_DIR. start prints the redis-cluster:// URL
# the service and the tests take (DOMAIND_REDIS_URL, DOMAIND_TEST_REDIS_URL).
# Needs redis-server and redis-cli (Debian's redis-server package).
set -euo pipefail

port=${CLUSTER_PORT:-7000}
dir=${CLUSTER_DIR:-${TMPDIR:-/tmp}/domaind-redis-cluster}
ports=$(seq "$port" $((port + 5)))

case ${1:-} in
start)
	mkdir -p "$dir"
	addrs=()
	for p in $ports; do
		mkdir -p "$dir/$p"
		if ! redis-cli -p "$p" ping >/dev/null 2>&1; then
			redis-server --port "$p" --bind 127.0.0.1 --dir "$dir/$p" --daemonize yes \
				--cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
				--appendonly no --save '' --logfile "$dir/$p/redis.log" --pidfile "$dir/$p/redis.pid"
		fi
		addrs+=("127.0.0.1:$p")
	done
	for p in $ports; do
		for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
	done
	if ! redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok'; then
		redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log"
		for _ in $(seq 100); do
			redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' && break
			sleep 0.1
		done
	fi
	redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' || { echo "redis cluster did not form; see $dir" >&2; exit 1; }
	# The replicas attach a few seconds after the slots are served: wait
	# until each replica has synced, so that a master can fail over at once.
	for _ in $(seq 150); do
		synced=0
		for p in $ports; do
			redis-cli -p "$p" info replication | grep -q 'master_link_status:up' && synced=$((synced + 1))
		done
		[ "$synced" -eq 3 ] && break
		sleep 0.1
	done
	[ "$synced" -eq 3 ] || { echo "redis cluster replicas did not sync; see $dir" >&2; exit 1; }
	echo "redis-cluster://$(IFS=,; echo "${addrs[*]}")"
	;;
stop)
	for p in $ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
	rm -rf "$dir"
	;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
