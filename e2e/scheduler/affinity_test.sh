#!/usr/bin/env bash
# Pod affinity, pod anti-affinity and host ports as a user sees them with kubectl (vc-scheduler
# started by the test, PodGroups and pods created directly), on 4 schedulable nodes (the others
# cordoned; the kept nodes sit in two racks, topology.basalt.dev/rack):
#   - a 4-pod gang with required anti-affinity on kubernetes.io/hostname binds on 4 distinct
#     nodes in one go; a 5-pod gang with the same rule cannot fit, binds nothing, and its
#     PodGroup condition says the nodes "didn't match pod anti-affinity rules";
#   - a pod with required affinity to a labelled pod (hostname) lands on that pod's node; one
#     with affinity to it by rack and anti-affinity by hostname lands in its rack, elsewhere;
#     one with affinity to a label no pod carries stays Pending ("didn't match pod affinity
#     rules");
#   - with hostPort 9100/TCP taken on every schedulable node (pods bound by someone else), a
#     pod asking for 9100/TCP stays Pending with a FailedScheduling event and a PodGroup
#     condition about free ports, while one asking for 9100/UDP binds.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-affinity)
cordon_all_but 4
e2e_log "schedulable nodes: ${KEPT_NODES[*]}"
start_scheduler

# group_pod_yaml NAME LABEL_APP SPEC_EXTRA: a PodGroup of one plus its pod (1 cpu), with extra
# lines appended to the pod spec (indented two spaces).
group_pod_yaml() {
  podgroup_yaml "$1" 1 default
  gang_pod_yaml "$1" "$1" "$2" "$3"
}

# gang_pod_yaml NAME GROUP LABEL_APP SPEC_EXTRA
gang_pod_yaml() {
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {scheduling.k8s.io/group-name: $2}
  labels: {volcano.sh/job-name: "$2", app: "$3"}
spec:
  schedulerName: volcano
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi}
$4
YAML
}

anti_affinity_yaml() { # APP TOPOLOGY_KEY
  cat <<YAML
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: $1}}
        topologyKey: $2
YAML
}

node_of() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
rack_of() { kubectl get node "$1" -o jsonpath='{.metadata.labels.topology\.basalt\.dev/rack}'; }
is_bound() { [[ -n $(node_of "$1") ]]; }

# 1. A gang of 4 that must spread over hosts: one pod per node.
{
  podgroup_yaml spread 4 default
  for i in 0 1 2 3; do
    gang_pod_yaml "spread-$i" spread spread "$(anti_affinity_yaml spread kubernetes.io/hostname)"
  done
} | kubectl -n "$ns" apply -f - >/dev/null
wait_for "all 4 pods of the anti-affinity gang bound" 30 bound_is "$ns" 4 spread
distinct=$(kubectl -n "$ns" get pods -l volcano.sh/job-name=spread \
  -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)
expect_eq "distinct nodes of the anti-affinity gang" "$distinct" "4"

# A gang of 5 with the same rule cannot fit on 4 schedulable nodes: nothing binds.
{
  podgroup_yaml wide 5 default
  for i in 0 1 2 3 4; do
    gang_pod_yaml "wide-$i" wide wide "$(anti_affinity_yaml wide kubernetes.io/hostname)"
  done
} | kubectl -n "$ns" apply -f - >/dev/null
wait_for "PodGroup wide has an Unschedulable condition naming anti-affinity" 30 \
  bash -c "kubectl -n $ns get podgroup wide -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'anti-affinity'"
expect_eq "pods of the 5-pod anti-affinity gang bound" "$(bound_count "$ns" wide)" "0"
expect_contains "Unschedulable condition of wide" "$(pg_condition_message "$ns" wide Unschedulable)" \
  "4 node(s) didn't match pod anti-affinity rules"
kubectl -n "$ns" delete pods -l volcano.sh/job-name=wide --grace-period=0 --force >/dev/null 2>&1
kubectl -n "$ns" delete podgroup wide >/dev/null

# 2. Affinity to a labelled pod.
group_pod_yaml db db "" | kubectl -n "$ns" apply -f - >/dev/null
wait_for "db bound" 30 is_bound db
db_node=$(node_of db)
db_rack=$(rack_of "$db_node")
e2e_log "db runs on $db_node ($db_rack)"
{
  group_pod_yaml web web "  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchExpressions: [{key: app, operator: In, values: [db]}]}
        topologyKey: kubernetes.io/hostname"
  group_pod_yaml cache cache "  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: topology.basalt.dev/rack
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: db}}
        topologyKey: kubernetes.io/hostname"
  group_pod_yaml lonely lonely "  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: nobody}}
        topologyKey: kubernetes.io/hostname"
} | kubectl -n "$ns" apply -f - >/dev/null
wait_for "web bound" 30 is_bound web
wait_for "cache bound" 30 is_bound cache
expect_eq "node of web (affinity to db by hostname)" "$(node_of web)" "$db_node"
cache_node=$(node_of cache)
expect_eq "rack of cache (affinity to db by rack)" "$(rack_of "$cache_node")" "$db_rack"
if [[ $cache_node != "$db_node" ]]; then
  pass "cache avoids db's node ($cache_node)"
else
  fail "cache landed on db's node $db_node despite anti-affinity"
fi
wait_for "PodGroup lonely has an Unschedulable condition naming pod affinity" 30 \
  bash -c "kubectl -n $ns get podgroup lonely -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q \"didn't match pod affinity rules\""
expect_eq "node of lonely" "$(node_of lonely)" ""

# 3. Host ports: 9100/TCP taken on every schedulable node by pods bound by someone else.
for n in "${KEPT_NODES[@]}"; do
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: "exporter-$n"}
spec:
  schedulerName: default-scheduler
  nodeName: $n
  containers:
  - name: main
    image: busybox
    ports: [{containerPort: 9100, hostPort: 9100}]
YAML
done | kubectl -n "$ns" apply -f - >/dev/null
sleep 1
{
  group_pod_yaml tcp-9100 tcp-9100 "" | sed 's/^    resources:/    ports: [{containerPort: 9100, hostPort: 9100, protocol: TCP}]\n    resources:/'
  group_pod_yaml udp-9100 udp-9100 "" | sed 's/^    resources:/    ports: [{containerPort: 9100, hostPort: 9100, protocol: UDP}]\n    resources:/'
} | kubectl -n "$ns" apply -f - >/dev/null
wait_for "udp-9100 bound (a UDP port does not conflict with TCP)" 30 is_bound udp-9100
wait_for "PodGroup tcp-9100 has an Unschedulable condition naming free ports" 30 \
  bash -c "kubectl -n $ns get podgroup tcp-9100 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'free ports'"
expect_eq "node of tcp-9100" "$(node_of tcp-9100)" ""
expect_eq "phase of tcp-9100" "$(kubectl -n "$ns" get pod tcp-9100 -o jsonpath='{.status.phase}')" "Pending"
expect_contains "PodGroup condition of tcp-9100" "$(pg_condition_message "$ns" tcp-9100 Unschedulable)" \
  "4 node(s) didn't have free ports for the requested pod ports"
wait_for "FailedScheduling event of tcp-9100" 30 \
  bash -c "kubectl -n $ns describe pod tcp-9100 | grep -q FailedScheduling"
expect_contains "kubectl describe pod tcp-9100" "$(kubectl -n "$ns" describe pod tcp-9100)" \
  "didn't have free ports for the requested pod ports"

if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
