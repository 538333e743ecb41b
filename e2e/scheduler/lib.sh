# shellcheck shell=bash
# Helpers for the vc-scheduler e2e tests: start/stop the scheduler against the test cluster
# (pid file under $BASALT_TEST_CLUSTER_DIR/pids, so e2e/cluster/down.sh stops a leftover), and
# create Queues, PodGroups and pods with kubectl as a user would (no job controller involved).
# shellcheck source=../lib/testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/testlib.sh"

SCHED_BIN=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}/scheduler/vc-scheduler
CLUSTER_DIR=${BASALT_TEST_CLUSTER_DIR:-$(dirname "$KUBECONFIG")}
SCHED_NAME="vc-scheduler-e2e-$E2E_NAME"
SCHED_PID=""
SCHED_PORT=""
SCHED_LOG=""
CLUSTER_OBJECTS=() # cluster-scoped objects to delete at the end ("queue/x", "node/y")

if [[ ! -x $SCHED_BIN ]]; then
  fail "vc-scheduler not built: $SCHED_BIN (ninja vc-scheduler)"
  exit 1
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

apply_crds() {
  kubectl apply --server-side --force-conflicts -f "$BASALT_REPO_ROOT/crds" >/dev/null
  # Retried: right after a create, kubectl wait can fail on a CRD with no status yet
  # (".status.conditions accessor error: <nil>") instead of waiting.
  for _ in $(seq 1 30); do
    kubectl wait --for=condition=Established --timeout=60s \
      crd/queues.scheduling.volcano.sh crd/podgroups.scheduling.volcano.sh >/dev/null 2>&1 && break
    sleep 1
  done
}

# write_sched_conf FILE ACTIONS [ITEM...]: writes a scheduler configuration to FILE (whole, by a
# rename, so that a running scheduler's reload never reads half a file) from a short spec:
#   ACTIONS       the actions string, e.g. "enqueue, allocate, backfill, gangpreempt";
#   NAME          a plugin, in the current tier (the first tier is opened by itself);
#   --            opens the next tier;
#   KEY=VALUE     an argument of the plugin (or action configuration) just named;
#   +KEY=VALUE    a field of the plugin itself (e.g. +enablePreemptable=false);
#   @ACTION       a `configurations:` entry for ACTION; the KEY=VALUEs after it are its arguments
#                 (plugins named after it go on in the current tier).
# Values are written as they are (YAML reads them). $SCHED_DEFAULT_TIERS holds Volcano's default
# two tiers as items, e.g.
#   write_sched_conf "$conf" "enqueue, allocate, backfill, gangpreempt" @gangpreempt maxDomains=8 \
#     $SCHED_DEFAULT_TIERS network-topology-aware weight=10
SCHED_DEFAULT_TIERS="priority gang conformance -- overcommit drf predicates proportion nodeorder"
write_sched_conf() {
  local file=$1 actions=$2 item in="" args=0 confs="" tiers="- plugins:"$'\n'
  shift 2
  for item in "$@"; do
    case $item in
      --)
        tiers+="- plugins:"$'\n'
        in=""
        ;;
      @*)
        confs+="- name: ${item#@}"$'\n'
        in=conf args=0
        ;;
      +*=*)
        [[ $in == plugin ]] || { echo "write_sched_conf: $item names no plugin" >&2; return 1; }
        item=${item#+}
        tiers+="    ${item%%=*}: ${item#*=}"$'\n'
        ;;
      *=*)
        if [[ $in == conf ]]; then
          ((args++)) || confs+="  arguments:"$'\n'
          confs+="    ${item%%=*}: ${item#*=}"$'\n'
        elif [[ $in == plugin ]]; then
          ((args++)) || tiers+="    arguments:"$'\n'
          tiers+="      ${item%%=*}: ${item#*=}"$'\n'
        else
          echo "write_sched_conf: $item names no plugin or action" >&2
          return 1
        fi
        ;;
      *)
        tiers+="  - name: $item"$'\n'
        in=plugin args=0
        ;;
    esac
  done
  {
    printf 'actions: "%s"\n' "$actions"
    [[ -n $confs ]] && printf 'configurations:\n%s' "$confs"
    printf 'tiers:\n%s' "$tiers"
  } >"$file.tmp.$$" && mv -f "$file.tmp.$$" "$file"
}

