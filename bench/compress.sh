#!/usr/bin/env bash
# bench/compress.sh - compression at the edge (issue 28): the hit-mix workload of the shared
# harness (GET /mix/<id>, id random in 0..N-1, every object cached first) on compressible text
# objects (bench/compress/origin.mjs: HTML-like, 1..64 KiB), every request with
# `Accept-Encoding: br, gzip`, this server (functions.compression defaults: br) beside nginx with
# `gzip on` and its compressed answers cached (bench/compress/nginx.conf). Each peer is started
# fresh, one process pinned to CPU 0; wrk (-t1 -c64), the origin and the filler on CPU 1.
#   bench/compress.sh [--rounds 1] [--count 2000] [--duration 10] [--warm 2] [--peers "svc nginx"]
# Prints one JSON line per peer and round: requests/s, MB/s and bytes per answer (as wrk read
# them, headers included), the coding the answers came in, origin fetches (one per object is
# ideal: each coding made from the cached copy) and wrk's errors.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
ROUNDS=1 COUNT=2000 DURATION=${BENCH_DURATION:-10} WARM=${BENCH_WARM:-2} PEERS="svc nginx"
AE='br, gzip'
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --warm) WARM=$2; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "compress.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in nginx node curl wrk taskset; do
  command -v "$tool" >/dev/null || { echo "compress.sh: $tool not found (apt-get install nginx-light wrk curl)" >&2; exit 2; }
done
[ -f "$SHARED/wrk.lua" ] || { echo "compress.sh: no $SHARED/wrk.lua (set BENCH_HARNESS)" >&2; exit 2; }
STATE_ROOT=${BENCH_STATE_ROOT:-/tmp/bench}
PROXY_CPU=${BENCH_PROXY_CPU:-0} LOAD_CPU=${BENCH_LOAD_CPU:-1}
ORIGIN_PORT=24080 PORT=24081 INNER_PORT=24082
# The server needs Node 24: the bundled runtime when the system node is older.
SVC_NODE=node; [ -x "$ROOT/node_modules/.bin/node" ] && SVC_NODE="$ROOT/node_modules/.bin/node"
mkdir -p "$STATE_ROOT"
TMPD=$(mktemp -d)

taskset -c "$LOAD_CPU" node "$HERE/compress/origin.mjs" "$ORIGIN_PORT" &
ORIGIN_PID=$!
for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$ORIGIN_PORT/__count" && break; sleep 0.1; done
# shellcheck source=lib.sh
. "$HERE/lib.sh"
PEER_PID=""
cleanup() { stop_peer; kill "$ORIGIN_PID" 2>/dev/null || true; rm -rf "$TMPD"; }
trap cleanup EXIT

start_peer() {  # start_peer NAME
  local state=$STATE_ROOT/compress-$1 cache=/dev/shm/bench-compress-$1
  rm -rf "$state" "$cache"; mkdir -p "$state" "$cache"
  local conf=nginx.conf; [ "$1" = svc ] && conf=setting.json
  sed -e "s#@PORT@#$PORT#g" -e "s#@ORIGIN_PORT@#$ORIGIN_PORT#g" -e "s#@INNER_PORT@#$INNER_PORT#g" -e "s#@STATE@#$state#g" \
      -e "s#@CACHE@#$cache#g" -e "s#@API_PORT@#$((PORT + 1000))#g" -e "s#@BASE_PORT@#$((PORT + 2000))#g" \
      "$HERE/compress/$conf" >"$state/$conf"
  case "$1" in
    nginx)
      chown -R www-data: "$state" "$cache"
      taskset -c "$PROXY_CPU" nginx -p "$state" -c "$state/nginx.conf" -e "$state/error.log" >"$state/stdout.log" 2>&1 </dev/null & ;;
    svc)
      [ -f "$ROOT/dist/bin/svc.js" ] || (cd "$ROOT" && npx tsc -p tsconfig.json)
      taskset -c "$PROXY_CPU" "$SVC_NODE" "$ROOT/dist/bin/svc.js" start --setting "$state/setting.json" >"$state/stdout.log" 2>&1 </dev/null & ;;
    *) echo "compress.sh: unknown peer $1" >&2; return 1 ;;
  esac
  PEER_PID=$!
  local i
  for i in $(seq 150); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/mix/0" 2>/dev/null)" = 200 ] && break
    kill -0 "$PEER_PID" 2>/dev/null || { echo "compress.sh: $1 exited; see $state" >&2; return 1; }
    sleep 0.1
  done
  local p; for p in $(tree "$PEER_PID"); do taskset -a -cp "$PROXY_CPU" "$p" >/dev/null 2>&1 || true; done
}

wrk_run() {  # wrk_run SECONDS -> the WRKJSON object
  taskset -c "$LOAD_CPU" timeout $(($1 + 30)) wrk -t1 -c64 -d"$1s" --timeout 10s -H "Accept-Encoding: $AE" \
    -s "$SHARED/wrk.lua" "http://127.0.0.1:$PORT/" -- mix "$COUNT" >"$TMPD/wrk.out"
  sed -n 's/^WRKJSON //p' "$TMPD/wrk.out"
}

for round in $(seq "$ROUNDS"); do
  for peer in $PEERS; do
    echo "== round $round: $peer on 127.0.0.1:$PORT, $COUNT objects, Accept-Encoding: $AE" >&2
    # Counted from before the start: the readiness probe fetches /mix/0, one of the objects.
    before=$(curl -s "http://127.0.0.1:$ORIGIN_PORT/__count")
    if ! start_peer "$peer"; then stop_peer; continue; fi
    fill=$(taskset -c "$LOAD_CPU" node "$HERE/compress/fill.mjs" "http://127.0.0.1:$PORT" "$COUNT" "$AE" 8 5)
    wrk_run "$WARM" >/dev/null
    w=$(wrk_run "$DURATION")
    fetched=$(( $(curl -s "http://127.0.0.1:$ORIGIN_PORT/__count") - before ))
    coding=$(curl -s -o /dev/null -H "Accept-Encoding: $AE" -w '%header{content-encoding}' "http://127.0.0.1:$PORT/mix/1")
    node -e '
      const [w, fill, peer, round, fetched, count, coding] = process.argv.slice(1);
      const r = JSON.parse(w || "{\"requests\":0,\"duration_us\":1,\"bytes\":0}");
      const s = r.duration_us / 1e6;
      const errors = (r.err_connect ?? 0) + (r.err_read ?? 0) + (r.err_write ?? 0) + (r.err_status ?? 0) + (r.err_timeout ?? 0);
      console.log(JSON.stringify({
        name: peer, round: Number(round), workload: "hit-mix-compressible", objects: Number(count),
        rps: Math.round(r.requests / s), mbps: +(r.bytes / s / 1e6).toFixed(2),
        bytes_per_answer: r.requests ? Math.round(r.bytes / r.requests) : 0, coding: coding || "identity",
        p50_ms: +((r.p50_us ?? 0) / 1000).toFixed(2), p99_ms: +((r.p99_us ?? 0) / 1000).toFixed(2),
        origin_fetches: Number(fetched), fill: JSON.parse(fill), errors,
      }));' "$w" "$fill" "$peer" "$round" "$fetched" "$COUNT" "$coding"
    stop_peer
  done
done
