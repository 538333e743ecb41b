#!/usr/bin/env bash
# Soak: the chaos scenario of e2e/chaos/chaos_test.sh (issue 11), longer and larger, on a cluster
# of its own, optionally after a baseline run without chaos of the same job mix (same seed), and
# a markdown report of both under _output/soak/.
#
#   bench/soak/soak.sh [flags]
#     --duration S          seconds of submitting jobs and killing components (default 600)
#     --jobs-per-wave N     jobs per wave (default 3)
#     --wave-every S        seconds between waves (default 4)
#     --kill-every S        seconds between two SIGKILLs of a random replica (default 10)
#     --apiserver-restarts N  kube-apiserver restarts during the run (default 2)
#     --queue-gpus N        the queue's nvidia.com/gpu capability (default 96)
#     --nodes N             fake nodes of 8 GPUs (default 16)
#     --seed N              job mix and victims (default: random)
#     --baseline            first the same run with no kill and no restart, for the time ratio
#     --build-dir DIR       Basalt's build tree (default _output/build)
#     --state-dir DIR       the soak cluster's state (default _output/soak-cluster; started and
#                           stopped here)
#
# Exits non-zero when a chaos run broke an invariant or a job missed its expected phase; the
# report says which. Figures only otherwise: times are not judged.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DURATION=600 JOBS_PER_WAVE=3 WAVE_EVERY=4 KILL_EVERY=10 KAS_RESTARTS=2 QUEUE_GPUS=96 NODES=16
SEED=$((RANDOM * 32768 + RANDOM)) BASELINE=0
BUILD_DIR=$REPO/_output/build STATE_DIR=$REPO/_output/soak-cluster
while (($#)); do
  case $1 in
    --duration) DURATION=$2; shift 2 ;;
    --jobs-per-wave) JOBS_PER_WAVE=$2; shift 2 ;;
    --wave-every) WAVE_EVERY=$2; shift 2 ;;
    --kill-every) KILL_EVERY=$2; shift 2 ;;
    --apiserver-restarts) KAS_RESTARTS=$2; shift 2 ;;
    --queue-gpus) QUEUE_GPUS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --baseline) BASELINE=1; shift ;;
    --build-dir) BUILD_DIR=$(cd "$2" && pwd); shift 2 ;;
    --state-dir) STATE_DIR=$2; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in DURATION JOBS_PER_WAVE WAVE_EVERY KILL_EVERY KAS_RESTARTS QUEUE_GPUS NODES SEED; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "soak: --$(echo "$v" | tr 'A-Z_' 'a-z-') must be a non-negative integer" >&2; exit 2; }
done
((WAVE_EVERY > 0)) || { echo "soak: --wave-every must be > 0" >&2; exit 2; }
for b in scheduler/vc-scheduler controllers/vc-controller-manager webhook/vc-webhook-manager; do
  [[ -x $BUILD_DIR/$b ]] || { echo "soak: not built: $BUILD_DIR/$b (hack/lib.sh build_basalt)" >&2; exit 1; }
