#!/usr/bin/env bash
# bench/range-ttfb.sh - time to first byte of `Range: bytes=3000000000-3000000999` on an uncached
# 4 GiB object (bench/range/origin.mjs streams at loopback speed), this server (partSize 4 MiB)
# beside nginx with its slice module (slice 4m), each started fresh, one process pinned to CPU 0,
# the client and origin on CPU 1. Each round asks for a new URL (uncached), then once more (hit).
#   bench/range-ttfb.sh [--rounds 3]
# Prints one JSON line per peer and round: seconds to the first byte and to the end of the miss,
# to the first byte of the hit, and X-Cache of both (the bytes the origin sends per range are
# checked by test/e2e/cache/pieces.test.ts, not here). Each peer first serves BENCH_RANGE_WARMUP
# (20) ranges of other objects, not measured.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
ROUNDS=3
WARMUP=${BENCH_RANGE_WARMUP:-20}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "range-ttfb.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in nginx node curl taskset; do
  command -v "$tool" >/dev/null || { echo "range-ttfb.sh: $tool not found (apt-get install nginx-light curl)" >&2; exit 2; }
done
nginx -V 2>&1 | grep -q -- --with-http_slice_module || { echo "range-ttfb.sh: this nginx has no slice module" >&2; exit 2; }
STATE_ROOT=${BENCH_STATE_ROOT:-/tmp/bench}
PROXY_CPU=${BENCH_PROXY_CPU:-0} LOAD_CPU=${BENCH_LOAD_CPU:-1}
ORIGIN_PORT=23080 PORT=23081
mkdir -p "$STATE_ROOT"

taskset -c "$LOAD_CPU" node "$HERE/range/origin.mjs" "$ORIGIN_PORT" &
ORIGIN_PID=$!
# shellcheck source=lib.sh
. "$HERE/lib.sh"
PEER_PID=""
cleanup() { stop_peer; kill "$ORIGIN_PID" 2>/dev/null || true; }
trap cleanup EXIT

start_peer() {  # start_peer NAME
  local state=$STATE_ROOT/range-$1 cache=/dev/shm/bench-range-$1
  rm -rf "$state" "$cache"; mkdir -p "$state" "$cache"
  local conf=nginx.conf; [ "$1" = svc ] && conf=setting.json
  sed -e "s#@PORT@#$PORT#g" -e "s#@ORIGIN_PORT@#$ORIGIN_PORT#g" -e "s#@STATE@#$state#g" -e "s#@CACHE@#$cache#g" \
      -e "s#@API_PORT@#$((PORT + 1000))#g" -e "s#@BASE_PORT@#$((PORT + 2000))#g" "$HERE/range/$conf" >"$state/$conf"
  case "$1" in
    nginx)
      chown -R www-data: "$state" "$cache"
      taskset -c "$PROXY_CPU" nginx -p "$state" -c "$state/nginx.conf" -e "$state/error.log" >"$state/stdout.log" 2>&1 </dev/null & ;;
    svc)
      [ -f "$ROOT/dist/bin/svc.js" ] || (cd "$ROOT" && npx tsc -p tsconfig.json)
      taskset -c "$PROXY_CPU" node "$ROOT/dist/bin/svc.js" start --setting "$state/setting.json" >"$state/stdout.log" 2>&1 </dev/null & ;;
  esac
  PEER_PID=$!
  local i
  for i in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    kill -0 "$PEER_PID" 2>/dev/null || { echo "range-ttfb.sh: $1 exited; see $state" >&2; return 1; }
    sleep 0.1
  done
  local p; for p in $(tree "$PEER_PID"); do taskset -a -cp "$PROXY_CPU" "$p" >/dev/null 2>&1 || true; done
}

probe() {  # probe URL: "ttfb total status bytes x-cache"
  taskset -c "$LOAD_CPU" curl -s -o /dev/null --max-time 120 -H 'Range: bytes=3000000000-3000000999' \
    -w '%{time_starttransfer} %{time_total} %{http_code} %{size_download} %header{x-cache}' "$1"
}

for round in $(seq "$ROUNDS"); do
  for peer in nginx svc; do
    echo "== round $round: $peer on 127.0.0.1:$PORT" >&2
    if ! start_peer "$peer"; then stop_peer; continue; fi
    url="http://127.0.0.1:$PORT/big-4g-$round-$RANDOM"
    # Ranges of other objects first, not measured: node compiles and optimizes its code paths
    # over the first requests, and a server's first minutes are not what a running edge sees
    # (both peers get the same warm-up).
    for w in $(seq "$WARMUP"); do probe "http://127.0.0.1:$PORT/warm-4g-$round-$w-$RANDOM" >/dev/null; done
    read -r ttfb total status size xcache <<<"$(probe "$url")"
    read -r hit _ hstatus _ hxcache <<<"$(probe "$url")"
    printf '{"name":"%s","round":%d,"miss_ttfb_s":%s,"miss_total_s":%s,"status":%s,"bytes":%s,"x_cache":"%s","hit_ttfb_s":%s,"hit_status":%s,"hit_x_cache":"%s"}\n' \
      "$peer" "$round" "$ttfb" "$total" "$status" "$size" "$xcache" "$hit" "$hstatus" "$hxcache"
    stop_peer
  done
done
