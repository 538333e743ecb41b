#!/usr/bin/env bash
# Chaos (issue 11): the whole suite as the chart deploys it, two replicas of each component
# with leader election, runs waves of mixed gang jobs in a queue with a GPU capability while
# random replicas are SIGKILLed and restarted, and the kube-apiserver is restarted once:
#   - plain gangs (1-8 pods) end Completed with one pod per task index, no retry;
#   - PodFailed -> RestartJob gangs (maxRetry 1, every pod exits 3) end Failed after exactly
#     one restart;
#   - exitCode 3 -> CompleteJob jobs (a worker exits 3, a server runs on) end Completed;
#   - at every sample (every ~2 s, from the API server's objects): no node holds more than its
#     allocatable cpu, GPUs or pods, no two live pods share a job's task index, the queue's
#     bound pods and its status.allocated stay within its capability;
#   - afterwards no PodGroup is left (a job's ends with it), the queue's allocated returns to 0,
#     deleting the jobs leaves no pod, and the queue can be deleted;
#   - no replica died except those killed or a leader that lost its Lease while the API server
#     was down (it exits by design; restarted as the kubelet would), and no 403 in any log
#     outside the API server's restart (its authorizer denies for a few seconds after it).
# It shares the test cluster with no other suite at the same time (RESOURCE_LOCK cluster, as
# every e2e test): the components reconcile every namespace and the kube-apiserver restart
# would disturb a neighbour.
#
# Parameters (environment; the defaults are the ~3 minute CI run, bench/soak/soak.sh sets more):
#   CHAOS_DURATION=90        seconds of submitting jobs and killing components
#   CHAOS_WAVE_EVERY=5       seconds between two waves of jobs
#   CHAOS_JOBS_PER_WAVE=2
#   CHAOS_KILL_EVERY=9       seconds between two kills (0: no chaos, the baseline)
#   CHAOS_APISERVER_RESTARTS=1
#   CHAOS_QUEUE_GPUS=40      the queue's nvidia.com/gpu capability
#   CHAOS_DRAIN_TIMEOUT=150  seconds for the last jobs to finish after the chaos stopped
#   CHAOS_SEED               seed of the job mix and of the victims (default: random, logged)
#   CHAOS_RESULTS=FILE       also writes the figures as key=value lines (for bench/soak)
source "$(dirname "$0")/../lib/testlib.sh"
# shellcheck source=../lib/suite.sh
source "$(dirname "$0")/../lib/suite.sh"

DURATION=${CHAOS_DURATION:-90}
WAVE_EVERY=${CHAOS_WAVE_EVERY:-5}
JOBS_PER_WAVE=${CHAOS_JOBS_PER_WAVE:-2}
KILL_EVERY=${CHAOS_KILL_EVERY:-9}
KAS_RESTARTS=${CHAOS_APISERVER_RESTARTS:-1}
QUEUE_GPUS=${CHAOS_QUEUE_GPUS:-40}
DRAIN_TIMEOUT=${CHAOS_DRAIN_TIMEOUT:-150}
SEED=${CHAOS_SEED:-$((RANDOM * 32768 + RANDOM))}
RESULTS=${CHAOS_RESULTS:-}
RANDOM=$SEED
# The job list, drawn from the seed before the chaos draws its victims: a run with the same
# seed and sizes submits the same jobs, with or without chaos (bench/soak compares the two).
declare -A KIND PODS RUNFOR
NJOBS=$(((DURATION + WAVE_EVERY - 1) / WAVE_EVERY * JOBS_PER_WAVE))
for ((i = 1; i <= NJOBS; i++)); do
  case $((RANDOM % 5)) in
    0 | 1 | 2) KIND[c-$i]=plain PODS[c-$i]=$((1 + RANDOM % 8)) ;;
    3) KIND[c-$i]=restart PODS[c-$i]=$((1 + RANDOM % 4)) ;;
    4) KIND[c-$i]=exitcode PODS[c-$i]=$((2 + RANDOM % 4)) ;;
  esac
  RUNFOR[c-$i]=$((3 + RANDOM % 6))
done
LE=(--leader-elect-lease-duration=8s --leader-elect-renew-deadline=6s --leader-elect-retry-period=1s)
t_start=$SECONDS