# sched_conf ACTIONS [ITEM...]: a configuration with Volcano's default two tiers (ITEMs, as for
# write_sched_conf, appended to the second) in a new temp file; prints the file's path.
sched_conf() {
  local f
  f=$(mktemp)
  # shellcheck disable=SC2086 # the default tiers are words
  write_sched_conf "$f" "$1" $SCHED_DEFAULT_TIERS "${@:2}" || return 1
  echo "$f"
}

# start_scheduler [flags...]: starts vc-scheduler and waits until /readyz passes.
start_scheduler() {
  mkdir -p "$CLUSTER_DIR/pids" "$CLUSTER_DIR/logs"
  SCHED_PORT=$(free_port)
  SCHED_LOG="$CLUSTER_DIR/logs/$SCHED_NAME.log"
  "$SCHED_BIN" --kubeconfig="$KUBECONFIG" --leader-elect=false \
    --metrics-addr="127.0.0.1:$SCHED_PORT" --health-addr="127.0.0.1:$SCHED_PORT" -v=2 "$@" \
    </dev/null >>"$SCHED_LOG" 2>&1 &
  SCHED_PID=$!
  echo "$SCHED_PID" >"$CLUSTER_DIR/pids/$SCHED_NAME.pid"
  echo "$SCHED_BIN" >"$CLUSTER_DIR/pids/$SCHED_NAME.cmd"
  wait_for "vc-scheduler ready (/readyz)" 30 curl -sf "http://127.0.0.1:$SCHED_PORT/readyz"
}

# stop_scheduler: SIGTERM, expects a clean exit.
stop_scheduler() {
  [[ -n $SCHED_PID ]] || return 0
  kill -TERM "$SCHED_PID" 2>/dev/null || true
  local rc=0
  wait "$SCHED_PID" || rc=$?
  SCHED_PID=""
  rm -f "$CLUSTER_DIR/pids/$SCHED_NAME.pid" "$CLUSTER_DIR/pids/$SCHED_NAME.cmd"
  return "$rc"
}

sched_metric() { # name: value of an unlabelled metric
  curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'
}

sched_cleanup() {
  local rc=$?
  uncordon_all
  if [[ -n $SCHED_PID ]]; then
    kill -KILL "$SCHED_PID" 2>/dev/null || true
    wait "$SCHED_PID" 2>/dev/null || true
    rm -f "$CLUSTER_DIR/pids/$SCHED_NAME.pid" "$CLUSTER_DIR/pids/$SCHED_NAME.cmd"
  fi
  if ((E2E_FAILS > 0)) && [[ -n $SCHED_LOG && -f $SCHED_LOG ]]; then
    echo "---- last lines of $SCHED_LOG ----" >&2
    tail -n 40 "$SCHED_LOG" >&2
  fi
  local o ns
  for ns in $(kubectl get ns -l "basalt.dev/e2e-run=$E2E_RUN_ID" -o name 2>/dev/null); do
    kubectl -n "${ns#namespace/}" delete pods --all --grace-period=0 --force --wait=true \
      --timeout=30s >/dev/null 2>&1 || true
  done
  for o in "${CLUSTER_OBJECTS[@]}"; do
    kubectl delete "$o" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  done
  (exit "$rc")
  e2e_finish
}
trap sched_cleanup EXIT

