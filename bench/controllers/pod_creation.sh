#!/usr/bin/env bash
# Pod creation by vc-controller-manager vs a raw creator, and the controller's memory with many
# pods. Prints figures; never passes or fails on time.
#
#   KUBECONFIG=... BASALT_BUILD_DIR=_output/build bench/controllers/pod_creation.sh \
#     [--replicas 1000] [--qps 1000] [--rss-pods 10000] [--raw-first]
#
# 1. One Job of --replicas pods: time from `kubectl apply` to all pods created, and from the
#    PodGroup being admitted (Inqueue, set by this script at once) to all pods created.
# 2. controllers_raw_create: the same number of job-shaped pods with the same client, QPS and
#    16 creations in flight (the controller's per-job concurrency).
# 3. RSS of the controller once the cluster holds --rss-pods pods of jobs.
# Needs a cluster with the CRDs (e2e/cluster/up.sh + kubectl apply -f crds/).
set -euo pipefail
REPLICAS=1000 QPS=1000 RSS_PODS=10000 RAW_FIRST=0
while (($#)); do
  case $1 in
    --raw-first) RAW_FIRST=1; shift ;;
    --replicas) REPLICAS=$2; shift 2 ;;
    --qps) QPS=$2; shift 2 ;;
    --rss-pods) RSS_PODS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
job() { # namespace name replicas
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $2, namespace: $1}
spec:
  minAvailable: $3
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: $3
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: {requests: {cpu: 10m}}}]}
JOB
}
admit_when_created() { # namespace name
  until kubectl -n "$1" get podgroup "$2" >/dev/null 2>&1; do sleep 0.05; done
  kubectl -n "$1" patch podgroup "$2" --subresource=status --type=merge -p '{"status":{"phase":"Inqueue"}}' >/dev/null
}

run=$RANDOM
ns=bench-ctrl-$run rawns=bench-raw-$run
start_controller_manager "$ns" "$rawns"
rss_idle=$(awk '/VmRSS/ {print $2}' /proc/$cm/status)

run_raw() {
  raw_out=$("$RAW" --kubeconfig="$KUBECONFIG" --namespace="$rawns" --count="$REPLICAS" --concurrency=16 \
    --kube-api-qps="$QPS" --kube-api-burst="$QPS")
  raw_seconds=$(sed -E 's/.*seconds=([0-9.]+).*/\1/' <<<"$raw_out")
  printf 'raw creator: %s\n' "$raw_out"
}
((RAW_FIRST)) && run_raw

t0=$(now)
job "$ns" bench "$REPLICAS" | kubectl apply -f - >/dev/null
admit_when_created "$ns" bench
t1=$(now)
until (($(count_pods "$ns") >= REPLICAS)); do sleep 0.05; done
t2=$(now)
from_apply=$(echo "$t2 - $t0" | bc -l)
from_admit=$(echo "$t2 - $t1" | bc -l)
printf 'controller: %d pods, %.2fs from apply, %.2fs from PodGroup Inqueue\n' "$REPLICAS" "$from_apply" "$from_admit"

((RAW_FIRST)) || run_raw
printf 'ratio controller(from Inqueue)/raw = %.2f, controller(from apply)/raw = %.2f\n' \
  "$(echo "$from_admit / $raw_seconds" | bc -l)" "$(echo "$from_apply / $raw_seconds" | bc -l)"
kubectl delete namespace "$rawns" --wait=false >/dev/null

if ((RSS_PODS > REPLICAS)); then
  jobs=$(((RSS_PODS + REPLICAS - 1) / REPLICAS))
  for ((j = 1; j < jobs; j++)); do
    job "$ns" "bench-$j" "$REPLICAS" | kubectl apply -f - >/dev/null
    admit_when_created "$ns" "bench-$j"
  done
  t3=$(now)
  until (($(count_pods "$ns") >= jobs * REPLICAS)); do sleep 0.5; done
  t4=$(now)
  sleep 5
  rss=$(awk '/VmRSS/ {print $2}' /proc/$cm/status)
  hwm=$(awk '/VmHWM/ {print $2}' /proc/$cm/status)
  printf 'rss: idle %d MiB; with %d pods of %d jobs: %d MiB (peak %d MiB); last %d jobs created in %.1fs\n' \
    $((rss_idle / 1024)) $((jobs * REPLICAS)) "$jobs" $((rss / 1024)) $((hwm / 1024)) $((jobs - 1)) \
    "$(echo "$t4 - $t3" | bc -l)"
fi
