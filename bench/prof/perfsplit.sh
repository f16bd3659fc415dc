#!/usr/bin/env bash
# bench/prof/perfsplit.sh PEER_A PEER_B [mix|hit1k] - where B's CPU per request goes beyond A's,
# by symbol, the kernel's share included. A CPU profile of node (--cpu-prof) sees only JavaScript
# and lumps the kernel's send into `writev`; a paired run (paired.sh) says how much more B costs
# but not on what. Here both peers serve side by side, as in paired.sh (both on core 0, each under
# its own wrk at the same time, one origin), and each serving process is recorded by `perf record`
# (cpu-clock; node's --perf-basic-prof names the JIT's code) over exactly its wrk run. Printed: us
# per request by symbol for B and A and B - A, summed by kind (the peer's own JavaScript, node's
# JavaScript, native: V8 builtins, GC, node's C++, libc; kernel), then the symbols B spends most
# more and less on. Run A against itself for the spread of the day. A JIT name can be wrong for a
# few samples (--perf-basic-prof keeps no record of code V8 moved or freed: a symbol of a path the
# workload never takes, such as undici's on a hit, is one of those); read the kinds and the top
# rows. Needs perf and the right to record another process (root, or perf_event_paranoid <= 1).
# PEER_x: a bench/peer directory (of any worktree; its setting.json, management ports of this
# range) or bench/node-bare. mix: each peer is filled with the bench's 10,000 /mix/ objects, then
# random hits of them (wrk.lua mix); hit1k: /hit-1k over and over. Ports: PROF_PORT (A; B is +2,
# management ports +61/+70 and +63/+75) and PROF_ORIGIN, default 26000 and 26080. SECONDS_EACH: the
# measured run (default 6).
set -uo pipefail
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) W=${3:-mix} D=${SECONDS_EACH:-6}
case "$W" in mix|hit1k) ;; *) echo "perfsplit.sh: the workload is mix or hit1k" >&2; exit 2 ;; esac
command -v perf >/dev/null || { echo "perfsplit.sh: needs perf" >&2; exit 2; }
SH=/work/shared/bench
HERE="$(cd "$(dirname "$0")" && pwd)"
export PATH="$(cd "$HERE/../.." && pwd)/node_modules/.bin:$PATH"
PA=${PROF_PORT:-26000} O=${PROF_ORIGIN:-26080}
PB=$((PA + 2))
TMP=$(mktemp -d /tmp/perfsplit.XXXXXX)
OPID=
env_of() { echo "BENCH_STATE_ROOT=$TMP/state-$1 BENCH_SVC_CACHE=/dev/shm/perfsplit-$PA-$1"; }
stop() { env $(env_of $2) bash "$1/stop.sh" >/dev/null 2>&1; true; }
cleanup() { stop "$A" a; stop "$B" b; [ -n "$OPID" ] && kill $OPID 2>/dev/null; rm -rf "$TMP"; true; }
trap cleanup EXIT
# start DIR PORT TAG API_PORT BASE_PORT: a bench/peer gets its setting with these management
# ports and the JIT names for its workers; node-bare's script gets them through NODE_OPTIONS.
start() {
  local s=setting.json
  if [ -f "$1/setting.json" ]; then
    sed -e "s/@API_PORT@/$4/" -e "s/@BASE_PORT@/$5/" "$1/setting.json" > "$TMP/setting-$3.json"
    s=$(realpath --relative-to="$1" "$TMP/setting-$3.json")
    env $(env_of $3) BENCH_SVC_SETTING=$s SVC_WORKER_NODE_ARGS=--perf-basic-prof bash "$1/start.sh" $2 $O >/dev/null
  else
    env $(env_of $3) NODE_OPTIONS=--perf-basic-prof bash "$1/start.sh" $2 $O >/dev/null
  fi
}
# The serving process of a port: the highest pid holding it (a supervisor holds it too).
server() { ss -ltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -n | tail -1; }
url() { if [ "$W" = hit1k ]; then echo http://127.0.0.1:$1/hit-1k; else echo http://127.0.0.1:$1/; fi; }
args() { if [ "$W" = hit1k ]; then echo fixed; else echo mix 10000; fi; }
taskset -c 1 node $SH/origin.js $O >/dev/null 2>&1 & OPID=$!
sleep 0.5
start "$A" $PA a $((PA + 61)) $((PA + 70)); start "$B" $PB b $((PA + 63)) $((PA + 75))
for p in $PA $PB; do
  for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$p/hit-1k && break; sleep 0.2; done
  curl -s -o /dev/null http://127.0.0.1:$p/hit-1k || { echo "perfsplit.sh: nothing answers on port $p" >&2; exit 1; }
done
if [ "$W" = mix ]; then
  fill() { taskset -c 1 node $SH/client.js fill http://127.0.0.1:$1 /mix/ 10000 16 | grep -v '"failed":0'; true; }
  fill $PA & F=$!; fill $PB; wait $F
fi
taskset -c 1 wrk -t1 -c64 -d2s -s $SH/wrk.lua $(url $PA) -- $(args) >/dev/null & F=$!
taskset -c 1 wrk -t1 -c64 -d2s -s $SH/wrk.lua $(url $PB) -- $(args) >/dev/null; wait $F
SA=$(server $PA) SB=$(server $PB)
perf record -q -F 2000 -p "$SA" -o "$TMP/a.data" -- sleep "$D" >/dev/null 2>&1 & RA=$!
perf record -q -F 2000 -p "$SB" -o "$TMP/b.data" -- sleep "$D" >/dev/null 2>&1 & RB=$!
taskset -c 1 wrk -t1 -c64 -d${D}s -s $SH/wrk.lua $(url $PA) -- $(args) > "$TMP/a.wrk" & WA=$!
taskset -c 1 wrk -t1 -c64 -d${D}s -s $SH/wrk.lua $(url $PB) -- $(args) > "$TMP/b.wrk"
wait $WA $RA $RB
for t in a b; do
  sed -n 's/.* \([0-9]*\) requests in.*/\1/p' "$TMP/$t.wrk" > "$TMP/$t.n"
  perf report -i "$TMP/$t.data" --no-children --sort sym -F period,sym -t "|" --percent-limit 0 --stdio 2>/dev/null > "$TMP/$t.rep"
done
node "$HERE/perfsplit.mjs" "$TMP/a.rep" "$(cat $TMP/a.n)" "$TMP/b.rep" "$(cat $TMP/b.n)" "${TOP:-30}"
