#!/usr/bin/env bash
# Jobs/s of vc-controller-manager for many small Jobs vs a raw creator writing the same objects.
# Prints figures; never passes or fails on time.
#
#   KUBECONFIG=... BASALT_BUILD_DIR=_output/build bench/controllers/job_throughput.sh \
#     [--jobs 500] [--replicas 2] [--qps 1000] [--workers 16] [--raw-first]
#
# 1. controller (--worker-threads=--workers, default 16 = the raw tool's concurrency):
#    controllers_job_throughput creates --jobs Jobs of 1 task x --replicas pods (16
#    in flight) and admits each PodGroup (Inqueue) as soon as it appears; time from the first
#    Job creation to all --jobs x --replicas pods existing.
# 2. raw: controllers_raw_create --pods-per-group=--replicas writes what the controller writes
#    for those jobs (a PodGroup, then its pods, 16 groups in flight), same client and QPS.
# Ratio = controller jobs/s / raw jobs/s. The controller also writes each Job's status (twice:
# Pending, then the pod counts) and runs the admission round trip, which the raw creator does not.
set -euo pipefail
JOBS=500 REPLICAS=2 QPS=1000 RAW_FIRST=0 WORKERS=16
while (($#)); do
  case $1 in
    --raw-first) RAW_FIRST=1; shift ;;
    --jobs) JOBS=$2; shift 2 ;;
    --replicas) REPLICAS=$2; shift 2 ;;
    --qps) QPS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TP=$BASALT_BUILD_DIR/bench/controllers/controllers_job_throughput
pods=$((JOBS * REPLICAS))
run=$RANDOM
ns=bench-jobs-$run rawns=bench-jobsraw-$run
start_controller_manager "$ns" "$rawns" -- --worker-threads="$WORKERS"

run_raw() {
  raw_out=$("$RAW" --kubeconfig="$KUBECONFIG" --namespace="$rawns" --count="$pods" --concurrency=16 \
    --pods-per-group="$REPLICAS" --kube-api-qps="$QPS" --kube-api-burst="$QPS")
  raw_seconds=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$raw_out")
  printf 'raw creator (%d PodGroups + %d pods): %s -> %.0f jobs/s\n' "$JOBS" "$pods" "$raw_out" \
    "$(echo "$JOBS / $raw_seconds" | bc -l)"
}
((RAW_FIRST)) && run_raw

t0=$(now)
tp_out=$("$TP" --kubeconfig="$KUBECONFIG" --namespace="$ns" --jobs="$JOBS" --replicas="$REPLICAS" \
  --concurrency=16 --kube-api-qps="$QPS" --kube-api-burst="$QPS")
until (($(count_pods "$ns") >= pods)); do sleep 0.05; done
t1=$(now)
ctrl_seconds=$(echo "$t1 - $t0" | bc -l)
printf 'controller: %d jobs x %d pods: %s; all pods after %.2fs -> %.0f jobs/s\n' "$JOBS" "$REPLICAS" \
  "$tp_out" "$ctrl_seconds" "$(echo "$JOBS / $ctrl_seconds" | bc -l)"
running() { kubectl get vcjob -n "$ns" -o jsonpath='{range .items[*]}{.status.pending}{"\n"}{end}' | grep -c "^$REPLICAS\$" || true; }
printf 'jobs whose status counts %d pending pods right after: %s/%d\n' "$REPLICAS" "$(running)" "$JOBS"

((RAW_FIRST)) || run_raw
printf 'ratio controller jobs/s / raw jobs/s = %.2f\n' "$(echo "$raw_seconds / $ctrl_seconds" | bc -l)"
