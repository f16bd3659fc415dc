#!/usr/bin/env bash
STATE=${BENCH_STATE_ROOT:-/tmp/bench}/node-proxy
[ -f "$STATE/pid" ] && kill "$(cat "$STATE/pid")" 2>/dev/null
rm -f "$STATE/pid"; true
