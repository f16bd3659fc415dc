#!/usr/bin/env bash
# start.sh PORT ORIGIN_PORT - the runtime's ceiling as a peer of ../../../shared/bench/compare.sh:
# proxy.mjs (node:http passing every request through undici to the origin, storing nothing),
# pinned to CPU $BENCH_PROXY_CPU (0). It caches nothing: only `--only miss` means anything.
# Prints its PID.
set -euo pipefail
PORT=${1:?usage: start.sh PORT ORIGIN_PORT}
ORIGIN_PORT=${2:?usage: start.sh PORT ORIGIN_PORT}
HERE="$(cd "$(dirname "$0")" && pwd)"
STATE=${BENCH_STATE_ROOT:-/tmp/bench}/node-proxy
mkdir -p "$STATE"
taskset -c "${BENCH_PROXY_CPU:-0}" node "$HERE/proxy.mjs" "$PORT" "$ORIGIN_PORT" >"$STATE/stdout.log" 2>&1 </dev/null &
echo $! >"$STATE/pid"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
cat "$STATE/pid"