QUEUE="" SAMPLER_PID="" SUBMITTER_PID=""
chaos_cleanup() {
  local p
  for p in $SAMPLER_PID $SUBMITTER_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  # The API server may have been left down by a failure in the middle of its restart.
  kas_running || kas_start || true
  if [[ -n ${wns:-} ]]; then kubectl -n "$wns" delete vcjob --all --wait=false >/dev/null 2>&1 || true; fi
  # The webhook refuses the delete while the queue has jobs or PodGroups; the jobs are gone
  # by now on success (checked below), on failure the queue may stay behind.
  if [[ -n $QUEUE ]]; then kubectl delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true; fi
}
trap 'rc=$?; chaos_cleanup; suite_cleanup; (exit $rc); e2e_finish' EXIT

# ---- the kube-apiserver of the test cluster, restarted with its own command line ----------
KAS_PIDF=$BASALT_TEST_CLUSTER_DIR/pids/kube-apiserver.pid
KAS_CMD=() KAS_WINDOWS=()
kas_running() { [[ -f $KAS_PIDF ]] && kill -0 "$(cat "$KAS_PIDF")" 2>/dev/null; }
kas_start() {
  ((${#KAS_CMD[@]})) || return 1
  # As e2e/cluster/up.sh starts it: own session, its log, its pid file (down.sh stops it).
  setsid "${KAS_CMD[@]}" </dev/null >>"$BASALT_TEST_CLUSTER_DIR/logs/kube-apiserver.log" 2>&1 &
  echo $! >"$KAS_PIDF"
}
kas_ready() { kubectl get --raw /readyz >/dev/null 2>&1; }
restart_apiserver() {
  local pid i
  pid=$(cat "$KAS_PIDF")
  mapfile -d '' -t KAS_CMD <"/proc/$pid/cmdline"
  e2e_log "chaos: restarting kube-apiserver (pid $pid)"
  local from
  from=$(date +%T)
  kill -TERM "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  kas_start
  wait_for "kube-apiserver ready again after its restart" 90 kas_ready
  KAS_WINDOWS+=("$from" "$(date -d '+20 seconds' +%T)")
}

# ---- the suite: two replicas of each component --------------------------------------------
suite_init chaos
wns=$(new_namespace chaos-work)
declare -A WEBHOOK_PORT=([a]=$(suite_free_port) [b]=$(suite_free_port))
declare -A INCARNATION
start_replica() { # C ID: (re)starts a replica; its earlier log is kept as C-ID.N.log
  local key=$1-$2 n=${INCARNATION[$1-$2]:-0}
  if ((n > 0)); then mv "${SUITE_LOG[$key]}" "$SUITE_DIR/$key.$n.log"; fi
  INCARNATION[$key]=$((n + 1))
  case $1 in
    admission) suite_start admission "$2" --port="${WEBHOOK_PORT[$2]}" ;;
    *) suite_start "$1" "$2" "${LE[@]}" ;;
  esac
}
start_replica admission a
start_replica admission b
suite_wait_ready admission-a
suite_wait_ready admission-b
suite_proxy "${WEBHOOK_PORT[a]}" "${WEBHOOK_PORT[b]}"
for id in a b; do
  start_replica controllers "$id"
  start_replica scheduler "$id"
done
suite_register_webhooks "$SUITE_PROXY_PORT"

QUEUE=chaos-${wns##*-}
kubectl apply -f - >/dev/null <<Q
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: $QUEUE}
spec: {weight: 1, reclaimable: false, capability: {nvidia.com/gpu: "$QUEUE_GPUS"}}
Q
queue_open() { [[ $(kubectl get queue "$QUEUE" -o jsonpath='{.status.state}') == Open ]]; }
wait_for "queue $QUEUE Open" 30 queue_open

# ---- the invariants, sampled in the background from the API server's objects --------------
kubectl get nodes -o json >"$SUITE_DIR/nodes.json"
: >"$SUITE_DIR/violations"
: >"$SUITE_DIR/samples"
# One line per violation; "peak G" with the GPUs the queue's live pods hold.
cat >"$SUITE_DIR/invariants.jq" <<'JQ'
def milli: if . == null then 0 else tostring | if endswith("m") then rtrimstr("m") | tonumber
  elif endswith("k") then rtrimstr("k") | tonumber * 1000000 else tonumber * 1000 end end;
def count: if . == null then 0 else tostring | tonumber end;
def sumreq(f): [.spec.containers[] | .resources.requests // {} | f] | add // 0;
($nodes[0].items | map({key: .metadata.name, value: {
  cpu: (.status.allocatable.cpu | milli), gpu: (.status.allocatable["nvidia.com/gpu"] | count),
  pods: (.status.allocatable.pods | count)}}) | from_entries) as $alloc
| [.items[] | select((.spec.nodeName // "") != "" and .status.phase != "Succeeded" and .status.phase != "Failed")
   | {node: .spec.nodeName, mine: (.metadata.namespace == $wns), name: .metadata.name,
      cpu: sumreq(.cpu | milli), gpu: sumreq(.["nvidia.com/gpu"] | count),
      job: .metadata.labels["volcano.sh/job-name"], task: .metadata.labels["volcano.sh/task-spec"],
      idx: .metadata.labels["volcano.sh/task-index"]}] as $live
| ($live | group_by(.node)[] | . as $g | $alloc[$g[0].node] as $a | select($a != null)
   | {cpu: (map(.cpu) | add), gpu: (map(.gpu) | add), pods: length,
      mine: (map(select(.mine)) | length),
      others_over: ((map(select(.mine | not) | .gpu) | add // 0) > $a.gpu
        or (map(select(.mine | not) | .cpu) | add // 0) > $a.cpu)}
   # A node another suite left over-full (pods bound by hand) is not this suite's doing.
   | select(.mine > 0 and (.others_over | not) and (.cpu > $a.cpu or .gpu > $a.gpu or .pods > $a.pods))
   | "node \($g[0].node) over its allocatable: cpu \(.cpu)m/\($a.cpu)m, GPUs \(.gpu)/\($a.gpu), pods \(.pods)/\($a.pods)"),
  ($live | map(select(.mine)) | group_by([.job, .task, .idx])[] | select(length > 1)
   | "duplicate task index: job \(.[0].job) task \(.[0].task) index \(.[0].idx): \(map(.name) | join(" "))"),
  ($live | map(select(.mine) | .gpu) | add // 0 | if . > $cap then "queue over its capability: live pods hold \(.) GPUs > \($cap)" else "peak \(.)" end)
JQ
sampler() {
  local pods q
  while true; do
    # Bound, not finished: filtered by the API server (the jq filter checks again).
    if pods=$(kubectl get pods -A -o json --field-selector='spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed' 2>/dev/null) && q=$(kubectl get queue "$QUEUE" -o json 2>/dev/null); then
      jq -r --arg wns "$wns" --argjson cap "$QUEUE_GPUS" --slurpfile nodes "$SUITE_DIR/nodes.json" \
        -f "$SUITE_DIR/invariants.jq" <<<"$pods" |
        while IFS= read -r line; do
          if [[ $line == peak* ]]; then echo "${line#peak }" >>"$SUITE_DIR/samples"; else echo "$(date +%T) $line" >>"$SUITE_DIR/violations"; fi
        done
      jq -r --argjson cap "$QUEUE_GPUS" '(.status.allocated["nvidia.com/gpu"] // "0") | tonumber
        | select(. > $cap) | "queue status.allocated over its capability: \(.) GPUs > \($cap)"' <<<"$q" |
        sed "s/^/$(date +%T) /" >>"$SUITE_DIR/violations"
    fi
    sleep 2
  done
}
sampler &
SAMPLER_PID=$!

# ---- the jobs -------------------------------------------------------------------------------
# job_yaml NAME KIND PODS: plain | restart | exitcode (see the header).
job_yaml() {
  local name=$1 kind=$2 n=$3 res='{requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}'
  local head="apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $name, namespace: $wns}
spec:
  schedulerName: volcano
  queue: $QUEUE"
  case $kind in
    plain) cat <<JOB
$head
  minAvailable: $n
  tasks:
  - name: w
    replicas: $n
    template:
      metadata: {annotations: {basalt.dev/run-for: ${RUNFOR[$name]}s}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: $res}]}
JOB
      ;;
    restart) cat <<JOB
$head
  minAvailable: $n
  maxRetry: 1
  policies: [{event: PodFailed, action: RestartJob}]
  tasks:
  - name: w
    replicas: $n
    template:
      metadata: {annotations: {basalt.dev/run-for: 2s, basalt.dev/exit-code: "3"}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: $res}]}
JOB
      ;;
    exitcode) cat <<JOB
$head
  minAvailable: $n
  policies: [{exitCode: 3, action: CompleteJob}]
  tasks:
  - name: server
    replicas: 1
    template:
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: $res}]}
  - name: worker
    replicas: $((n - 1))
    template:
      metadata: {annotations: {basalt.dev/run-for: 3s, basalt.dev/exit-code: "3"}}
      spec: {restartPolicy: Never, containers: [{name: main, image: busybox, resources: $res}]}
