#!/usr/bin/env bash
# bench/memory.sh - the worker's memory while it serves hit-mix (issue 9: RSS no more than the
# memory tier's bytes plus 120 MB). Starts bench/peer (one worker on CPU 0, statistics on:
# peer/setting-mem.json), runs ../../shared/bench/run.sh --only hit-mix against it (10,000
# objects of 1..64 KiB, all in the memory tier, then 10 s of random hits), samples the worker's
# VmRSS every second, and prints the peak beside the memory tier's bytes (svc_memory_cache_bytes
# of /metrics) and their difference, then where the peak's RSS is by kind of mapping (the worker's
# /proc/<pid>/smaps at its highest sample). SVC_WORKER_NODE_ARGS passes through (e.g. V8 flags to try).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
PORT=22301 ORIGIN_PORT=22080
API_PORT=$((PORT + 1000))
SAMPLER= SAMPLES= SMAPS=
PRIMARY=$(BENCH_SVC_SETTING=setting-mem.json bash "$HERE/peer/start.sh" "$PORT" "$ORIGIN_PORT")
trap '[ -z "$SAMPLER" ] || kill "$SAMPLER" 2>/dev/null || true; [ -z "$SMAPS" ] || rm -f "$SAMPLES" "$SMAPS" "$SMAPS.new"; bash "$HERE/peer/stop.sh" >/dev/null 2>&1 || true' EXIT
# The worker of this server (svc start -> primary -> worker), not of another server on the machine.
WORKER=$(pgrep -f "rt-worker.js" -P "$(pgrep -d, -P "$PRIMARY")" | head -1)
SAMPLES=$(mktemp) SMAPS=$(mktemp)
# VmRSS every second; at each new high, a copy of the worker's smaps for the breakdown below (kept
# only if the worker still lives after the copy: a dying one's smaps can end early).
( high=0; while kill -0 "$WORKER" 2>/dev/null; do
    rss=$(awk '/VmRSS/{print $2}' "/proc/$WORKER/status" 2>/dev/null || true)
    [ -z "$rss" ] || { echo "$rss" >>"$SAMPLES"; [ "$rss" -le "$high" ] || { high=$rss; cp "/proc/$WORKER/smaps" "$SMAPS.new" 2>/dev/null && kill -0 "$WORKER" 2>/dev/null && mv "$SMAPS.new" "$SMAPS" || true; }; }
    sleep 1
  done ) &
SAMPLER=$!
"$SHARED/run.sh" --target "http://127.0.0.1:$PORT" --origin-port "$ORIGIN_PORT" --name svc --pid "$PRIMARY" --only hit-mix | grep '^{' || true
TIER=$(curl -s "http://127.0.0.1:$API_PORT/metrics" | awk '/^svc_memory_cache_bytes/ {s += $2} END {print s + 0}')
PEAK=$(sort -n "$SAMPLES" | tail -1)
awk -v peak="$PEAK" -v tier="$TIER" 'BEGIN {
  printf "worker peak RSS %.1f MB, memory tier %.1f MB, RSS beyond the tier %.1f MB (issue 9 allows 120)\n", peak * 1024 / 1e6, tier / 1e6, (peak * 1024 - tier) / 1e6
}'
# Where the peak's RSS is, by kind of mapping (smaps at the highest sample): node's binary (file
# pages, the same in every node process), other files (shared libraries, better-sqlite3's addon),
# malloc's main heap (the stored bodies and other native allocations: the workers run with one
# arena), V8's code ranges (rwx) and the other anonymous mappings (V8's heap pages of both
# isolates, the disk writer's ring and directory, thread stacks, malloc's large blocks).
awk -v tier="$TIER" '
  /^[0-9a-f]+-[0-9a-f]+ / { kind = $6 == "" ? ($2 ~ /x/ ? "anon-code" : "anon") : $6 ~ /\/node$/ ? "node" : $6 ~ /^\// ? "files" : $6 == "[heap]" ? "heap" : "other" }
  /^Rss:/ { kb[kind] += $2 }
  END {
    for (k in kb) sum += kb[k]
    printf "at the peak (MB, of %.1f in smaps): node binary %.1f, other files %.1f, malloc heap %.1f (%.1f beyond the tier), anonymous %.1f + code %.1f, other %.1f\n",
      sum * 1024 / 1e6, kb["node"] * 1024 / 1e6, kb["files"] * 1024 / 1e6, kb["heap"] * 1024 / 1e6, (kb["heap"] * 1024 - tier) / 1e6, kb["anon"] * 1024 / 1e6, kb["anon-code"] * 1024 / 1e6, kb["other"] * 1024 / 1e6
  }' "$SMAPS"
rm -f "$SAMPLES" "$SMAPS" "$SMAPS.new"
