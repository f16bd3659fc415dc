# bench/lib.sh - what the peer-starting bench scripts (https.sh, compress.sh, range-ttfb.sh)
# share: sourced, not run. Each script starts one peer at a time and keeps its PID in PEER_PID.

# tree PID: the PID and all its descendants (a peer is a process tree: svc's supervisor,
# primary and workers; nginx's master and workers).
tree() { local p; echo "$1"; for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$p"; done; }

# stop_peer: SIGTERM to the peer (svc drains, nginx quits), then wait up to 20 s for every
# process of its tree and kill what is left, so the next peer finds its ports and CPU free.
stop_peer() {
  [ -n "$PEER_PID" ] || return 0
  local pids p i; pids=$(tree "$PEER_PID")
  kill -TERM "$PEER_PID" 2>/dev/null || true
  for p in $pids; do for i in $(seq 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -KILL "$p" 2>/dev/null || true; done
  PEER_PID=""
}