JOB
      ;;
  esac
}
# submitter: a wave of jobs every WAVE_EVERY seconds, in the background so that the chaos
# below never delays it. A creation refused while a webhook replica or the API server is down
# is retried for up to 60 s, as a client would; each retry is a line in $SUITE_DIR/retried, a
# job given up on one in $SUITE_DIR/refused.
submitter() {
  local i out deadline next=$SECONDS
  for ((i = 1; i <= NJOBS; i++)); do
    if (((i - 1) % JOBS_PER_WAVE == 0)); then
      while ((SECONDS < next)); do sleep 0.2; done
      next=$((next + WAVE_EVERY))
    fi
    job_yaml "c-$i" "${KIND[c-$i]}" "${PODS[c-$i]}" >"$SUITE_DIR/job-$i.yaml"
    deadline=$((SECONDS + 60))
    until out=$(kubectl create -f "$SUITE_DIR/job-$i.yaml" 2>&1); do
      [[ $out == *AlreadyExists* ]] && break # an earlier try got through
      echo "c-$i: $out" >>"$SUITE_DIR/retried"
      if ((SECONDS >= deadline)); then echo "c-$i: $out" >>"$SUITE_DIR/refused"; break; fi
      sleep 1
    done
  done
}
: >"$SUITE_DIR/retried"
: >"$SUITE_DIR/refused"

