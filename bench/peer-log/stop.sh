#!/usr/bin/env bash
exec "$(dirname "$0")/../peer/stop.sh" "$@"
