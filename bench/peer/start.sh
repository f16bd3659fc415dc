#!/usr/bin/env bash
# start.sh PORT ORIGIN_PORT - this project's server as a benchmark peer (see ../../shared/bench):
# one RT worker pinned to CPU $BENCH_PROXY_CPU (0), one vhost on PORT proxying 127.0.0.1:ORIGIN_PORT,
# cache on /dev/shm like the other peers, no access log. Prints the PID of the primary.
# BENCH_SVC_SETTING=setting-rules.json runs the same host with ten urlRewrites no request
# matches (the cost of rules that do not apply; issue 14 asks hit-1k to keep >= 0.95 of it);
# BENCH_SVC_SETTING=setting-log.json writes the svc access log of every request (issue 11 asks
# hit-1k to keep >= 0.85 of the same build without it; the default setting logs no loopback client);
# BENCH_SVC_SETTING=setting-volatile.json keeps the host in memory only (mode.volatile): a miss
# then writes no file and no index row, which shows what the disk tier costs a miss.
# BENCH_SVC_CACHE (default /dev/shm/bench-svc-cache) is the cache folder, so that a second peer
# (a profile beside a test run) does not delete the first one's cache.
set -euo pipefail
PORT=${1:?usage: start.sh PORT ORIGIN_PORT}
ORIGIN_PORT=${2:?usage: start.sh PORT ORIGIN_PORT}
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PROXY_CPU=${BENCH_PROXY_CPU:-0}
STATE=${BENCH_STATE_ROOT:-/tmp/bench}/svc
CACHE=${BENCH_SVC_CACHE:-/dev/shm/bench-svc-cache}
rm -rf "$STATE" "$CACHE"; mkdir -p "$STATE" "$CACHE"
[ -f "$ROOT/dist/bin/svc.js" ] || (cd "$ROOT" && npx tsc -p tsconfig.json)
sed -e "s#@PORT@#$PORT#g" -e "s#@ORIGIN_PORT@#$ORIGIN_PORT#g" -e "s#@CACHE@#$CACHE#g" \
  -e "s#@API_PORT@#$((PORT + 1000))#g" -e "s#@BASE_PORT@#$((PORT + 2000))#g" \
  "$HERE/${BENCH_SVC_SETTING:-setting.json}" >"$STATE/setting.json"
taskset -c "$PROXY_CPU" node "$ROOT/dist/bin/svc.js" start --setting "$STATE/setting.json" \
  >"$STATE/stdout.log" 2>&1 </dev/null &
echo $! >"$STATE/pid"
for _ in $(seq 150); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  kill -0 "$(cat "$STATE/pid")" 2>/dev/null || { echo "start: svc exited; see $STATE/stdout.log" >&2; exit 1; }
  sleep 0.1
done
# Workers inherit the affinity; pin any thread created later too.
for p in $(cat "$STATE/pid") $(ps -o pid= --ppid "$(cat "$STATE/pid")"); do taskset -a -cp "$PROXY_CPU" "$p" >/dev/null 2>&1 || true; done
cat "$STATE/pid"
