#!/usr/bin/env bash
# HyperNodes and network-topology-aware gang placement, as a user sees them, on a fabric of
# 8 switches x 8 KWOK nodes (4 GPUs each) under 2 spines, labelled by switch and spine:
#   - the hypernode controller (Volcano's label discovery config, profile form) discovers 8
#     tier-1 and 2 tier-2 HyperNodes with their members and nodeCount, follows a node that
#     joins and leaves a switch, creates and deletes the HyperNode of a switch that comes and
#     goes with its only node, and leaves a HyperNode a user created alone;
#   - 20 gangs of 8 pods x 1 GPU with `hard, highestTierAllowed: 1` each land inside one
#     switch; the second fills the switch the first opened (HyperNode binpack keeps whole
#     switches free for later);
#   - a 9 x 4-GPU gang (36 GPUs, more than a switch has) in hard tier 1 stays Pending and its
#     PodGroup says "hard tier 1: no HyperNode of tier ≤ 1 has 36 free nvidia.com/gpu; best
#     ... has 32"; allowed tier 2 it binds, inside one spine;
#   - the same gang in soft mode binds over as few switches as needed (2);
#   - node groups: a pod annotated scheduling.volcano.sh/node-group lands on a node labelled
#     volcano.sh/nodegroup-name with that group; an impossible group is explained; by queue
#     affinity (the Queue's spec.affinity, no annotation): required keeps a queue's pods in the
#     group, preferred draws them there, required anti-affinity keeps them out, and a required
#     group with no node is explained.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

CM_BIN=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}/controllers/vc-controller-manager
CM_NAME="vc-controller-manager-e2e-$E2E_NAME"
CM_PID=""
[[ -x $CM_BIN ]] || { fail "vc-controller-manager not built: $CM_BIN"; exit 1; }

apply_crds
kubectl wait --for=condition=Established --timeout=60s crd/hypernodes.topology.volcano.sh >/dev/null
ns=$(new_namespace sched-topology)
tag=t$RANDOM
pool=topo-$tag
SWITCHES=8 PER_SWITCH=8

topo_cleanup() {
  local rc=$?
  if [[ -n $CM_PID ]]; then
    kill -TERM "$CM_PID" 2>/dev/null || true
    wait "$CM_PID" 2>/dev/null || true
    rm -f "$CLUSTER_DIR/pids/$CM_NAME.pid" "$CLUSTER_DIR/pids/$CM_NAME.cmd"
  fi
  local h
  for h in $(kubectl get hypernodes -o name 2>/dev/null | grep -- "/$tag-" || true); do
    kubectl delete "$h" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  done
  (exit "$rc")
  sched_cleanup
}
trap topo_cleanup EXIT

# topo_node NAME SWITCH SPINE
topo_node() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1, basalt.dev/pool: $pool,
           basalt.dev/e2e-switch: $2, basalt.dev/e2e-spine: $3}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
YAML
  CLUSTER_OBJECTS+=("node/$1")
}
for ((s = 0; s < SWITCHES; s++)); do
  for ((i = 0; i < PER_SWITCH; i++)); do
    topo_node "$tag-sw$s-n$i" "$tag-sw$s" "$tag-sp$((s / 4))"
  done
done

# ---- discovery -----------------------------------------------------------------------------
discovery=$(mktemp)
cat >"$discovery" <<YAML
networkTopologyDiscovery:
- source: label
  enabled: true
  interval: 10m
  config:
    networkTopologyTypes:
      e2e:
        nodeSelector:
          matchLabels: {basalt.dev/pool: $pool}
        levels:
        - {nodeLabel: basalt.dev/e2e-spine, tierName: spine}
        - {nodeLabel: basalt.dev/e2e-switch, tierName: switch}
        - {nodeLabel: kubernetes.io/hostname}
YAML
# A HyperNode a user made (no discovery source label): never changed or deleted.
kubectl apply -f - >/dev/null <<YAML
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: $tag-manual}
spec:
  tier: 3
  members:
  - {type: HyperNode, selector: {regexMatch: {pattern: "^$tag-sp"}}}
