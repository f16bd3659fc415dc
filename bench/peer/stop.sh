#!/usr/bin/env bash
# stop.sh - stop the server start.sh started (SIGTERM drains, then exits) and drop its cache.
STATE=${BENCH_STATE_ROOT:-/tmp/bench}/svc
if [ -f "$STATE/pid" ]; then
  pid=$(cat "$STATE/pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  pkill -KILL -P "$pid" 2>/dev/null || true
  rm -f "$STATE/pid"
fi
rm -rf "${BENCH_SVC_CACHE:-/dev/shm/bench-svc-cache}"
