#!/usr/bin/env bash
# npm run bench: our server (bench/peer) beside nginx and Traffic Server (and any --peers given)
# in alternating rounds of ../shared/bench/compare.sh. Extra arguments pass through, e.g.
#   npm run bench -- --only miss --rounds 3
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED=${BENCH_HARNESS:-$HERE/../../shared/bench}
[ -x "$SHARED/compare.sh" ] || { echo "bench: harness not found at $SHARED (set BENCH_HARNESS)" >&2; exit 2; }
PEERS=${BENCH_PEERS:-"nginx trafficserver $HERE/peer"}
exec "$SHARED/compare.sh" --peers "$PEERS" "$@"