YAML
mkdir -p "$CLUSTER_DIR/pids" "$CLUSTER_DIR/logs"
cm_port=$(free_port)
"$CM_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false --controllers=hypernode \
  --hypernode-discovery-config="$discovery" --health-addr="127.0.0.1:$cm_port" \
  --metrics-addr="127.0.0.1:$(free_port)" -v=2 </dev/null >>"$CLUSTER_DIR/logs/$CM_NAME.log" 2>&1 &
CM_PID=$!
echo "$CM_PID" >"$CLUSTER_DIR/pids/$CM_NAME.pid"
echo "$CM_BIN" >"$CLUSTER_DIR/pids/$CM_NAME.cmd"
wait_for "vc-controller-manager (hypernode) ready" 30 curl -sf "http://127.0.0.1:$cm_port/readyz"

discovered() { kubectl get hypernodes -l volcano.sh/network-topology-source=label -o name | grep -c -- "/$tag-"; }
discovered_is() { [[ $(discovered) == "$1" ]]; }
wait_for "10 HyperNodes discovered (8 switches, 2 spines)" 30 discovered_is 10
hn() { kubectl get hypernode "$1" -o jsonpath="$2"; }
hn_is() { [[ $(hn "$1" "$2") == "$3" ]]; }
members_of() { hn "$1" '{.spec.members[*].selector.exactMatch.name}'; }
has_member() { [[ " $(members_of "$1") " == *" $2 "* ]]; }
expect_eq "switch tier" "$(hn "$tag-sw0" '{.spec.tier}')" "1"
expect_eq "switch tierName" "$(hn "$tag-sw0" '{.spec.tierName}')" "switch"
expect_eq "switch members" "$(hn "$tag-sw0" '{range .spec.members[*]}{.type}:{.selector.exactMatch.name} {end}')" \
  "$(for i in 0 1 2 3 4 5 6 7; do printf 'Node:%s ' "$tag-sw0-n$i"; done)"
expect_eq "spine tier" "$(hn "$tag-sp1" '{.spec.tier}')" "2"
expect_eq "spine members" "$(hn "$tag-sp1" '{range .spec.members[*]}{.selector.exactMatch.name} {end}')" \
  "$tag-sw4 $tag-sw5 $tag-sw6 $tag-sw7 "
wait_for "spine nodeCount 32" 15 hn_is "$tag-sp0" '{.status.nodeCount}' 32
cols=$(kubectl get hypernode "$tag-sw0" --no-headers)
expect_contains "kubectl get hn shows tier, tierName, nodeCount" "$(echo "$cols" | awk '{print $2, $3, $4}')" "1 switch 8"

topo_node "$tag-sw0-extra" "$tag-sw0" "$tag-sp0"
wait_for "a node joining switch 0 becomes a member" 15 has_member "$tag-sw0" "$tag-sw0-extra"
wait_for "and counts in the spine" 15 hn_is "$tag-sp0" '{.status.nodeCount}' 33
kubectl delete node "$tag-sw0-extra" >/dev/null
not_member() { ! has_member "$@"; }
wait_for "a node leaving switch 0 is no longer a member" 15 not_member "$tag-sw0" "$tag-sw0-extra"
# A switch that comes with its only node and goes with it: its HyperNode is created, then
# deleted; the reconcile that deletes it leaves the user's HyperNode (not in its wanted set) alone.
topo_node "$tag-sw9-n0" "$tag-sw9" "$tag-sp1"
hn_exists() { kubectl get hypernode "$1" -o name >/dev/null 2>&1; }
hn_gone() { ! hn_exists "$1"; }
wait_for "a new switch label: HyperNode $tag-sw9 discovered" 15 hn_exists "$tag-sw9"
kubectl delete node "$tag-sw9-n0" >/dev/null
wait_for "its last node gone: HyperNode $tag-sw9 deleted" 15 hn_gone "$tag-sw9"
wait_for "and the spine has 32 nodes again" 15 hn_is "$tag-sp1" '{.status.nodeCount}' 32
expect_eq "the user's HyperNode is left alone" "$(hn "$tag-manual" '{.spec.tier}')" "3"
expect_eq "and not labelled as discovered" "$(hn "$tag-manual" '{.metadata.labels.volcano\.sh/network-topology-source}')" ""

