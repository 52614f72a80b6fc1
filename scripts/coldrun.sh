#!/usr/bin/env bash
# coldrun.sh BASE: time a first `make run` at commit BASE and at the
# working tree until each serves /readyz, as on a fresh machine with
# nothing but Go: an empty build cache and an empty module cache (the
# modules come from GOPROXY). COLDRUN_MODCACHE=keep keeps the machine's
# module cache, to time the compile alone. Each is timed twice, in the
# order base, tree, tree, base, so that neither gains from going second
# (the first build reads the sources from disk, later ones from memory).
# Prints the seconds of each build and the ratio of the totals.
set -euo pipefail
base=${1:?usage: coldrun.sh BASE-COMMIT}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
  chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
  rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$root" worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1

# run DIR PORT: seconds from `make run` in DIR to a ready service, with
# caches of its own that it removes.
run() {
  local dir=$1 port=$2 start pid
  start=$(date +%s.%N)
  # A session of its own, so that the whole of make run can be stopped.
  local modcache=$tmp/mod-$port
  if [ "${COLDRUN_MODCACHE:-}" = keep ]; then modcache=$(go env GOMODCACHE); fi
  GOCACHE="$tmp/cache-$port" GOMODCACHE="$modcache" DOMAIND_DATA_DIR="$tmp/data-$port" DOMAIND_HTTP_ADDR="127.0.0.1:$port" \
    setsid make -C "$dir" run >"$tmp/log-$port" 2>&1 &
  pid=$!
  until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then cat "$tmp/log-$port" >&2; echo "make run in $dir exited" >&2; exit 1; fi
    sleep 0.5
  done
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }'
  kill -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  chmod -R u+w "$tmp/cache-$port" "$tmp/mod-$port" 2>/dev/null || true
  rm -rf "$tmp/cache-$port" "$tmp/mod-$port" "$tmp/data-$port"
}

before1=$(run "$tmp/base" 18181)
after1=$(run "$root" 18182)
after2=$(run "$root" 18183)
before2=$(run "$tmp/base" 18184)
awk -v base="$base" -v a1="$before1" -v a2="$before2" -v b1="$after1" -v b2="$after2" \
  'BEGIN { a = a1 + a2; b = b1 + b2
    printf "cold make run: %s %.0f s and %.0f s, working tree %.0f s and %.0f s (%.2f of before, %.0f%% faster)\n", base, a1, a2, b1, b2, b / a, (1 - b / a) * 100 }'