# ---- chaos ----------------------------------------------------------------------------------
declare -A KILLS=([scheduler]=0 [controllers]=0 [admission]=0 [kube-apiserver]=0)
LEASE_EXITS=0
# all_alive: every replica still runs. A leader that could not renew its Lease in time (the
# API server was down) exits by design, as in Kubernetes, where the kubelet restarts it: that
# one is restarted and counted; any other death fails the test.
all_alive() {
  local key
  for key in "${!SUITE_PID[@]}"; do
    [[ $key == proxy ]] && continue
    if ! kill -0 "${SUITE_PID[$key]}" 2>/dev/null; then
      wait "${SUITE_PID[$key]}" 2>/dev/null || true
      if tail -n 3 "${SUITE_LOG[$key]}" | grep -aq 'lost the Lease'; then
        e2e_log "chaos: $key lost its Lease and exited (API server unreachable); restarting it"
        LEASE_EXITS=$((LEASE_EXITS + 1))
      else
        fail "replica $key died without being killed; last lines of its log:"
        tail -n 20 "${SUITE_LOG[$key]}" >&2
      fi
      unset "SUITE_PID[$key]"
      start_replica "${key%-*}" "${key##*-}"
    fi
  done
}
kill_one() {
  local cs=(scheduler controllers admission) ids=(a b) c id
  c=${cs[RANDOM % 3]} id=${ids[RANDOM % 2]}
  e2e_log "chaos: SIGKILL $c-$id"
  suite_kill "$c-$id"
  KILLS[$c]=$((KILLS[$c] + 1))
  sleep "$((1 + RANDOM % 3))"
  start_replica "$c" "$id"
}

