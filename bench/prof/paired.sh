#!/usr/bin/env bash
# bench/prof/paired.sh PEER_A PEER_B [ROUNDS] [SETTING] - CPU microseconds per cache miss of two
# peers served side by side: both started fresh each round, each under its own wrk (unique miss
# URLs, -c64) at the same time, one origin for both. PAIRED_WORKLOAD=mix measures hit-mix instead:
# each peer is filled with the bench's 10,000 /mix/ objects after it starts, then both serve
# random hits of them (the per-hit cost of a store too large for the CPU caches); hit1k: /hit-1k
# over and over (one object, wrk's static request); revalidate: each peer is filled with the
# bench's 1,000 /reval/ objects (max-age=0 + ETag), then every request is a stale hit revalidated
# with a conditional request the origin answers 304 (run.sh's revalidate). On a shared machine the CPU a request costs
# swings by half from minute to minute; two peers measured in the same seconds see the same
# swings, so their ratio (B/A, printed per round) is what an A/B of two builds should read.
# Run PEER_A against itself first to see the spread of the ratio on the machine of the day.
# PEER_x: a bench/peer directory (of any worktree: a base build's, this one's) or
# bench/node-proxy. SETTING: a file of bench/peer (default setting-volatile.json: memory only, so
# the disk tier does not hide the pipeline's cost; with PAIRED_WORKLOAD=mix, hit1k or revalidate:
# setting.json, the bench's own, whose 1.5 GB memory tier holds every object). Ports: PROF_PORT (A; B is +2, the management
# ports +101/+103 and +110/+120) and PROF_ORIGIN, default 26000 and 26080.
set -uo pipefail
W=${PAIRED_WORKLOAD:-miss}
case "$W" in miss) DS=setting-volatile.json ;; mix|hit1k|revalidate) DS=setting.json ;; *) echo "paired.sh: PAIRED_WORKLOAD is miss, mix, hit1k or revalidate" >&2; exit 2 ;; esac
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd) R=${3:-5} S=${4:-$DS}
SH=/work/shared/bench
export PATH="$(cd "$(dirname "$0")/../.." && pwd)/node_modules/.bin:$PATH"
PA=${PROF_PORT:-26000} O=${PROF_ORIGIN:-26080}
PB=$((PA + 2))
TMP=$(mktemp -d /tmp/paired.XXXXXX)
# start.sh derives the management ports from the service port (+1000, +2000), which may be another
# user's; each peer gets a copy of the setting with ports of this range instead.
setting() { sed -e "s/@API_PORT@/$2/" -e "s/@BASE_PORT@/$3/" "$1/$S" > "$TMP/$(basename "$1")-$2.json" 2>/dev/null; realpath --relative-to="$1" "$TMP/$(basename "$1")-$2.json"; }
# start DIR PORT TAG API_PORT BASE_PORT: prints the PID of the peer
start() { BENCH_STATE_ROOT=$TMP/state-$3 BENCH_SVC_CACHE=/dev/shm/paired-$PA-$3 BENCH_SVC_SETTING=$(setting "$1" $4 $5) bash "$1/start.sh" "$2" $O; }
stop() { BENCH_STATE_ROOT=$TMP/state-$2 BENCH_SVC_CACHE=/dev/shm/paired-$PA-$2 bash "$1/stop.sh" >/dev/null 2>&1; true; }
tree() { local p; echo $1; for p in $(ps -o pid= --ppid $1 || true); do tree $p; done; }
ticks() { local s=0; for p in $(tree $1); do s=$((s+$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $s; }
# wrk.lua's arguments: unique miss URLs (TAG makes them new), random hits of the 10,000 /mix/
# objects, or of the 1,000 /reval/ ones. hit1k: the path is the URL's (wrk.lua's fixed mode).
args() { case "$W" in mix) echo mix 10000 ;; revalidate) echo reval 1000 ;; hit1k) echo fixed ;; *) echo miss "$1$(date +%s%N)" ;; esac; }
path() { if [ "$W" = hit1k ]; then echo /hit-1k; else echo /; fi; }
OPID=
cleanup() { stop "$A" a; stop "$B" b; [ -n "$OPID" ] && kill $OPID 2>/dev/null; rm -rf "$TMP"; true; }
trap cleanup EXIT
[ -n "${PAIRED_KEEP:-}" ] && trap - EXIT
taskset -c 1 node $SH/origin.js $O >/dev/null 2>&1 & OPID=$!
sleep 0.5
for i in $(seq $R); do
  PIDA=$(start "$A" $PA a $((PA + 101)) $((PA + 110))) PIDB=$(start "$B" $PB b $((PA + 103)) $((PA + 120)))
  for p in $PA $PB; do for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:$p/hit-1k && break; sleep 0.2; done; done
  if [ "$W" = mix ] || [ "$W" = revalidate ]; then
    fill() { if [ "$W" = mix ]; then set -- $1 /mix/ 10000; else set -- $1 /reval/ 1000; fi
      taskset -c 1 node $SH/client.js fill http://127.0.0.1:$1 $2 $3 16 | grep -v '"failed":0'; true; }
    fill $PA & WP=$!; fill $PB; wait $WP
  fi
  taskset -c 1 wrk -t1 -c64 -d2s -s $SH/wrk.lua http://127.0.0.1:$PA$(path) -- $(args w$i) >/dev/null & WP=$!
  taskset -c 1 wrk -t1 -c64 -d2s -s $SH/wrk.lua http://127.0.0.1:$PB$(path) -- $(args v$i) >/dev/null; wait $WP
  a0=$(ticks $PIDA) b0=$(ticks $PIDB)
  taskset -c 1 wrk -t1 -c64 -d8s -s $SH/wrk.lua http://127.0.0.1:$PA$(path) -- $(args a$i) > $TMP/a.out & WP=$!
  taskset -c 1 wrk -t1 -c64 -d8s -s $SH/wrk.lua http://127.0.0.1:$PB$(path) -- $(args b$i) > $TMP/b.out; wait $WP
  a1=$(ticks $PIDA) b1=$(ticks $PIDB)
  na=$(sed -n 's/.* \([0-9]*\) requests in.*/\1/p' $TMP/a.out) nb=$(sed -n 's/.* \([0-9]*\) requests in.*/\1/p' $TMP/b.out)
  ua=$(( (a1 - a0) * 1000000 / na )) ub=$(( (b1 - b0) * 1000000 / nb ))
  echo "round $i $S: A $na req $((ua / 100)) us/$W, B $nb req $((ub / 100)) us/$W, B/A $((ub * 1000 / ua))e-3 $(grep -hE 'Non-2xx|Socket errors' $TMP/a.out $TMP/b.out | tr '\n' ' ')"
  stop "$A" a; stop "$B" b
done
