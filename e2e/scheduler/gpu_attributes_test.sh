#!/usr/bin/env bash
# Heterogeneous GPUs (gpuattributes, a Basalt extension), as a user sees them, on three KWOK
# pools labelled as NVIDIA GPU feature discovery labels real ones: A10 (23028 MiB), A30
# (24576 MiB) and A100 (81920 MiB), 2 nodes x 4 GPUs each. The scheduler runs with its
# default configuration (gpuattributes is on by default):
#   - 16 pods annotated gpu.basalt.dev/min-memory: 16Gi fill the A10 and A30 nodes and leave
#     the A100s alone; 2 more, with A10 and A30 full, go to A100;
#   - a gang of 4 pods needing 40Gi lands only on A100 nodes;
#   - a pod needing 100Gi stays Pending and its PodGroup (and the pod's event) names the
#     attribute for each of the 6 nodes;
#   - a pod with a plain nodeSelector on nvidia.com/gpu.product lands on that product;
#   - with the webhook running, a Pod and a vcjob whose task template carries a malformed
#     gpu.basalt.dev/ annotation are refused naming the field; a valid vcjob is admitted.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=../webhook/lib.sh
source "$BASALT_REPO_ROOT/e2e/webhook/lib.sh"

apply_crds
ns=$(new_namespace sched-gpuattr)
tag=g$RANDOM
pool=gpuattr-$tag

gpu_cleanup() {
  local rc=$?
  webhook_stop
  set +e # so that the next line only hands rc on to sched_cleanup
  (exit "$rc")
  sched_cleanup
}
trap gpu_cleanup EXIT

# gpu_node NAME PRODUCT MEMORY_MIB FAMILY
gpu_node() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1, basalt.dev/pool: $pool,
           nvidia.com/gpu.product: $2, nvidia.com/gpu.memory: "$3", nvidia.com/gpu.family: $4,
           nvidia.com/gpu.count: "4"}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "4", pods: "110"}
YAML
  CLUSTER_OBJECTS+=("node/$1")
}
for i in 0 1; do
  gpu_node "$tag-a10-$i" NVIDIA-A10 23028 ampere
  gpu_node "$tag-a30-$i" NVIDIA-A30 24576 ampere
  gpu_node "$tag-a100-$i" NVIDIA-A100-SXM4-80GB 81920 ampere
done

start_scheduler

# gpu_gang NAME PODS ANNOTATIONS [NODE_SELECTOR_EXTRA]: a PodGroup of PODS single-GPU pods
# (minMember PODS) with extra pod annotations (a flow-mapping body) and nodeSelector entries.
gpu_gang() {
  {
    cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec: {minMember: $2, queue: default}
YAML
    local i
    for ((i = 0; i < $2; i++)); do
      cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  annotations: {scheduling.k8s.io/group-name: $1${3:+, $3}}
  labels: {volcano.sh/job-name: $1}
spec:
  schedulerName: volcano
  nodeSelector: {basalt.dev/pool: $pool${4:+, $4}}
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
YAML
    done
  } | kubectl -n "$ns" apply -f - >/dev/null
}
# pools_of NAME: "<pool>=<pods>" for the gang's bound pods, e.g. "a10=8 a30=8".
pools_of() {
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    sed -n "s/^$tag-\([a-z0-9]*\)-[0-9]*$/\1/p" | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}'
}

# ---- the smallest sufficient GPU first -----------------------------------------------------
gpu_gang mid 16 'gpu.basalt.dev/min-memory: 16Gi'
wait_for "16 pods needing 16Gi bound" 60 bound_is "$ns" 16 mid
expect_eq "16Gi pods fill A10 and A30, no A100" "$(pools_of mid)" "a10=8 a30=8 "
gpu_gang more 2 'gpu.basalt.dev/min-memory: 16Gi'
wait_for "2 more 16Gi pods bound" 60 bound_is "$ns" 2 more
expect_eq "with A10 and A30 full they take A100" "$(pools_of more)" "a100=2 "