done
OUT=$REPO/_output/soak
mkdir -p "$OUT" "$STATE_DIR"
STATE_DIR=$(cd "$STATE_DIR" && pwd)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
REPORT=$OUT/report-$STAMP.md
log() { printf '%s [soak] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

trap '"$REPO/e2e/cluster/down.sh" --state-dir "$STATE_DIR" --quiet || true' EXIT
log "starting a cluster of $NODES nodes x 8 GPUs in $STATE_DIR"
"$REPO/e2e/cluster/up.sh" --state-dir "$STATE_DIR" --replace --nodes "$NODES" --node-gpus 8 >/dev/null

# run NAME KILL_EVERY KAS_RESTARTS: one chaos_test.sh run; its output in $OUT/NAME-$STAMP.log,
# its figures in $OUT/NAME-$STAMP.env.
run() {
  local name=$1 rc=0 load0
  load0=$(cut -d' ' -f1 /proc/loadavg)
  log "$name: ${DURATION}s, $JOBS_PER_WAVE jobs every ${WAVE_EVERY}s, a kill every ${2}s (0: none), $3 kube-apiserver restart(s), seed $SEED"
  KUBECONFIG=$STATE_DIR/kubeconfig BASALT_TEST_CLUSTER_DIR=$STATE_DIR BASALT_BUILD_DIR=$BUILD_DIR \
    BASALT_REPO_ROOT=$REPO CHAOS_DURATION=$DURATION CHAOS_WAVE_EVERY=$WAVE_EVERY \
    CHAOS_JOBS_PER_WAVE=$JOBS_PER_WAVE CHAOS_KILL_EVERY=$2 CHAOS_APISERVER_RESTARTS=$3 \
    CHAOS_QUEUE_GPUS=$QUEUE_GPUS CHAOS_SEED=$SEED CHAOS_DRAIN_TIMEOUT=$((300 + DURATION / 2)) \
    CHAOS_RESULTS="$OUT/$name-$STAMP.env" \
    bash "$REPO/e2e/chaos/chaos_test.sh" >"$OUT/$name-$STAMP.log" 2>&1 || rc=$?
  echo "load_before=$load0" >>"$OUT/$name-$STAMP.env"
  echo "load_after=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/$name-$STAMP.env"
  echo "rc=$rc" >>"$OUT/$name-$STAMP.env"
  log "$name: exit $rc ($(tail -n 1 "$OUT/$name-$STAMP.log"))"
  return 0
}
val() { sed -n "s/^$2=//p" "$OUT/$1-$STAMP.env" 2>/dev/null | tail -n 1; }

((BASELINE)) && run baseline 0 0
run chaos "$KILL_EVERY" "$KAS_RESTARTS"

{
  echo "# Soak report $STAMP"
  echo
  echo "Commit $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . 2>/dev/null || echo ' (with local changes)'),"
  echo "$(nproc) cores, cluster of $NODES KWOK nodes x 8 GPUs, queue capability $QUEUE_GPUS GPUs, seed $SEED."
  echo "Every component runs two replicas with leader election (8 s lease), as the chart deploys"
  echo "them (e2e/chaos/chaos_test.sh, which this ran with larger parameters)."
  echo
  runs=(chaos)
  ((BASELINE)) && runs=(baseline chaos)
  printf '| |'; for r in "${runs[@]}"; do printf ' %s |' "$r"; done; echo
  printf '|---|'; for r in "${runs[@]}"; do printf -- '---|'; done; echo
  row() { # LABEL KEY
    printf '| %s |' "$1"
    for r in "${runs[@]}"; do printf ' %s |' "$(val "$r" "$2")"; done
    echo
  }
  row "result (exit code; 0 = every check passed)" rc
  row "failed checks" failed_checks
  row "submitting for (s)" duration_s
  row "jobs" jobs
  row "job mix" kinds
  row "pods (first run of each job)" pods
  row "SIGKILLs: vc-scheduler" kills_scheduler
  row "SIGKILLs: vc-controller-manager" kills_controllers
  row "SIGKILLs: vc-webhook-manager" kills_admission
  row "kube-apiserver restarts" restarts_apiserver
  row "leaders that exited on a lost Lease (restarted)" lease_exits
  row "job creations retried (webhook or API server down)" creations_retried
  row "last job finished, s after the first was submitted" makespan_s
  row "last job finished, s after the chaos stopped" drain_s
  row "whole run (s)" total_s
  row "invariant samples" samples
  row "peak GPUs bound in the queue" peak_queue_gpus
  row "samples breaking an invariant" violations
  row "load average (1 min) before" load_before
  row "load average (1 min) after" load_after
  echo
  if ((BASELINE)); then
    b=$(val baseline makespan_s) c=$(val chaos makespan_s)
    [[ -n $b && -n $c && $b -gt 0 ]] && echo "The same jobs took $(awk -v b="$b" -v c="$c" 'BEGIN { printf "%+.0f%%", (c - b) * 100 / b }') time under chaos (first submission to last job finished)." && echo
  fi
  echo "Checked at every sample (~2 s): no node over its allocatable cpu, GPUs or pods; no two live"
  echo "pods with the same job, task and index; the queue's live pods and status.allocated within"
  echo "its capability. At the end: every job in its expected phase (plain and exitCode -> CompleteJob"
  echo "jobs Completed, PodFailed -> RestartJob jobs Failed after exactly maxRetry = 1 restart), plain"
  echo "jobs with one pod per task index; no PodGroup left, the queue's allocated back to 0, no pod"
  echo "left after deleting the jobs; no replica died unless killed (or exited on a lost Lease while"
  echo "the API server was down); no 403 outside the API server's restarts."
  for r in "${runs[@]}"; do
    echo
    echo "## $r: checks that failed"
    echo
    if grep -q 'FAIL:' "$OUT/$r-$STAMP.log"; then
      echo '```'
      grep 'FAIL:' "$OUT/$r-$STAMP.log" | head -n 40
      echo '```'
    else
      echo "None ($(grep -c '\] ok: ' "$OUT/$r-$STAMP.log") checks passed). Log: \`_output/soak/$r-$STAMP.log\`."
    fi
  done
} >"$REPORT"
log "report: $REPORT"
[[ $(val chaos rc) == 0 && (BASELINE -eq 0 || $(val baseline rc) == 0) ]]
