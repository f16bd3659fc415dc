#!/usr/bin/env bash
# bench/memory.sh - the worker's memory while it serves hit-mix (issue 9: RSS no more than the
# memory tier's bytes plus 120 MB). Starts bench/peer (one worker on CPU 0, statistics on:
# peer/setting-mem.json), runs ../../shared/bench/run.sh --only hit-mix against it (10,000
# objects of 1..64 KiB, all in the memory tier, then 10 s of random hits), samples the worker's
# VmRSS every second, and prints the peak beside the memory tier's bytes (svc_memory_cache_bytes
# of /metrics) and their difference. SVC_WORKER_NODE_ARGS passes through (e.g. V8 flags to try).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
PORT=22301 ORIGIN_PORT=22080
API_PORT=$((PORT + 1000))
SAMPLER=
PRIMARY=$(BENCH_SVC_SETTING=setting-mem.json bash "$HERE/peer/start.sh" "$PORT" "$ORIGIN_PORT")
trap '[ -z "$SAMPLER" ] || kill "$SAMPLER" 2>/dev/null || true; bash "$HERE/peer/stop.sh" >/dev/null 2>&1 || true' EXIT
# The worker of this server (svc start -> primary -> worker), not of another server on the machine.
WORKER=$(pgrep -f "rt-worker.js" -P "$(pgrep -d, -P "$PRIMARY")" | head -1)
SAMPLES=$(mktemp)
( while kill -0 "$WORKER" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$WORKER/status" 2>/dev/null >>"$SAMPLES" || true; sleep 1; done ) &
SAMPLER=$!
"$SHARED/run.sh" --target "http://127.0.0.1:$PORT" --origin-port "$ORIGIN_PORT" --name svc --pid "$PRIMARY" --only hit-mix | grep '^{' || true
TIER=$(curl -s "http://127.0.0.1:$API_PORT/metrics" | awk '/^svc_memory_cache_bytes/ {s += $2} END {print s + 0}')
PEAK=$(sort -n "$SAMPLES" | tail -1)
rm -f "$SAMPLES"
awk -v peak="$PEAK" -v tier="$TIER" 'BEGIN {
  printf "worker peak RSS %.1f MB, memory tier %.1f MB, RSS beyond the tier %.1f MB (issue 9 allows 120)\n", peak * 1024 / 1e6, tier / 1e6, (peak * 1024 - tier) / 1e6
}'
