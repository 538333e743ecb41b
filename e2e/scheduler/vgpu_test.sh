#!/usr/bin/env bash
# vGPU sharing as a Volcano user sees it, on two KWOK nodes that register 2 GPUs each the way
# Volcano's vGPU device plugin does (volcano.sh/node-vgpu-register + handshake; capacity
# volcano.sh/vgpu-number/-memory/-cores), 16000 MiB and 4 vGPUs per GPU, deviceshare with
# VGPUEnable:
#   - a pod asking volcano.sh/vgpu-number 1, vgpu-memory 4000, vgpu-cores 25 is bound and carries
#     the assignment the device plugin reads (volcano.sh/vgpu-ids-new naming one of its node's
#     GPUs, devices-to-allocate, vgpu-node, bind-phase allocating), written with the binding;
#   - a burst of 16 pods of 6000 MiB / 30 cores: exactly as many as fit are bound (2 per GPU by
#     memory), no GPU's memory, cores or vGPU count is exceeded (summed from the annotations), and
#     each pod left pending is told which vGPU resource is short;
#   - after the burst is deleted the GPUs are free again: a PodGroup of pods with
#     volcano.sh/vgpu-podgroup-policy: spread lands on different GPUs of one node, a third pod of
#     that group finds no GPU without a sibling and says so, while a PodGroup without the policy
#     shares one GPU;
#   - a pod asking more memory than any GPU has stays Pending and its condition names
#     volcano.sh/vgpu-memory.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-vgpu)
pool=vgpu-$RANDOM
GPU_MEM=16000 GPU_SPLIT=4

# add_vgpu_node NAME GPUS: a KWOK node registering GPUS vGPU-shared GPUs.
add_vgpu_node() {
  local i reg=""
  for ((i = 0; i < $2; i++)); do reg+="GPU-$1-$i,$GPU_SPLIT,$GPU_MEM,NVIDIA-NVIDIA-A100,true,hami-core:"; done
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations:
    kwok.x-k8s.io/node: fake
    volcano.sh/node-vgpu-register: "$reg"
    volcano.sh/node-vgpu-handshake: "Reported $(date -u '+%Y-%m-%d %H:%M:%S')"
  labels: {type: kwok, kubernetes.io/hostname: $1, basalt.dev/pool: $pool}
status:
  allocatable: &res
    cpu: "32"
    memory: 256Gi
    pods: "110"
    volcano.sh/vgpu-number: "$(($2 * GPU_SPLIT))"
    volcano.sh/vgpu-memory: "$(($2 * GPU_MEM))"
    volcano.sh/vgpu-cores: "$(($2 * 100))"
  capacity: *res
YAML
  CLUSTER_OBJECTS+=("node/$1")
}
add_vgpu_node "$pool-0" 2
add_vgpu_node "$pool-1" 2

conf=$(mktemp)
cat >"$conf" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
  - name: proportion
  - name: nodeorder
YAML
start_scheduler --scheduler-conf="$conf"

# vgpu_pods GROUP MIN COUNT MEMORY CORES [SELECTOR k=v] [EXTRA_ANNOTATION k: v]: a PodGroup and
# COUNT pods, each asking one vGPU with MEMORY MiB and CORES percent.
vgpu_pods() {
  local group=$1 min=$2 count=$3 mem=$4 cores=$5 selector=${6:-basalt.dev/pool=$pool} extra=${7:-} i
  {
    podgroup_yaml "$group" "$min" default
    for ((i = 0; i < count; i++)); do
      cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $group-$i
  annotations: {scheduling.k8s.io/group-name: $group${extra:+, $extra}}
  labels: {volcano.sh/job-name: "$group"}
spec:
  schedulerName: volcano
  nodeSelector: {${selector%%=*}: "${selector#*=}"}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 100m}
      limits: {volcano.sh/vgpu-number: "1", volcano.sh/vgpu-memory: "$mem", volcano.sh/vgpu-cores: "$cores"}
YAML
    done
  } | kubectl -n "$ns" apply -f - >/dev/null
}
ann() { # POD KEY
  kubectl -n "$ns" get pod "$1" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations",{}).get(sys.argv[1],""))' "$2"
}
node_of() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
scheduled_message() {
  kubectl -n "$ns" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}

# Per GPU, from the assignments of the bound pods: "uuid pods memory cores", plus an "ERR ..."
# line for an assignment naming a GPU of another node or not matching its request.
gpu_usage() {
  kubectl -n "$ns" get pods -o json | python3 -c '
import json, sys
def qty(q):  # the API server writes 6000 as "6k"
    q = str(q)
    return int(q[:-1]) * 1000 if q.endswith("k") else int(q)
use = {}
for p in json.load(sys.stdin)["items"]:
    node = p["spec"].get("nodeName")
    if not node:
        continue
    a = p["metadata"].get("annotations", {})
    ids = a.get("volcano.sh/vgpu-ids-new", "")
    lim = p["spec"]["containers"][0]["resources"]["limits"]
    for cont in ids.split(";"):
        for e in cont.split(":"):
            if "," not in e:
                continue
            uuid, typ, mem, cores = e.split(",")
            if not uuid.startswith("GPU-" + node + "-"):
                print("ERR", p["metadata"]["name"], "on", node, "got", uuid)
            if int(mem) != qty(lim["volcano.sh/vgpu-memory"]) or int(cores) != qty(lim["volcano.sh/vgpu-cores"]):
                print("ERR", p["metadata"]["name"], "assignment", e, "does not match its limits")
            u = use.setdefault(uuid, [0, 0, 0])
            u[0] += 1; u[1] += int(mem); u[2] += int(cores)
for k, (n, m, c) in sorted(use.items()):
    print(k, n, m, c)
'
}
check_capacity() { # WHAT
  local usage over
  usage=$(gpu_usage)
  e2e_log "GPU usage (uuid pods MiB cores): $(echo "$usage" | tr '\n' ';')"
  over=$(echo "$usage" | awk -v m="$GPU_MEM" -v s="$GPU_SPLIT" '$1 == "ERR" || $2 > s || $3 > m || $4 > 100')
  if [[ -z $over ]]; then pass "$1: no GPU over its memory, cores or vGPU count"; else fail "$1: $over"; fi
}

