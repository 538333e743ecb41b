#!/usr/bin/env bash
# Proves the test cluster is real: fake nodes are Ready with GPUs, pods bound through
# pods/binding run and finish as annotated, ownerReference cascades and namespace deletion
# work (kube-controller-manager), and a node created later with kubectl becomes Ready.
source "$(dirname "$0")/../lib/testlib.sh"

# --- nodes -----------------------------------------------------------------------------------
nodes=$(kubectl get nodes -l basalt.dev/pool=gpu -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.status.allocatable.nvidia\.com/gpu}{" "}{.spec.taints}{"\n"}{end}')
expect_eq "number of gpu-pool nodes" "$(grep -c . <<<"$nodes")" "8"
expect_eq "gpu-pool nodes Ready with 8 nvidia.com/gpu and no taints" "$(grep -c ' True 8 $' <<<"$nodes")" "8"
expect_eq "GPU product label" "$(kubectl get node gpu-node-0 -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}')" "NVIDIA-A100-SXM4-80GB"
racks=$(kubectl get nodes -l basalt.dev/pool=gpu -o jsonpath='{.items[*].metadata.labels.topology\.basalt\.dev/rack}' | tr ' ' '\n' | sort -u | tr '\n' ' ')
expect_eq "racks" "$racks" "rack-0 rack-1 "
source "$BASALT_REPO_ROOT/e2e/cluster/versions.env"
expect_eq "kubectl version reports the real server version" "$(kubectl version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)" "$KUBERNETES_VERSION"

ns=$(new_namespace harness)

# --- binding -> Running ----------------------------------------------------------------------
pod() { # name annotations-yaml
  cat <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $ns
  annotations: {$2}
spec:
  schedulerName: nobody
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 100m, memory: 64Mi}
POD
}
bind() { # pod node
  kubectl create --raw "/api/v1/namespaces/$ns/pods/$1/binding" -f - >/dev/null <<B
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"$1"},"target":{"apiVersion":"v1","kind":"Node","name":"$2"}}
B
}
phase() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
is_phase() { [[ $(phase "$1") == "$2" ]]; }

pod runner '' | kubectl apply -f - >/dev/null
pod finisher '"basalt.dev/run-for": "2s"' | kubectl apply -f - >/dev/null
pod crasher '"basalt.dev/run-for": "1s", "basalt.dev/exit-code": "3"' | kubectl apply -f - >/dev/null
sleep 1
expect_eq "unbound pod stays Pending" "$(phase runner)" "Pending"
bind runner gpu-node-0
bind finisher gpu-node-1
bind crasher gpu-node-2
wait_for "bound pod reaches Running" 30 is_phase runner Running
expect_eq "running pod is Ready" "$(kubectl -n "$ns" get pod runner -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" "True"
expect_contains "running pod has an IP" "$(kubectl -n "$ns" get pod runner -o jsonpath='{.status.podIP}')" "."
expect_eq "binding set nodeName" "$(kubectl -n "$ns" get pod runner -o jsonpath='{.spec.nodeName}')" "gpu-node-0"
wait_for "run-for pod reaches Succeeded" 30 is_phase finisher Succeeded
expect_eq "succeeded pod exit code" "$(kubectl -n "$ns" get pod finisher -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" "0"
wait_for "exit-code 3 pod reaches Failed" 30 is_phase crasher Failed
expect_eq "failed pod exit code" "$(kubectl -n "$ns" get pod crasher -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" "3"
sleep 3
expect_eq "pod without run-for keeps running" "$(phase runner)" "Running"

started=$(kubectl -n "$ns" get pod finisher -o jsonpath='{.status.startTime}')
finished=$(kubectl -n "$ns" get pod finisher -o jsonpath='{.status.containerStatuses[0].state.terminated.finishedAt}')
ran=$(($(date -d "$finished" +%s) - $(date -d "$started" +%s)))
if ((ran >= 2 && ran <= 5)); then pass "run-for 2s pod ran ${ran}s"; else fail "run-for 2s pod ran ${ran}s (start $started, finish $finished)"; fi

# --- deletion ---------------------------------------------------------------------------------
kubectl -n "$ns" delete pod runner --wait=false >/dev/null
gone() { ! kubectl -n "$ns" get pod "$1" >/dev/null 2>&1; }
wait_for "deleted running pod disappears" 20 gone runner

# A container that ignores SIGTERM keeps its pod Terminating for the whole grace period.
pod stubborn '"basalt.dev/ignore-sigterm": "true"' | sed 's/terminationGracePeriodSeconds: 30/terminationGracePeriodSeconds: 4/' | kubectl apply -f - >/dev/null
bind stubborn gpu-node-4
wait_for "stubborn pod reaches Running" 30 is_phase stubborn Running
kubectl -n "$ns" delete pod stubborn --wait=false >/dev/null
sleep 2
if gone stubborn; then fail "pod ignoring SIGTERM vanished before its 4s grace period ended"; else pass "pod ignoring SIGTERM still Terminating 2s into its 4s grace period"; fi
wait_for "pod ignoring SIGTERM disappears when its grace period ends" 20 gone stubborn

# --- ownerReference cascade (garbage collector) ----------------------------------------------
kubectl -n "$ns" create configmap owner >/dev/null
owner_uid=$(kubectl -n "$ns" get configmap owner -o jsonpath='{.metadata.uid}')
kubectl apply -f - >/dev/null <<CM
apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  namespace: $ns
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: owner, uid: $owner_uid}
CM
kubectl -n "$ns" delete configmap owner >/dev/null
cm_gone() { ! kubectl -n "$ns" get configmap dependent >/dev/null 2>&1; }
wait_for "dependent is garbage-collected after its owner is deleted" 60 cm_gone

# --- namespace deletion -------------------------------------------------------------------------
tmpns=$(new_namespace harness-ns)
kubectl -n "$tmpns" create configmap x >/dev/null
pod_in() { pod "$1" '' | sed "s/namespace: $ns/namespace: $tmpns/"; }
pod_in victim | kubectl apply -f - >/dev/null
kubectl create --raw "/api/v1/namespaces/$tmpns/pods/victim/binding" -f - >/dev/null <<B
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"victim"},"target":{"apiVersion":"v1","kind":"Node","name":"gpu-node-3"}}
B
kubectl delete namespace "$tmpns" --wait=false >/dev/null
ns_gone() { ! kubectl get namespace "$tmpns" >/dev/null 2>&1; }
wait_for "namespace deletion completes (with a running pod inside)" 90 ns_gone

# --- a node created later with kubectl becomes Ready -----------------------------------------
late=late-node-$RANDOM
kubectl apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $late
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $late}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "20", nvidia.com/gpu: "2"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "20", nvidia.com/gpu: "2"}
NODE
node_ready() {
  [[ $(kubectl get node "$late" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}') == "True/" ]]
}
wait_for "late node becomes Ready and loses the not-ready taint" 60 node_ready
expect_eq "late node keeps its nvidia.com/gpu capacity" "$(kubectl get node "$late" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" "2"
kubectl delete node "$late" >/dev/null
