#!/usr/bin/env bash
# start.sh PORT ORIGIN_PORT - ../peer with the svc access log of every request on (issue 11: hit-1k
# keeps >= 0.85 of ../peer without it): BENCH_PEERS="$PWD/bench/peer $PWD/bench/peer-log".
BENCH_SVC_SETTING=setting-log.json exec "$(dirname "$0")/../peer/start.sh" "$@"
