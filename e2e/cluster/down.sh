#!/usr/bin/env bash
# Stops exactly the processes e2e/cluster/up.sh started in a state dir (by PID, checking that
# each PID still runs the binary that was started), newest first. Idempotent.
#
# Usage: e2e/cluster/down.sh [--state-dir DIR] [--purge] [--quiet]
#   --purge   also delete the state dir (etcd data, certificates, logs)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PURGE=0 QUIET=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --state-dir) [[ $# -ge 2 ]] || die "--state-dir needs a value"; STATE_DIR=$2; shift 2 ;;
    --purge) PURGE=1; shift ;;
    --quiet) QUIET=1; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown flag '$1' (see e2e/cluster/down.sh --help)" ;;
  esac
done
PIDS=$STATE_DIR/pids

# Components in reverse start order; anything else with a pid file goes first.
ORDER=(kube-scheduler kwok kube-controller-manager kube-apiserver etcd)

stop_one() {
  local name=$1 pidf="$PIDS/$1.pid" pid cmd
  [[ -f $pidf ]] || return 0
  pid=$(cat "$pidf")
  cmd=$(cat "$PIDS/$name.cmd" 2>/dev/null || true)
  if kill -0 "$pid" 2>/dev/null; then
    # Only signal the PID if it still runs the binary we started (PIDs get reused).
    if [[ -z $cmd || $(readlink -f "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$cmd")" ]]; then
      ((QUIET)) || log "stopping $name (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      local i
      for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then
        ((QUIET)) || log "$name did not stop within 10s; killing"
        kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
  fi
  rm -f "$pidf" "$PIDS/$name.cmd"
}

if [[ -d $PIDS ]]; then
  for f in "$PIDS"/*.pid; do
    [[ -f $f ]] || continue
    n=$(basename "$f" .pid)
    [[ " ${ORDER[*]} " == *" $n "* ]] || stop_one "$n"
  done
  for n in "${ORDER[@]}"; do stop_one "$n"; done
fi
if ((PURGE)); then
  rm -rf "$STATE_DIR"
fi
exit 0