e2e_log "chaos: ${DURATION}s, $JOBS_PER_WAVE jobs every ${WAVE_EVERY}s ($NJOBS), a kill every ${KILL_EVERY}s, $KAS_RESTARTS kube-apiserver restart(s), seed $SEED"
t_chaos=$SECONDS
submitter &
SUBMITTER_PID=$!
t_end=$((SECONDS + DURATION))
next_kill=$((SECONDS + KILL_EVERY))
kas_every=$((KAS_RESTARTS > 0 ? DURATION / (KAS_RESTARTS + 1) : 0))
next_kas=$((KAS_RESTARTS > 0 ? SECONDS + kas_every : -1))
while ((SECONDS < t_end)); do
  all_alive
  if ((next_kas > 0 && SECONDS >= next_kas)); then
    restart_apiserver
    KILLS[kube-apiserver]=$((KILLS[kube-apiserver] + 1))
    next_kas=$((KILLS[kube-apiserver] < KAS_RESTARTS ? next_kas + kas_every : -1))
  elif ((KILL_EVERY > 0 && SECONDS >= next_kill)); then
    kill_one
    next_kill=$((SECONDS + KILL_EVERY))
  fi
  sleep 0.5
done
wait "$SUBMITTER_PID" || true
SUBMITTER_PID=""
all_alive
RETRIED=$(wc -l <"$SUITE_DIR/retried")
expect_eq "jobs whose creation was refused for 60 s" "$(cat "$SUITE_DIR/refused")" ""
e2e_log "chaos over after $((SECONDS - t_chaos))s: $NJOBS jobs, kills: scheduler ${KILLS[scheduler]}, controllers ${KILLS[controllers]}, admission ${KILLS[admission]}, kube-apiserver ${KILLS[kube-apiserver]}; $LEASE_EXITS exits on a lost Lease; $RETRIED creations retried"