# ---- the scheduler -------------------------------------------------------------------------
conf=$(sched_conf "enqueue, allocate, backfill" network-topology-aware weight=10 nodegroup)
start_scheduler --scheduler-conf="$conf"

# topo_gang NAME PODS GPUS MODE TIER
topo_gang() {
  {
    cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec:
  minMember: $2
  queue: default
  networkTopology: {mode: $4, highestTierAllowed: $5}
YAML
    local i
    for ((i = 0; i < $2; i++)); do
      cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  annotations: {scheduling.k8s.io/group-name: $1}
  labels: {volcano.sh/job-name: $1}
spec:
  schedulerName: volcano
  nodeSelector: {basalt.dev/pool: $pool}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$3"}
      limits: {nvidia.com/gpu: "$3"}
YAML
    done
  } | kubectl -n "$ns" apply -f - >/dev/null
}
# switches_of NAME: the distinct switches the gang's pods are bound to.
switches_of() {
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    sed -n 's/.*-\(sw[0-9]*\)-n.*/\1/p' | sort -u | tr '\n' ' '
}
spines_of() {
  local s out=""
  for s in $(switches_of "$1"); do out+="sp$((${s#sw} / 4)) "; done
  echo "$out" | tr ' ' '\n' | sort -u | grep -c .
}
delete_gangs() {
  kubectl -n "$ns" delete pods --all --grace-period=0 --force --wait=true --timeout=60s >/dev/null 2>&1 || true
  kubectl -n "$ns" delete podgroups --all --wait=true --timeout=60s >/dev/null 2>&1 || true
}

# HyperNode binpack: a second half-switch gang goes into the switch the first one opened.
topo_gang hard0 8 1 hard 1
wait_for "a quarter-switch gang binds" 30 bound_is "$ns" 8 hard0
topo_gang hard1 8 1 hard 1
wait_for "a second one binds" 30 bound_is "$ns" 8 hard1
expect_eq "binpack: the second fills the first one's switch" "$(switches_of hard1)" "$(switches_of hard0)"
for ((j = 2; j < 20; j++)); do topo_gang "hard$j" 8 1 hard 1; done
wait_for "20 hard tier-1 gangs bound (160 pods)" 120 bound_is "$ns" 160
spread=""
for ((j = 0; j < 20; j++)); do
  n=$(switches_of "hard$j" | wc -w)
  ((n == 1)) || spread+="hard$j:$(switches_of "hard$j") "
done
expect_eq "every hard tier-1 gang inside one switch" "$spread" ""
# 160 of 256 GPUs: binpack fills 5 switches (4 gangs of 8 GPUs each) and keeps 3 switches free.
used=$(for ((j = 0; j < 20; j++)); do switches_of "hard$j"; done | tr ' ' '\n' | sort -u | grep -c .)
expect_eq "binpack: the 20 gangs fill 5 switches, 3 stay free" "$used" "5"
expect_no_oversubscription
delete_gangs

