# shellcheck shell=bash
# Shared by the preemption suites (preempt_test.sh, gangpreempt_test.sh): PodGroups and pods of
# a PriorityClass on the suite's node pool, and what a user reads of evictions. Uses the
# caller's $ns (namespace) and $pool (the basalt.dev/pool label of its nodes).

# pg NAME MIN QUEUE CLASS [ANNOTATIONS]
pg() {
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $1
  labels: {volcano.sh/job-name: $1}
  annotations: {${5:-}}
spec:
  minMember: $2
  queue: $3
  priorityClassName: $4
YAML
}
# pods GROUP COUNT CLASS [POD_ANNOTATIONS] [FINALIZER]
pods() {
  local i
  for ((i = 0; i < $2; i++)); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  annotations: {scheduling.k8s.io/group-name: $1${4:+, $4}}
  labels: {volcano.sh/job-name: $1}
  finalizers: [${5:-}]
spec:
  schedulerName: volcano
  priorityClassName: $3
  terminationGracePeriodSeconds: 0
  nodeSelector: {basalt.dev/pool: $pool}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
YAML
  done
}
apply() { kubectl -n "$ns" apply -f - >/dev/null; }
bound() { bound_with_prefix "$ns" "$1"; }
pods_left() { kubectl -n "$ns" get pods -o name | grep -c "^pod/$1" || true; }
evicted_events() {
  kubectl -n "$ns" get events --field-selector reason=Evicted \
    -o jsonpath='{range .items[*]}{.involvedObject.kind} {.involvedObject.name} {.message}{"\n"}{end}'
}

# preempt_pool_setup: the suite's two KWOK nodes of 4 GPUs in pool $pool, and the article's
# PriorityClasses online-critical (1000000) and offline-batch (100).
preempt_pool_setup() {
  add_fake_node "$pool-a" 4 "basalt.dev/pool=$pool"
  add_fake_node "$pool-b" 4 "basalt.dev/pool=$pool"
  kubectl apply -f "$(dirname "${BASH_SOURCE[0]}")/../../examples/priorityclasses.yaml" >/dev/null
}