# --- one pod: bound with the assignment annotations --------------------------------------------
vgpu_pods one 1 1 4000 25
wait_for "one-0 bound" 20 bash -c "[[ -n \$(kubectl -n $ns get pod one-0 -o jsonpath='{.spec.nodeName}') ]]"
node=$(node_of one-0)
ids=$(ann one-0 volcano.sh/vgpu-ids-new)
if [[ $ids =~ ^GPU-$node-[01],NVIDIA,4000,25:$ ]]; then
  pass "one-0 on $node carries volcano.sh/vgpu-ids-new=$ids"
else
  fail "one-0 on $node: volcano.sh/vgpu-ids-new='$ids'"
fi
expect_eq "volcano.sh/devices-to-allocate" "$(ann one-0 volcano.sh/devices-to-allocate)" "$ids"
expect_eq "volcano.sh/vgpu-node" "$(ann one-0 volcano.sh/vgpu-node)" "$node"
expect_eq "volcano.sh/bind-phase" "$(ann one-0 volcano.sh/bind-phase)" "allocating"
[[ $(ann one-0 volcano.sh/bind-time) =~ ^[0-9]+$ ]] && pass "volcano.sh/bind-time is a unix time" ||
  fail "volcano.sh/bind-time='$(ann one-0 volcano.sh/bind-time)'"

# --- a burst: never more than a GPU holds ------------------------------------------------------
for i in $(seq 0 15); do vgpu_pods "burst$i" 1 1 6000 30; done
# 4 GPUs x 2 pods of 6000 MiB (the GPU holding one-0 too: 4000 + 12000 = 16000).
wait_for "8 burst pods bound" 40 bash -c "[[ \$(kubectl -n $ns get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{\"\\n\"}{end}' | awk '\$1 ~ /^burst/ && NF == 2' | wc -l) -ge 8 ]]"
sleep 3 # a few more cycles: nothing else may fit
bound_burst=$(kubectl -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk '$1 ~ /^burst/ && NF == 2' | wc -l)
expect_eq "burst pods bound" "$bound_burst" "8"
check_capacity "after the burst"
pending_msgs=0
for i in $(seq 0 15); do
  [[ -n $(node_of "burst$i-0") ]] && continue
  m=$(scheduled_message "burst$i-0")
  [[ $m == *"volcano.sh/vgpu-"* ]] && pending_msgs=$((pending_msgs + 1))
  last_msg=$m
done
expect_eq "pending burst pods whose condition names a vGPU resource" "$pending_msgs" "8"
e2e_log "a pending burst pod says: ${last_msg:-}"

# --- freed, then spread ------------------------------------------------------------------------
kubectl -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroups --all >/dev/null
wait_for "burst pods gone" 30 bash -c "[[ -z \$(kubectl -n $ns get pods -o name) ]]"
vgpu_pods spread 2 3 2000 10 "kubernetes.io/hostname=$pool-0" "volcano.sh/vgpu-podgroup-policy: spread"
wait_for "two spread pods bound" 30 bash -c "[[ \$(kubectl -n $ns get pods -l volcano.sh/job-name=spread -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) -ge 2 ]]"
sleep 2
spread_gpus=()
unplaced=""
for i in 0 1 2; do
  if [[ -n $(node_of "spread-$i") ]]; then
    spread_gpus+=("$(ann "spread-$i" volcano.sh/vgpu-ids-new | cut -d, -f1)")
  else
    unplaced=spread-$i
  fi
done
expect_eq "spread pods bound on a 2-GPU node" "${#spread_gpus[@]}" "2"
if [[ ${#spread_gpus[@]} == 2 && ${spread_gpus[0]} != "${spread_gpus[1]}" ]]; then
  pass "spread pods on different GPUs (${spread_gpus[*]})"
else
  fail "spread pods share a GPU: ${spread_gpus[*]}"
fi
if [[ -n $unplaced ]]; then
  wait_for "$unplaced explained" 15 bash -c "kubectl -n $ns get pod $unplaced -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q vgpu-podgroup-policy"
  e2e_log "$unplaced says: $(scheduled_message "$unplaced")"
fi
vgpu_pods packed 2 2 2000 10 "kubernetes.io/hostname=$pool-1"
wait_for "packed pods bound" 20 bash -c "[[ \$(kubectl -n $ns get pods -l volcano.sh/job-name=packed -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) == 2 ]]"
expect_eq "without the policy a PodGroup shares one GPU" \
  "$(ann packed-0 volcano.sh/vgpu-ids-new | cut -d, -f1)" "$(ann packed-1 volcano.sh/vgpu-ids-new | cut -d, -f1)"
check_capacity "after spread"

# --- never fits --------------------------------------------------------------------------------
vgpu_pods huge 1 1 40000 10
wait_for "huge-0 explained" 20 bash -c "kubectl -n $ns get pod huge-0 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'Insufficient volcano.sh/vgpu-memory'"
expect_eq "huge-0 node" "$(node_of huge-0)" ""
e2e_log "huge-0 says: $(scheduled_message huge-0)"
expect_contains "PodGroup huge condition" "$(pg_condition_message "$ns" huge Unschedulable)" "volcano.sh/vgpu-memory"

rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
