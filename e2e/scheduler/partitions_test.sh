#!/usr/bin/env bash
# Partitions (a vcjob task's partitionPolicy, the PodGroup's subGroupPolicy) as a user sees
# them, with vc-controller-manager, vc-webhook-manager and vc-scheduler (network-topology-aware)
# on 4 switches x 4 KWOK nodes (4 GPUs each) under one spine, described by HyperNodes:
#   - a vcjob whose task of 16 replicas has partitionPolicy totalPartitions 4, partitionSize 4
#     and networkTopology hard highestTierAllowed 1 is admitted without a warning and binds, and
#     each partition's pods (label volcano.sh/partition-id) are on the nodes of one switch
#     (pods' nodeName -> the node's switch label, as a user would check);
#   - a partition of 5 pods x 4 GPUs (20 GPUs, a switch has 16) stays Pending, nothing of the job
#     is bound, and its PodGroup names the partition, the tier and the best switch ("sub-group
#     w-0: hard tier 1: no HyperNode of tier ≤ 1 has 20 free nvidia.com/gpu; best ... has 16");
#   - in soft mode the same partition binds over two switches.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=../webhook/lib.sh
source "$BASALT_REPO_ROOT/e2e/webhook/lib.sh"
# shellcheck source=../controllers/lib.sh
source "$BASALT_REPO_ROOT/e2e/controllers/lib.sh"

SWITCHES=4 PER_SWITCH=4
tag=pt$RANDOM
pool=parts-$tag

parts_cleanup() {
  local rc=$?
  webhook_stop
  [[ -n $CM_PID ]] && { cm_stop KILL || true; }
  set +e # so that the next line only hands rc on to sched_cleanup
  kubectl -n "$ns" delete vcjob --all --wait=false >/dev/null 2>&1
  delete_hypernodes_of "$tag"
  (exit "$rc")
  sched_cleanup
}
trap parts_cleanup EXIT

apply_crds
kubectl wait --for=condition=Established --timeout=60s crd/hypernodes.topology.volcano.sh >/dev/null
ns=$(new_namespace sched-partitions)

members=""
for ((s = 0; s < SWITCHES; s++)); do
  switch_members=""
  for ((i = 0; i < PER_SWITCH; i++)); do
    add_fake_node "$tag-sw$s-n$i" 4 "basalt.dev/pool=$pool"
    kubectl label node "$tag-sw$s-n$i" "basalt.dev/e2e-switch=$tag-sw$s" >/dev/null
    switch_members+="
  - {type: Node, selector: {exactMatch: {name: $tag-sw$s-n$i}}}"
  done
  kubectl apply -f - >/dev/null <<YAML
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: $tag-sw$s}
spec:
  tier: 1
  members:$switch_members
YAML
  members+="
  - {type: HyperNode, selector: {exactMatch: {name: $tag-sw$s}}}"
done
kubectl apply -f - >/dev/null <<YAML
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: $tag-spine}
spec:
  tier: 2
  members:$members
YAML

conf=$(sched_conf "enqueue, allocate, backfill" network-topology-aware weight=10)
start_scheduler --scheduler-conf="$conf"
cm_start
webhook_start

# partitioned NAME PARTITIONS SIZE GPUS MODE: a vcjob with one task "w" of PARTITIONS x SIZE
# pods of GPUS GPUs, each partition kept in one switch (MODE hard or soft, tier 1).
partitioned() {
  kubectl -n "$ns" apply -f - 2>&1 <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  schedulerName: volcano
  queue: default
  tasks:
  - name: w
    replicas: $(($2 * $3))
    partitionPolicy:
      totalPartitions: $2
      partitionSize: $3
      networkTopology: {mode: $5, highestTierAllowed: 1}
    template:
      spec:
        nodeSelector: {basalt.dev/pool: $pool}
        containers:
        - name: main
          image: busybox
          resources:
            requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$4"}
            limits: {nvidia.com/gpu: "$4"}
YAML
}
# switches_of JOB PARTITION: the distinct switches (node label) of the partition's pods.
switches_of() {
  local node out=""
  for node in $(kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1,volcano.sh/partition-id=$2" \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'); do
    out+="$(kubectl get node "$node" -o jsonpath='{.metadata.labels.basalt\.dev/e2e-switch}') "
  done
  tr ' ' '\n' <<<"$out" | grep . | sort -u | paste -sd' '
}
pg_of() { kubectl -n "$ns" get podgroup -l "volcano.sh/job-name=$1" -o jsonpath='{.items[0].metadata.name}'; }
delete_job() {
  kubectl -n "$ns" delete vcjob "$1" --wait=false >/dev/null 2>&1
  kubectl -n "$ns" delete pods -l "volcano.sh/job-name=$1" --grace-period=0 --force --wait=true \
    --timeout=60s >/dev/null 2>&1 || true
  gone() { [[ $(kubectl -n "$ns" get pods --no-headers 2>/dev/null | grep -c .) == 0 ]]; }
  wait_for "pods of $1 gone" 60 gone
}

# ---- 4 partitions of 4, hard tier 1 ----------------------------------------------------------
out=$(partitioned train 4 4 2 hard) && pass "a vcjob with partitionPolicy applies" ||
  fail "partitionPolicy vcjob refused: $out"
[[ $out != *Warning* ]] && pass "kubectl prints no warning for partitionPolicy" ||
  fail "kubectl warned: $out"
wait_for "the 16 pods of train bound" 90 bound_is "$ns" 16 train
expect_eq "the PodGroup carries one subGroupPolicy per partitioned task" \
  "$(kubectl -n "$ns" get podgroup "$(pg_of train)" -o jsonpath='{.spec.subGroupPolicy[0].name},{.spec.subGroupPolicy[0].subGroupSize}')" \
  "w,4"
all_switches=""
for p in 0 1 2 3; do
  sw=$(switches_of train "$p")
  e2e_log "partition $p: $sw"
  expect_eq "partition $p inside one switch" "$(wc -w <<<"$sw" | tr -d ' ')" "1"
  all_switches+="$sw "
done
e2e_log "switches used: $all_switches"
expect_no_oversubscription
delete_job train

# ---- a partition no switch holds ---------------------------------------------------------------
out=$(partitioned big 1 5 4 hard) || fail "vcjob big refused: $out"
explained() {
  local pg
  pg=$(pg_of big) || return 1
  [[ $(pg_condition_message "$ns" "$pg" Unschedulable) == *"sub-group w-0: hard tier 1: no HyperNode of tier ≤ 1 has 20 free nvidia.com/gpu; best"* ]]
}
wait_for "the too-big partition is explained on its PodGroup" 60 explained
msg=$(pg_condition_message "$ns" "$(pg_of big)" Unschedulable)
e2e_log "big: $msg"
expect_contains "it names the best switch and what it has" "$msg" "has 16"
expect_eq "nothing of it bound" "$(bound_count "$ns" big)" "0"
events=$(kubectl -n "$ns" get events --field-selector "involvedObject.name=$(pg_of big)" \
  -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
expect_contains "a PodGroup event says so too" "$events" "sub-group w-0: hard tier 1"
delete_job big

# ---- soft: the same partition spreads ----------------------------------------------------------
out=$(partitioned loose 1 5 4 soft) || fail "vcjob loose refused: $out"
wait_for "the soft partition binds" 60 bound_is "$ns" 5 loose
expect_eq "over two switches (as few as hold it)" "$(switches_of loose 0 | wc -w | tr -d ' ')" "2"
delete_job loose