# make_queue NAME WEIGHT [GPU_CAPABILITY] [CPU_CAPABILITY]
make_queue() {
  local cap="" dims=()
  [[ -n ${3:-} ]] && dims+=("nvidia.com/gpu: \"$3\"")
  [[ -n ${4:-} ]] && dims+=("cpu: $4")
  if ((${#dims[@]} > 0)); then
    cap="  capability: {$(IFS=,; echo "${dims[*]}")}"
  fi
  kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $1}
spec:
  weight: $2
  reclaimable: true
$cap
YAML
  CLUSTER_OBJECTS+=("queue/$1")
}

# owner_uid NS NAME: the UID of a ConfigMap standing in for the job that owns a gang (a real
# object, so the garbage collector keeps its dependents), created on first use.
owner_uid() {
  kubectl -n "$1" get configmap "$2-owner" -o jsonpath='{.metadata.uid}' 2>/dev/null && return 0
  kubectl -n "$1" create configmap "$2-owner" >/dev/null
  kubectl -n "$1" get configmap "$2-owner" -o jsonpath='{.metadata.uid}'
}

owner_refs_yaml() { # NAME UID (nothing when UID is empty)
  [[ -n $2 ]] || return 0
  printf '  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: %s-owner, uid: "%s", controller: true}\n' "$1" "$2"
}

# podgroup_yaml NAME MIN_MEMBER QUEUE [OWNER_UID] [MIN_RESOURCES]: a PodGroup as the job
# controller creates it: the volcano.sh/job-name label, with an owner a controller
# ownerReference, and minResources (a flow mapping body such as `cpu: "4", nvidia.com/gpu: "4"`).
podgroup_yaml() {
  cat <<YAML
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $1
  labels: {volcano.sh/job-name: $1}
$(owner_refs_yaml "$1" "${4:-}")
spec:
  minMember: $2
  queue: $3
$([[ -n ${5:-} ]] && printf '  minResources: {%s}\n' "$5")
YAML
}

# pod_yaml NAME GROUP GPUS [RUN_FOR] [NODE_SELECTOR k=v] [OWNER_UID] [NODE_NAME] [SCHEDULER]
# Optional from the environment: POD_LABELS (more labels, a flow mapping body such as
# `a: b, c: "1"`), POD_CLASS (priorityClassName), POD_GRACE (terminationGracePeriodSeconds).
pod_yaml() {
  local name=$1 group=$2 gpus=$3 run_for=${4:-} selector=${5:-} uid=${6:-} node=${7:-}
  local scheduler=${8:-volcano}
  local ann="scheduling.k8s.io/group-name: $group"
  [[ -z $group ]] && ann=""
  [[ -n $run_for ]] && ann="${ann:+$ann, }basalt.dev/run-for: $run_for"
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  annotations: {$ann}
  labels: {volcano.sh/job-name: "$group"${POD_LABELS:+, $POD_LABELS}}
$(owner_refs_yaml "$group" "$uid")
spec:
  schedulerName: $scheduler
$([[ -n ${POD_CLASS:-} ]] && printf '  priorityClassName: %s\n' "$POD_CLASS")
$([[ -n ${POD_GRACE:-} ]] && printf '  terminationGracePeriodSeconds: %s\n' "$POD_GRACE")
$([[ -n $selector ]] && printf '  nodeSelector: {%s: "%s"}\n' "${selector%%=*}" "${selector#*=}")
$([[ -n $node ]] && printf '  nodeName: %s\n' "$node")
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "$gpus"}
      limits: {nvidia.com/gpu: "$gpus"}
YAML
}

# gang_yaml NS NAME PODS GPUS_PER_POD QUEUE [RUN_FOR] [SELECTOR] [OWNER_UID]
gang_yaml() {
  local ns=$1 name=$2 n=$3 gpus=$4 queue=$5 run_for=${6:-} selector=${7:-} uid=${8:-} i
  podgroup_yaml "$name" "$n" "$queue" "$uid" \
    "cpu: \"$n\", memory: ${n}Gi, nvidia.com/gpu: \"$((n * gpus))\""
  for ((i = 0; i < n; i++)); do pod_yaml "$name-$i" "$name" "$gpus" "$run_for" "$selector" "$uid"; done
}

# make_gang NS NAME PODS GPUS_PER_POD QUEUE [RUN_FOR] [SELECTOR]: a gang owned by its own owner.
make_gang() {
  local uid
  uid=$(owner_uid "$1" "$2")
  gang_yaml "$1" "$2" "$3" "$4" "$5" "${6:-}" "${7:-}" "$uid" | kubectl -n "$1" apply -f - >/dev/null
}

bound_count() { # NS [GROUP]: pods with a node
  local sel=""
  [[ -n ${2:-} ]] && sel="-l volcano.sh/job-name=$2"
  # shellcheck disable=SC2086
  kubectl -n "$1" get pods $sel -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    grep -c . || true
}
bound_is() { [[ $(bound_count "$1" "${3:-}") == "$2" ]]; }
pg_phase() { kubectl -n "$1" get podgroup "$2" -o jsonpath='{.status.phase}'; }
pg_phase_is() { [[ $(pg_phase "$1" "$2") == "$3" ]]; }
pg_condition_message() { # NS NAME TYPE
  kubectl -n "$1" get podgroup "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].message}"
}

# add_fake_node NAME GPUS [LABEL k=v]: a KWOK node (32 cpu, 256Gi, GPUS nvidia.com/gpu),
# deleted at the end of the test.
add_fake_node() {
  local label=""
  [[ -n ${3:-} ]] && label=", ${3%%=*}: \"${3#*=}\""
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1$label}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "$2", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "$2", pods: "110"}
YAML
  CLUSTER_OBJECTS+=("node/$1")
}

