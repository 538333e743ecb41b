#!/usr/bin/env bash
# In-process scheduler benchmark matrix (sched_session_bench): the real cache, snapshots and
# sessions with the default actions/plugins, a loopback binder, no API server. One process per
# case so that peak RSS belongs to that case. Figures only, never pass/fail.
#
#   bench/scheduler/run.sh [--build-dir _output/build] [--nodes "1000 5000"] [--pods "10000 50000"]
#                          [--modes "backlog backlog-all-nodes arrival arrival-full-copy"]
#
# For each size: "backlog" (every gang pending before the first cycle), "arrival" (the gangs
# arrive in 50 batches, one per cycle) and, as the same-run reference, "arrival" with a complete
# snapshot copy every cycle (--full-snapshots) and the backlog with node sampling off
# (--percentage-nodes-to-find=100).
set -euo pipefail
BUILD_DIR=_output/build NODES="1000 5000" PODS="10000 50000"
MODES="backlog backlog-all-nodes arrival arrival-full-copy"
while (($#)); do
  case $1 in
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    *) echo "unknown flag $1" >&2; exit 2 ;;
  esac
done
BENCH=$BUILD_DIR/bench/scheduler/sched_session_bench
[[ -x $BENCH ]] || { echo "build $BENCH first (cmake --build $BUILD_DIR --target sched_session_bench)" >&2; exit 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
printf '%-6s %-6s %-22s %9s %7s %9s %9s %9s %9s %9s %9s %9s %16s\n' nodes pods mode pods/s cycles cyc_p50 cyc_p99 cpu_p50 cpu_p99 snap_p50 sess_p99 rss_MiB placements
for n in $NODES; do
  for p in $PODS; do
    for mode in $MODES; do
      case $mode in
        backlog) args=(--batches=1) ;;
        backlog-all-nodes) args=(--batches=1 --percentage-nodes-to-find=100) ;;
        arrival) args=(--batches=50) ;;
        arrival-full-copy) args=(--batches=50 --full-snapshots) ;;
        *) echo "unknown mode $mode" >&2; exit 2 ;;
      esac
      out=$("$BENCH" --nodes="$n" --pods="$p" "${args[@]}" 2>/dev/null)
      printf '%-6s %-6s %-22s %9s %7s %9s %9s %9s %9s %9s %9s %9s %16s\n' "$n" "$p" "$mode" \
        "$(field pods_per_s "$out")" "$(field cycles "$out")" "$(field cycle_ms_p50 "$out")" \
        "$(field cycle_ms_p99 "$out")" "$(field cycle_cpu_ms_p50 "$out")" \
        "$(field cycle_cpu_ms_p99 "$out")" "$(field snapshot_ms_p50 "$out")" \
        "$(field session_ms_p99 "$out")" "$(field peak_rss_mib "$out")" \
        "$(field placement_digest "$out")"
    done
  done
done
