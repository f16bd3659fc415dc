#!/usr/bin/env bash
# bench/https.sh - the HTTPS workloads: this server beside nginx (nginx-light: TLS and HTTP/2),
# configured alike (one worker pinned to CPU 0, the same ECDSA P-256 certificate, TLS 1.2 and
# 1.3 with TLS 1.3 negotiated, session tickets, no access log), each started fresh per round:
#   h1-hit-1k   GET /hit-1k over TLS 1.3, HTTP/1.1 keep-alive, wrk -t1 -c64            (req/s)
#   h2-hit-1k   GET /hit-1k over TLS 1.3, HTTP/2, h2load -t1 -c64 -m10                  (req/s)
#   handshakes  GET /hit-1k with Connection: close, wrk -t1 -c64: every request is a new
#               connection with a full TLS 1.3 handshake (wrk does not resume sessions)  (conn/s)
# node-bare (node-bare/tls.mjs) is the runtime's ceiling, measured in the same rounds: node:tls
# and node:http / node:http2 answering a fixed body, with no cache or any other work.
# Loads run on CPU 1 with the origin of ../../shared/bench (origin.js). Usage:
#   bench/https.sh [--rounds 3] [--duration 10] [--out FILE] [--peers "nginx svc node-bare"]
# Prints one JSON line per peer, round and workload, then the medians per peer and their ratio.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
ROUNDS=3 DURATION=${BENCH_DURATION:-10} OUT="" PEERS="nginx svc node-bare"
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "https.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in wrk h2load nginx openssl node curl taskset; do
  command -v "$tool" >/dev/null || { echo "https.sh: $tool not found (apt-get install wrk nghttp2-client nginx-light)" >&2; exit 2; }
done
STATE_ROOT=${BENCH_STATE_ROOT:-/tmp/bench}
OUT=${OUT:-$STATE_ROOT/https-$(date +%Y%m%d-%H%M%S).jsonl}
PROXY_CPU=${BENCH_PROXY_CPU:-0} LOAD_CPU=${BENCH_LOAD_CPU:-1}
ORIGIN_PORT=22080 PORT=22443
TLS=$STATE_ROOT/https-cert
mkdir -p "$TLS" "$(dirname "$OUT")"
[ -f "$TLS/bench.crt" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=bench -days 30 \
  -keyout "$TLS/bench.key" -out "$TLS/bench.crt" 2>/dev/null
chmod 644 "$TLS/bench.key"

taskset -c "$LOAD_CPU" node "$SHARED/origin.js" "$ORIGIN_PORT" 2>/dev/null &
ORIGIN_PID=$!
# shellcheck source=lib.sh
. "$HERE/lib.sh"
PEER_PID="" PEER_STATE=""
cleanup() { stop_peer; kill "$ORIGIN_PID" 2>/dev/null || true; }
trap cleanup EXIT

ticks() { local s=0 p; for p in $(tree "$1"); do s=$((s + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$s"; }
render() {  # render TEMPLATE OUTPUT CACHE
  sed -e "s#@PORT@#$PORT#g" -e "s#@ORIGIN_PORT@#$ORIGIN_PORT#g" -e "s#@STATE@#$PEER_STATE#g" -e "s#@CACHE@#$3#g" \
      -e "s#@TLS@#$TLS#g" -e "s#@PLAIN_PORT@#$((PORT + 1))#g" -e "s#@API_PORT@#$((PORT + 1000))#g" \
      -e "s#@BASE_PORT@#$((PORT + 2000))#g" "$1" >"$2"
}

start_peer() {  # start_peer NAME: starts it fresh on $PORT, pinned to $PROXY_CPU; sets PEER_PID
  PEER_STATE=$STATE_ROOT/https-$1
  local cache=/dev/shm/bench-https-$1
  rm -rf "$PEER_STATE" "$cache"; mkdir -p "$PEER_STATE" "$cache"
  case "$1" in
    nginx)
      render "$HERE/https/nginx.conf" "$PEER_STATE/nginx.conf" "$cache"
      chown -R www-data: "$PEER_STATE" "$cache"
      taskset -c "$PROXY_CPU" nginx -p "$PEER_STATE" -c "$PEER_STATE/nginx.conf" -e "$PEER_STATE/error.log" >"$PEER_STATE/stdout.log" 2>&1 </dev/null &
      ;;
    node-bare)
      taskset -c "$PROXY_CPU" node "$HERE/node-bare/tls.mjs" "$PORT" "$TLS/bench.crt" "$TLS/bench.key" >"$PEER_STATE/stdout.log" 2>&1 </dev/null &
      ;;
    svc)
      [ -f "$ROOT/dist/bin/svc.js" ] || (cd "$ROOT" && npx tsc -p tsconfig.json)
      render "$HERE/https/setting.json" "$PEER_STATE/setting.json" "$cache"
      taskset -c "$PROXY_CPU" node "$ROOT/dist/bin/svc.js" start --setting "$PEER_STATE/setting.json" >"$PEER_STATE/stdout.log" 2>&1 </dev/null &
      ;;
  esac
  PEER_PID=$!
  local i
  for i in $(seq 150); do
    curl -sk -o /dev/null --max-time 2 "https://127.0.0.1:$PORT/hit-1k" && break
    kill -0 "$PEER_PID" 2>/dev/null || { echo "https.sh: $1 exited; see $PEER_STATE" >&2; return 1; }
    sleep 0.1
  done
  local p; for p in $(tree "$PEER_PID"); do taskset -a -cp "$PROXY_CPU" "$p" >/dev/null 2>&1 || true; done
}


measure() {  # measure PEER ROUND WORKLOAD: one JSON line
  local peer=$1 round=$2 wl=$3 url="https://127.0.0.1:$PORT/hit-1k" out t0 t1 p0 p1 rate errors
  out=$STATE_ROOT/https-$peer/$wl.out
  p0=$(ticks "$PEER_PID"); t0=$(date +%s%N)
  case "$wl" in
    h1-hit-1k) taskset -c "$LOAD_CPU" timeout $((DURATION + 30)) wrk -t1 -c64 -d"${DURATION}s" --timeout 10s "$url" >"$out" 2>&1 || true ;;
    handshakes) taskset -c "$LOAD_CPU" timeout $((DURATION + 30)) wrk -t1 -c64 -d"${DURATION}s" --timeout 10s -H 'Connection: close' "$url" >"$out" 2>&1 || true ;;
    h2-hit-1k) taskset -c "$LOAD_CPU" timeout $((DURATION + 30)) h2load -t1 -c64 -m10 -D "$DURATION" "$url" >"$out" 2>&1 || true ;;
  esac
  t1=$(date +%s%N); p1=$(ticks "$PEER_PID")
  if [ "$wl" = h2-hit-1k ]; then
    rate=$(sed -nE 's/^finished in .*, ([0-9.]+) req\/s.*/\1/p' "$out")
    errors=$(sed -nE 's/^requests: .* ([0-9]+) failed, ([0-9]+) errored.*/\1 \2/p' "$out" | awk '{print $1 + $2}')
    grep -q 'Application protocol: h2' "$out" || errors=${errors:-0}+1
  else
    rate=$(sed -nE 's/^Requests\/sec: *([0-9.]+).*/\1/p' "$out")
    errors=$(awk '/Socket errors/ {gsub(/,/, ""); print $4 + $6 + $8 + $10} /Non-2xx/ {print $NF}' "$out" | awk '{s += $1} END {print s + 0}')
  fi
  printf '{"name":"%s","round":%d,"workload":"%s","rate":%.0f,"errors":%s,"proxy_cpu":%.2f}\n' "$peer" "$round" "$wl" "${rate:-0}" "${errors:-0}" \
    "$(awk -v d=$((p1 - p0)) -v hz="$(getconf CLK_TCK)" -v ns=$((t1 - t0)) 'BEGIN{print d / hz / (ns / 1e9)}')"
}