# The GPUs requested by non-terminated pods per node, "node gpus" lines.
gpus_per_node() {
  kubectl get pods -A -o json | python3 -c '
import json, sys
used = {}
for p in json.load(sys.stdin)["items"]:
    node = p["spec"].get("nodeName")
    if not node or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        continue
    g = 0
    for c in p["spec"]["containers"]:
        g += int(c.get("resources", {}).get("requests", {}).get("nvidia.com/gpu", 0))
    used[node] = used.get(node, 0) + g
for n, g in sorted(used.items()):
    print(n, g)
'
}

# expect_no_oversubscription: no node has more GPUs requested than its allocatable.
expect_no_oversubscription() {
  local over
  over=$(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.status.allocatable.nvidia\.com/gpu}{"\n"}{end}' |
    awk 'NR==FNR {alloc[$1]=$2; next} ($1 in alloc) && $2 > alloc[$1] {print $1 ": " $2 " > " alloc[$1]}' - <(gpus_per_node))
  if [[ -z $over ]]; then pass "no node has more GPUs requested than allocatable"; else fail "oversubscribed: $over"; fi
}

CORDONED=()
KEPT_NODES=() # set by cordon_all_but
# cordon_all_but N: cordons every node except the first N (by name); uncordoned at the end.
cordon_all_but() {
  local n
  mapfile -t all < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
  KEPT_NODES=("${all[@]:0:$1}")
  for n in "${all[@]:$1}"; do
    kubectl cordon "$n" >/dev/null
    CORDONED+=("$n")
  done
}
uncordon_all() {
  local n
  for n in "${CORDONED[@]}"; do kubectl uncordon "$n" >/dev/null 2>&1 || true; done
  CORDONED=()
KEPT_NODES=() # set by cordon_all_but
}

# bound_with_prefix NS PREFIX: bound pods whose name starts with PREFIX.
bound_with_prefix() {
  kubectl -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
    awk -v p="$2" 'index($1, p) == 1 && NF == 2' | wc -l
}

# delete_hypernodes_of TAG: deletes (without waiting) the HyperNodes a suite named "TAG-...".
delete_hypernodes_of() {
  local h
  for h in $(kubectl get hypernodes -o name 2>/dev/null | grep -- "/$1-"); do
    kubectl delete "$h" --ignore-not-found --wait=false >/dev/null 2>&1
  done
}