# ---- every job reaches its expected phase -------------------------------------------------------
jobs_json() { kubectl -n "$wns" get vcjob -o json; }
# The supervisor keeps running while the jobs drain: a leader that lost its Lease to the API
# server restart may exit after the chaos stopped, and its "kubelet" must restart it then too.
finished() {
  local n
  all_alive
  n=$(jobs_json | jq '[.items[] | select(.status.state.phase == "Completed" or .status.state.phase == "Failed" or .status.state.phase == "Aborted" or .status.state.phase == "Terminated")] | length')
  echo "$n" >"$SUITE_DIR/finished"
  ((n == NJOBS))
}
t_drain=$SECONDS
wait_for "all $NJOBS jobs finished" "$DRAIN_TIMEOUT" finished ||
  e2e_log "finished: $(cat "$SUITE_DIR/finished")/$NJOBS; unfinished: $(jobs_json | jq -r '[.items[] | select(.status.state.phase != "Completed" and .status.state.phase != "Failed") | "\(.metadata.name)=\(.status.state.phase // "none")"] | join(" ")')"
drain_s=$((SECONDS - t_drain))
makespan_s=$((SECONDS - t_chaos))
all_alive
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""

# One line per job: name, phase, retries, pods succeeded, sorted task indexes of its pods.
jq -r --slurpfile pods <(kubectl -n "$wns" get pods -o json) '
  ($pods[0].items | group_by(.metadata.labels["volcano.sh/job-name"])
   | map({key: (.[0].metadata.labels["volcano.sh/job-name"] // "none"),
          value: (map(.metadata.labels["volcano.sh/task-index"] // "-1" | tonumber) | sort | map(tostring) | join(","))})
   | from_entries) as $idx
  | .items[] | "\(.metadata.name) \(.status.state.phase // "none") \(.status.retryCount // 0) \(.status.succeeded // 0) \($idx[.metadata.name] // "-")"' \
  <<<"$(jobs_json)" >"$SUITE_DIR/outcomes"
bad="" npods=0
declare -A GOT
while read -r j phase retries ok idx; do GOT[$j]="$phase $retries $ok $idx"; done <"$SUITE_DIR/outcomes"
for j in "${!KIND[@]}"; do
  n=${PODS[$j]}
  npods=$((npods + n))
  read -r phase retries ok idx <<<"${GOT[$j]:-missing 0 0 -}"
  case ${KIND[$j]} in
    plain) want="Completed 0" ;;
    restart) want="Failed 1" ;;
    exitcode) want="Completed 0" ;;
  esac
  [[ "$phase $retries" == "$want" ]] || bad+=" $j (${KIND[$j]}, $n pods): phase $phase, $retries retries, want $want;"
  if [[ ${KIND[$j]} == plain ]]; then
    [[ $idx == "$(seq -s, 0 $((n - 1)))" ]] || bad+=" $j: task indexes [$idx], want 0..$((n - 1));"
    [[ $ok == "$n" ]] || bad+=" $j: $ok pods succeeded, want $n;"
  fi
done
expect_eq "jobs not in their expected phase, with a wrong retry count, task index set or pod count" "$bad" ""
kinds=$(for j in "${!KIND[@]}"; do echo "${KIND[$j]}"; done | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')
e2e_log "jobs: ${kinds%, } ($npods pods)"

# A finished job's PodGroup goes with its pods (the kill that ends a job deletes it, as in
# Volcano): none may be left once every job finished.
no_podgroups() { [[ $(kubectl -n "$wns" get podgroup -o name | wc -l) == 0 ]]; }
wait_for "no PodGroup left once every job finished" 30 no_podgroups ||
  e2e_log "left: $(kubectl -n "$wns" get podgroup -o name | tr '\n' ' ')"

samples=$(wc -l <"$SUITE_DIR/samples")
peak=$(sort -n "$SUITE_DIR/samples" | tail -n 1)
# A sample takes ~1 s idle and several at a load of 15 (2 cores); enough of them to have seen
# every phase of the run.
if ((samples >= DURATION / 10)); then
  pass "$samples samples of the invariants (peak ${peak:-0} GPUs bound in the queue)"
else fail "only $samples samples of the invariants in $((SECONDS - t_chaos)) s"; fi
violations=$(sort -u -k2 "$SUITE_DIR/violations" | head -n 20)
expect_eq "samples with a node over its allocatable, a duplicate task index or the queue over its capability" "$violations" ""

allocated_zero() {
  [[ $(kubectl get queue "$QUEUE" -o json | jq -r '[(.status.allocated // {}) | to_entries[] | select(.value != "0" and .value != 0)] | length') == 0 ]]
}
wait_for "queue $QUEUE allocated back to 0" 30 allocated_zero ||
  e2e_log "queue status: $(kubectl get queue "$QUEUE" -o jsonpath='{.status}')"

kubectl -n "$wns" delete vcjob --all --wait=false >/dev/null
no_pods() { [[ $(kubectl -n "$wns" get pods -o name | wc -l) == 0 ]]; }
wait_for "no pod and no PodGroup left after deleting the jobs" 60 eval 'no_pods && no_podgroups' ||
  e2e_log "left: $(kubectl -n "$wns" get pods,podgroups -o name | head -n 10 | tr '\n' ' ')"
queue_deleted() { kubectl delete queue "$QUEUE" --ignore-not-found >/dev/null 2>&1; }
wait_for "queue $QUEUE deletable (the webhook sees no job and no PodGroup in it)" 30 queue_deleted && QUEUE=""
# Right after its restart the API server answers 403 for a few seconds, before its RBAC
# authorizer has loaded the roles (Kubernetes' own behaviour; the components retry): 403s
# logged from the restart until 20 s after it was ready again are not a missing permission.
forbidden=$(suite_forbidden | awk -v windows="${KAS_WINDOWS[*]:-}" '
  BEGIN { n = split(windows, w, " ") }
  { t = ""; if (match($0, /[IWE][0-9][0-9][0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]/)) t = substr($0, RSTART + 6, 8)
    for (i = 1; i + 1 <= n; i += 2) if (t != "" && t >= w[i] && t <= w[i + 1]) next
    print }')
expect_eq "403 answers in the components' logs (outside the API server restarts)" "$forbidden" ""

total_s=$((SECONDS - t_start))
e2e_log "chaos: $total_s s in all; the last job finished ${makespan_s}s after the first was submitted, ${drain_s}s after the chaos stopped"
if [[ -n $RESULTS ]]; then
  cat >"$RESULTS" <<R
seed=$SEED
duration_s=$DURATION
jobs=$NJOBS
pods=$npods
kinds=${kinds%, }
kills_scheduler=${KILLS[scheduler]}
kills_controllers=${KILLS[controllers]}
kills_admission=${KILLS[admission]}
restarts_apiserver=${KILLS[kube-apiserver]}
lease_exits=$LEASE_EXITS
creations_retried=$RETRIED
drain_s=$drain_s
makespan_s=$makespan_s
total_s=$total_s
samples=$samples
peak_queue_gpus=${peak:-0}
violations=$(wc -l <"$SUITE_DIR/violations")
failed_checks=$E2E_FAILS
R
fi