for round in $(seq "$ROUNDS"); do
  for peer in $PEERS; do
    echo "== round $round: $peer on 127.0.0.1:$PORT" >&2
    if ! start_peer "$peer"; then stop_peer; continue; fi
    proto=$(openssl s_client -connect "127.0.0.1:$PORT" -alpn h2 </dev/null 2>/dev/null | sed -nE 's/^New, (TLSv[0-9.]+), Cipher is (.*)/\1 \2/p; s/^ALPN protocol: //p' | tr '\n' ' ')
    echo "https.sh: $peer negotiates: $proto" >&2
    curl -sk -o /dev/null "https://127.0.0.1:$PORT/hit-1k"; curl -sk -o /dev/null "https://127.0.0.1:$PORT/hit-1k"
    for wl in h1-hit-1k h2-hit-1k handshakes; do measure "$peer" "$round" "$wl" | tee -a "$OUT"; done
    stop_peer
  done
done

node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };
const get = (n, w) => med(lines.filter((l) => l.name === n && l.workload === w).map((l) => l.rate));
const bare = lines.some((l) => l.name === "node-bare");
console.log(`| workload | nginx | svc | svc / nginx |${bare ? " node-bare | node-bare / nginx |" : ""}\n|---|---|---|---|${bare ? "---|---|" : ""}`);
for (const w of ["h1-hit-1k", "h2-hit-1k", "handshakes"]) {
  const a = get("nginx", w), b = get("svc", w), c = get("node-bare", w);
  console.log(`| ${w} (${w === "handshakes" ? "conn/s" : "req/s"}) | ${a} | ${b} | ${(b / a).toFixed(2)} |${bare ? ` ${c} | ${(c / a).toFixed(2)} |` : ""}`);
}' "$OUT"