gpu_gang big 4 'gpu.basalt.dev/min-memory: 40Gi'
wait_for "a gang of 4 pods needing 40Gi bound" 60 bound_is "$ns" 4 big
expect_eq "40Gi pods only on A100" "$(pools_of big)" "a100=4 "

# ---- plain nodeSelector keeps working --------------------------------------------------------
gpu_gang plain 1 '' 'nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB'
wait_for "a pod with a plain nodeSelector on the product bound" 60 bound_is "$ns" 1 plain
expect_eq "it is on an A100" "$(pools_of plain)" "a100=1 "

# ---- an impossible requirement is explained -------------------------------------------------
# The 16Gi pods go first, so that every node has a free GPU and refuses only for the attribute.
kubectl -n "$ns" delete pods -l volcano.sh/job-name=mid --grace-period=0 --force >/dev/null 2>&1
wait_for "the 16Gi pods are gone" 30 bound_is "$ns" 0 mid
gpu_gang huge 1 'gpu.basalt.dev/min-memory: 100Gi'
huge_explained() {
  [[ $(pg_condition_message "$ns" huge Unschedulable) == *"node(s) with less GPU memory (nvidia.com/gpu.memory) than gpu.basalt.dev/min-memory: 100Gi"* ]]
}
wait_for "a 100Gi pod's PodGroup names the attribute" 30 huge_explained
e2e_log "huge: $(pg_condition_message "$ns" huge Unschedulable)"
expect_eq "and it is not bound" "$(bound_count "$ns" huge)" "0"
expect_contains "its pod's event says it too" \
  "$(kubectl -n "$ns" get events --field-selector involvedObject.name=huge-0,reason=FailedScheduling -o jsonpath='{.items[*].message}')" \
  "gpu.basalt.dev/min-memory: 100Gi"
expect_no_oversubscription

# ---- admission ----------------------------------------------------------------------------
# expect_refused WHAT NEEDLE YAML [kubectl args...]: `kubectl apply` fails with NEEDLE.
expect_refused() {
  local what=$1 needle=$2 yaml=$3 out
  shift 3
  if out=$(kubectl apply "$@" -f - 2>&1 <<<"$yaml"); then
    fail "$what: expected a refusal, but kubectl apply succeeded: $out"
  elif [[ $out == *"$needle"* ]]; then
    pass "$what refused: ...${needle}..."
  else
    fail "$what: refusal should contain '$needle', got: $out"
  fi
}
webhook_start
expect_refused "a Pod with a bare-number min-memory" \
  'metadata.annotations[gpu.basalt.dev/min-memory]: invalid value "16": a GPU memory size needs a unit' "
apiVersion: v1
kind: Pod
metadata:
  name: bad-pod
  annotations: {gpu.basalt.dev/min-memory: \"16\"}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox}]" -n "$ns"
vcjob() { # NAME ANNOTATIONS
  cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  schedulerName: volcano
  tasks:
  - name: infer
    replicas: 1
    template:
      metadata:
        annotations: {$2}
      spec:
        nodeSelector: {basalt.dev/pool: $pool}
        containers: [{name: c, image: busybox}]
YAML
}
expect_refused "a vcjob whose task misspells an attribute" \
  'spec.tasks[0].template.metadata.annotations[gpu.basalt.dev/product]: unknown annotation' \
  "$(vcjob bad-job 'gpu.basalt.dev/product: NVIDIA-A10')" -n "$ns"
expect_refused "a vcjob whose task has an empty product" \
  'spec.tasks[0].template.metadata.annotations[gpu.basalt.dev/products]: invalid value "NVIDIA-A10,": an empty item' \
  "$(vcjob bad-job2 'gpu.basalt.dev/products: "NVIDIA-A10,"')" -n "$ns"
if out=$(vcjob good-job 'gpu.basalt.dev/products: NVIDIA-A10,NVIDIA-A30, gpu.basalt.dev/min-memory: 20Gi' |
  kubectl -n "$ns" apply -f - 2>&1); then
  pass "a vcjob with valid GPU attributes is admitted"
else
  fail "a valid vcjob was refused: $out"
fi
kubectl -n "$ns" delete job.batch.volcano.sh good-job --ignore-not-found --wait=false >/dev/null 2>&1 || true
