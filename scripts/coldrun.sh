#!/usr/bin/env bash
# coldrun.sh BASE: time a first `make run` at commit BASE and at the
# working tree, one after the other, until each serves /readyz, as on a
# fresh machine with nothing but Go: an empty build cache and an empty
# module cache (the modules come from GOPROXY). COLDRUN_MODCACHE=keep
# keeps the machine's module cache, to time the compile alone. Prints the
# seconds of each and their ratio.
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

# run DIR PORT: seconds from `make run` in DIR to a ready service.
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
}

before=$(run "$tmp/base" 18181)
after=$(run "$root" 18182)
awk -v base="$base" -v a="$before" -v b="$after" \
  'BEGIN { printf "cold make run: %s %.0f s, working tree %.0f s (%.2f of before, %.0f%% faster)\n", base, a, b, b / a, (1 - b / a) * 100 }'
