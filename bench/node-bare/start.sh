#!/usr/bin/env bash
# start.sh PORT ORIGIN_PORT - the runtime's ceiling as a peer of ../../../shared/bench/compare.sh:
# http.mjs (node:http answering the bench's hit objects from a Map) pinned to CPU $BENCH_PROXY_CPU
# (0). It is no proxy: only the hit workloads (hit-1k, hit-mix, hit-1m) mean anything. Prints its PID.
set -euo pipefail
PORT=${1:?usage: start.sh PORT ORIGIN_PORT}
HERE="$(cd "$(dirname "$0")" && pwd)"
STATE=${BENCH_STATE_ROOT:-/tmp/bench}/node-bare
mkdir -p "$STATE"
taskset -c "${BENCH_PROXY_CPU:-0}" node "$HERE/http.mjs" "$PORT" >"$STATE/stdout.log" 2>&1 </dev/null &
echo $! >"$STATE/pid"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
cat "$STATE/pid"
