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

# signal_one NAME: sends SIGTERM if the PID still runs the binary that was started (PIDs get
# reused; a binary rebuilt since it started shows as "<path> (deleted)"); prints the PID.
signal_one() {
  local name=$1 pidf="$PIDS/$1.pid" pid cmd
  [[ -f $pidf ]] || return 0
  pid=$(cat "$pidf")
  cmd=$(cat "$PIDS/$name.cmd" 2>/dev/null || true)
  if kill -0 "$pid" 2>/dev/null &&
    [[ -z $cmd || $(readlink "/proc/$pid/exe" 2>/dev/null | sed 's/ (deleted)$//') == "$(readlink -f "$cmd")" ]]; then
    ((QUIET)) || log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    echo "$pid"
  fi
  rm -f "$pidf" "$PIDS/$name.cmd"
}

# wait_all PIDS...: waits up to 10s for all to exit, then SIGKILLs the rest.
wait_all() {
  local pid i alive
  for ((i = 0; i < 100; i++)); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then
      ((QUIET)) || log "pid $pid did not stop within 10s; killing"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

if [[ -d $PIDS ]]; then
  # Basalt's own components (and anything else with a pid file) first, so they do not log
  # errors about a vanished API server; then the control plane, API clients before the server.
  first=()
  for f in "$PIDS"/*.pid; do
    [[ -f $f ]] || continue
    n=$(basename "$f" .pid)
    [[ " ${ORDER[*]} " == *" $n "* ]] || first+=("$(signal_one "$n")")
  done
  ((${#first[@]})) && wait_all ${first[@]}
  clients=()
  for n in kube-scheduler kwok kube-controller-manager; do clients+=($(signal_one "$n")); done
  ((${#clients[@]})) && wait_all "${clients[@]}"
  for n in kube-apiserver etcd; do
    pid=$(signal_one "$n")
    [[ -n $pid ]] && wait_all "$pid"
  done
fi
if ((PURGE)); then
  rm -rf "$STATE_DIR"
fi
exit 0
