#!/usr/bin/env bash
# npm run bench: our server (bench/peer) beside nginx and Traffic Server (and any --peers given)
# in alternating rounds of ../shared/bench/compare.sh, then the HTTPS workloads (bench/https.sh:
# HTTP/1.1 and HTTP/2 hit-1k over TLS 1.3, new handshakes per second; ours beside nginx).
# Extra arguments pass through to the first, e.g.
#   npm run bench -- --only miss --rounds 3
# `--only https` runs the HTTPS workloads alone; another --only, or BENCH_HTTPS=0, skips them.
# `--only range` runs bench/range-ttfb.sh alone (first byte of a range of an uncached 4 GiB
# object, ours beside nginx's slice module); it is not part of the default run.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
[ -x "$SHARED/compare.sh" ] || { echo "bench: harness not found at $SHARED (set BENCH_HARNESS)" >&2; exit 2; }
PEERS=${BENCH_PEERS:-"nginx trafficserver $HERE/peer"}
ONLY=""
prev=""
for a in "$@"; do [ "$prev" = --only ] && ONLY=$a; prev=$a; done
ROUNDS=3
prev=""
for a in "$@"; do [ "$prev" = --rounds ] && ROUNDS=$a; prev=$a; done
if [ "$ONLY" = range ]; then exec bash "$HERE/range-ttfb.sh" --rounds "$ROUNDS"; fi
if [ "$ONLY" != https ]; then "$SHARED/compare.sh" --peers "$PEERS" "$@"; fi
if [ "${BENCH_HTTPS:-1}" != 0 ] && { [ -z "$ONLY" ] || [ "$ONLY" = https ]; }; then
  bash "$HERE/https.sh" --rounds "$ROUNDS"
fi