# 36 GPUs: more than any switch (32); a spine has 128.
topo_gang big 9 4 hard 1
explained() {
  [[ $(pg_condition_message "$ns" big Unschedulable) == *"hard tier 1: no HyperNode of tier ≤ 1 has 36 free nvidia.com/gpu; best"* ]]
}
wait_for "the too-big gang is explained" 30 explained
msg=$(pg_condition_message "$ns" big Unschedulable)
expect_contains "it names the best switch and what it has" "$msg" "; best $tag-sw0 has 32"
expect_eq "nothing of it bound" "$(bound_count "$ns" big)" "0"
events=$(kubectl -n "$ns" get events --field-selector involvedObject.name=big -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
expect_contains "a PodGroup event says so too" "$events" "hard tier 1: no HyperNode of tier ≤ 1"
kubectl -n "$ns" patch podgroup big --type=merge -p '{"spec":{"networkTopology":{"mode":"hard","highestTierAllowed":2}}}' >/dev/null
wait_for "allowed tier 2, it binds" 30 bound_is "$ns" 9 big
expect_eq "inside one spine" "$(spines_of big)" "1"
delete_gangs

topo_gang soft 9 4 soft 1
wait_for "the soft gang binds" 30 bound_is "$ns" 9 soft
expect_eq "soft: over as few switches as needed" "$(switches_of soft | wc -w)" "2"
delete_gangs

# ---- node groups ---------------------------------------------------------------------------
for ((i = 0; i < PER_SWITCH; i++)); do
  kubectl label node "$tag-sw7-n$i" "volcano.sh/nodegroup-name=$tag-g7" >/dev/null
done
# grouped_pod NAME GROUP [QUEUE]: a one-pod gang in QUEUE (default), annotated with node group
# GROUP unless it is empty.
grouped_pod() {
  local group=""
  [[ -n $2 ]] && group=", scheduling.volcano.sh/node-group: $2"
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec: {minMember: 1, queue: ${3:-default}}
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-0
  annotations: {scheduling.k8s.io/group-name: $1$group}
  labels: {volcano.sh/job-name: $1}
spec:
  schedulerName: volcano
  nodeSelector: {basalt.dev/pool: $pool}
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: "1", memory: 1Gi}}}
YAML
}
grouped_pod ingroup "$tag-g7"
grouped_pod nogroup "$tag-nope"
wait_for "the annotated pod binds" 30 bound_is "$ns" 1 ingroup
expect_eq "inside its node group (switch 7)" "$(switches_of ingroup)" "sw7 "
nogroup_explained() {
  [[ $(pg_condition_message "$ns" nogroup Unschedulable) == *"not in node group $tag-nope"* ]]
}
wait_for "an impossible node group is explained" 30 nogroup_explained
expect_eq "and not bound" "$(bound_count "$ns" nogroup)" "0"

# Queue <-> node group affinity (Volcano's Queue spec.affinity), no annotation on the pods.
# group_queue NAME FIELD RULE GROUP: a queue whose affinity FIELD (nodeGroupAffinity or
# nodeGroupAntiAffinity) lists GROUP under RULE (required or preferred).
group_queue() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  weight: 1
  affinity:
    $2:
      ${3}DuringSchedulingIgnoredDuringExecution: [$4]
YAML
  CLUSTER_OBJECTS+=("queue/$1")
}
group_queue "$tag-qreq" nodeGroupAffinity required "$tag-g7"
group_queue "$tag-qpref" nodeGroupAffinity preferred "$tag-g7"
group_queue "$tag-qanti" nodeGroupAntiAffinity required "$tag-g7"
group_queue "$tag-qnone" nodeGroupAffinity required "$tag-nope"
for ((i = 0; i < 3; i++)); do grouped_pod "qreq$i" "" "$tag-qreq"; done
grouped_pod qpref "" "$tag-qpref"
for ((i = 0; i < 3; i++)); do grouped_pod "qanti$i" "" "$tag-qanti"; done
grouped_pod qnone "" "$tag-qnone"
wait_for "the queues' 7 pods bind (8 in the namespace with ingroup)" 30 bound_is "$ns" 8
expect_eq "required queue affinity: its 3 pods inside the group (switch 7)" \
  "$(for i in 0 1 2; do switches_of "qreq$i"; done)" "sw7 sw7 sw7 "
expect_eq "preferred queue affinity: the group's node wins" "$(switches_of qpref)" "sw7 "
anti=$(for i in 0 1 2; do switches_of "qanti$i"; done)
expect_eq "required anti-affinity: none of its 3 pods in the group" "$(grep -c sw7 <<<"$anti" || true)" "0"
qnone_explained() {
  [[ $(pg_condition_message "$ns" qnone Unschedulable) == *"not in queue $tag-qnone's nodeGroupAffinity required groups [$tag-nope]"* ]]
}
wait_for "a queue whose required group has no node: explained" 30 qnone_explained
expect_eq "and not bound" "$(bound_count "$ns" qnone)" "0"
