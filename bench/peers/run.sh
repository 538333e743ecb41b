#!/usr/bin/env bash
# Basalt, Volcano v1.15.1 (../shared/peers) and kube-scheduler on the same local API server,
# one fresh cluster per system and repetition, in interleaved repetitions; the same load
# generator (peers_bench) for all. Figures only: it never passes or fails on speed.
#
#   bench/peers/run.sh [--quick] [--reps N] [--nodes N] [--scenarios "s1 s2 s3"]
#                      [--systems "ceiling basalt basalt-shadow volcano kube50 kube2000"] [--out DIR]
#                      [--basalt-controller-flags "--bare-pod-podgroups=false ..."]
#                      [--basalt-scheduler-flags "--schedule-period=2s ..."]
#
# Scenarios (pods ask for 100m CPU and 256Mi; webhooks off; client QPS 2000 for every system
# unless named otherwise):
#   s1  pre-made gangs: --s1-gangs gangs of 4 pods with their PodGroups are created with no
#       scheduler running; then the scheduler starts; start -> all bound. "ceiling" binds them
#       itself with 16 concurrent POST pods/binding (sched_e2e_bench --mode=bind). Then s4:
#       the scheduler is killed, one more gang is created, the scheduler restarts; restart ->
#       that gang bound (with every earlier pod still bound in its caches).
#   s2  full stack: --s2-jobs one-pod vcjobs, then --s2-gangs jobs of 20 replicas, each set from
#       16 concurrent creators, controllers and scheduler running; first create -> all bound.
#   s3  bare pods: --s3-pods pods with the system's schedulerName and no PodGroup (Basalt's and
#       Volcano's controllers make one per pod; kube-scheduler at QPS 50 and at QPS 2000).
# Each run records pods/s, create->bound p50/p99, API requests by verb and resource (deltas of
# the API server's apiserver_request_total from the start until the writes have settled after
# the last bind), peak RSS and CPU seconds of each component, in
# DIR/results.jsonl (default _output/bench-peers); report.py turns that into a table and plots.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$REPO/_output/bench-peers
BUILD=${BASALT_BUILD_DIR:-$REPO/_output/build}
PEERS=${BASALT_PEERS_DIR:-$REPO/../shared/peers/volcano-v1.15.1}
REPS=2 NODES=1000 SCENARIOS="s1 s2 s3" SYSTEMS="ceiling basalt volcano kube50 kube2000"
S1_GANGS="500 2000" S2_JOBS=1000 S2_GANGS=50 S3_PODS=4000 QPS=2000 TIMEOUT=900
BASALT_CONTROLLER_FLAGS="" BASALT_SCHEDULER_FLAGS=""
while (($#)); do
  case $1 in
    --quick) NODES=100 REPS=1 S1_GANGS=250 S2_JOBS=200 S2_GANGS=10 S3_PODS=500; shift ;;
    --reps) REPS=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --scenarios) SCENARIOS=$2; shift 2 ;;
    --systems) SYSTEMS=$2; shift 2 ;;
    --s1-gangs) S1_GANGS=$2; shift 2 ;;
    --s2-jobs) S2_JOBS=$2; shift 2 ;;
    --s2-gangs) S2_GANGS=$2; shift 2 ;;
    --s3-pods) S3_PODS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    # Extra flags for Basalt's vc-controller-manager (word-split), e.g.
    # --bare-pod-podgroups=false (bare pods then get no PodGroup: the scheduler's shadow job).
    --basalt-controller-flags) BASALT_CONTROLLER_FLAGS=$2; shift 2 ;;
    # Extra flags for Basalt's vc-scheduler (word-split, after the bench's own, so they win).
    --basalt-scheduler-flags) BASALT_SCHEDULER_FLAGS=$2; shift 2 ;;
    -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
done
# shellcheck source=../../e2e/cluster/lib.sh
source "$REPO/e2e/cluster/lib.sh"
STATE=$OUT/cluster
export KUBECONFIG=$STATE/kubeconfig
mkdir -p "$OUT/runs" "$OUT/bin"
BENCH=${PEERS_BENCH_BIN:-$BUILD/bench/peers/peers_bench}
CEILING=$BUILD/bench/scheduler_e2e/sched_e2e_bench
for b in "$BENCH" "$CEILING" "$BUILD/scheduler/vc-scheduler" "$BUILD/controllers/vc-controller-manager"; do
  [[ -x $b ]] || { echo "missing $b: build with BASALT_BUILD_BENCH=ON (hack/lib.sh build_basalt)" >&2; exit 1; }
done
blog() { printf '%s [peers] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Volcano's binaries, unpacked once and checked against the README's sha256.
unpack_volcano() {
  local b want
  for b in vc-scheduler vc-controller-manager; do
    [[ -x $OUT/bin/$b ]] && continue
    [[ -f $PEERS/$b.gz ]] || { echo "no $PEERS/$b.gz: Volcano is not available here" >&2; return 1; }
    gzip -dc "$PEERS/$b.gz" >"$OUT/bin/$b.tmp"
    want=$(sed -nE "s/^- $b ([0-9a-f]{64})$/\1/p" "$PEERS/../README.md")
    if [[ -n $want && $(sha256sum "$OUT/bin/$b.tmp" | cut -d' ' -f1) != "$want" ]]; then
      echo "$b: sha256 differs from ../shared/peers/README.md" >&2; return 1
    fi
    chmod +x "$OUT/bin/$b.tmp" && mv "$OUT/bin/$b.tmp" "$OUT/bin/$b"
  done
}

PIDS=()
declare -A PID_OF=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=() PID_OF=()
}
cleanup() {
  stop_all
  "$REPO/e2e/cluster/down.sh" --state-dir "$STATE" --quiet >/dev/null 2>&1 || true
}
trap cleanup EXIT

# start NAME LOG CMD...: a component of the system under test, remembered for its figures.
start() {
  local name=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  PIDS+=("$!")
  PID_OF[$name]=$!
}
wait_log() { # LOG PATTERN SECONDS
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -qa -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "timed out waiting for '$2' in $1:" >&2; tail -n 20 "$1" >&2; return 1
}
# proc_json: {"name":{"rss_mib":..,"cpu_s":..},...} of the running components (VmHWM, utime+stime).
proc_json() {
  local n pid hwm cpu first=1 tck
  tck=$(getconf CLK_TCK)
  printf '{'
  for n in "${!PID_OF[@]}"; do
    pid=${PID_OF[$n]}
    [[ -r /proc/$pid/status ]] || continue
    hwm=$(awk '/^VmHWM:/{print $2}' "/proc/$pid/status")
    cpu=$(sed -E 's/^.*\) //' "/proc/$pid/stat" | awk -v t="$tck" '{printf "%.2f", ($12 + $13) / t}')
    ((first)) || printf ','
    first=0
    printf '"%s":{"rss_mib":%.1f,"cpu_s":%s}' "$n" "$(echo "$hwm / 1024" | bc -l)" "$cpu"
  done
  printf '}'
}
api_metrics() { kubectl get --raw /metrics | grep '^apiserver_request_total{' >"$1"; }

fresh_cluster() { # SYSTEM
  blog "fresh cluster for $1 ($NODES nodes)"
  "$REPO/e2e/cluster/up.sh" --state-dir "$STATE" --nodes "$NODES" --node-pods 110 --replace \
    --timeout 300 >"$OUT/cluster-up.log" 2>&1 || { tail -n 30 "$OUT/cluster-up.log" >&2; return 1; }
  local crds=$REPO/crds
  [[ $1 == volcano ]] && crds=$PEERS/crds
  kubectl apply --server-side --force-conflicts -f "$crds" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$crds" >/dev/null
  kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 1, reclaimable: true}
YAML
  # Open, as each system's queue controller would mark it: in s1 only the scheduler runs, and
  # Volcano's schedules nothing in a queue without status.state Open.
  kubectl patch queue default --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null
}

# Both Volcano-compatible schedulers run the same configuration: Volcano's default (and
# Basalt's built-in one), given as a file because Volcano's binary refuses an empty one here.
SCHED_CONF=$OUT/scheduler.conf
cat >"$SCHED_CONF" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
start_scheduler() { # SYSTEM LOG
  case $1 in
    basalt | basalt-shadow)
      local shadow=()
      # No group annotation on the bindings either, as the controller's flag says.
      [[ $1 == basalt-shadow ]] && shadow=(--bare-pod-podgroups=false)
      # shellcheck disable=SC2086 # the extra flags are meant to split into words
      start scheduler "$2" "$BUILD/scheduler/vc-scheduler" --kubeconfig="$KUBECONFIG" \
        --leader-elect=false --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 \
        --schedule-period=1s --kube-api-qps="$QPS" --kube-api-burst="$QPS" \
        --scheduler-conf="$SCHED_CONF" "${shadow[@]}" $BASALT_SCHEDULER_FLAGS
      wait_log "$2" "Caches synced" 120 ;;
    volcano)
      start scheduler "$2" "$OUT/bin/vc-scheduler" --kubeconfig="$KUBECONFIG" --leader-elect=false \
        --schedule-period=1s --kube-api-qps="$QPS" --kube-api-burst="$QPS" \
        --listen-address=127.0.0.1:0 --healthz-address=127.0.0.1:0 --scheduler-name=volcano \
        --scheduler-conf="$SCHED_CONF" -v=2
      wait_log "$2" "Scheduler completes Initialization" 120 ;;
    kube50 | kube2000)
      local qps=${1#kube} conf=$OUT/runs/kube-scheduler-$1.yaml
      cat >"$conf" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$STATE/kube-scheduler.kubeconfig", qps: $qps, burst: $((qps * 2))}
leaderElection: {leaderElect: false}
YAML
      start scheduler "$2" "$(find_bin kubernetes "$KUBERNETES_VERSION" kube-scheduler)" \
        --config="$conf" --secure-port=0 -v=1
      wait_log "$2" "Serving\|Starting Kubernetes Scheduler\|Attempting to acquire\|Caches are synced" 120 ;;
  esac
}
start_controllers() { # SYSTEM LOG
  case $1 in
    basalt)
      # shellcheck disable=SC2086 # the extra flags are meant to split into words
      start controllers "$2" "$BUILD/controllers/vc-controller-manager" --kubeconfig="$KUBECONFIG" \
        --leader-elect=false --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 \
        --kube-api-qps="$QPS" --kube-api-burst="$QPS" $BASALT_CONTROLLER_FLAGS
      wait_log "$2" "Caches synced" 120 ;;
    basalt-shadow)
      # Bare pods stay in the scheduler's shadow jobs: no PodGroup, no annotation written.
      # shellcheck disable=SC2086
      start controllers "$2" "$BUILD/controllers/vc-controller-manager" --kubeconfig="$KUBECONFIG" \
        --leader-elect=false --metrics-addr=127.0.0.1:0 --health-addr=127.0.0.1:0 \
        --kube-api-qps="$QPS" --kube-api-burst="$QPS" --bare-pod-podgroups=false $BASALT_CONTROLLER_FLAGS
      wait_log "$2" "Caches synced" 120 ;;
    volcano)
      start controllers "$2" "$OUT/bin/vc-controller-manager" --kubeconfig="$KUBECONFIG" \
        --leader-elect=false --kube-api-qps="$QPS" --kube-api-burst="$QPS" \
        --listen-address=127.0.0.1:0 --healthz-address=127.0.0.1:0 -v=1 \
        --controllers=job-controller,pg-controller,queue-controller,gc-controller
      # The controllers Basalt has (its jobflow/jobtemplate ones wait forever for CRDs that its
      # crds/ lacks). It logs no single "synced" line; its informers sync in well under 3 s here.
      sleep 3 ;;
  esac
}
# wipe NS...: deletes the namespaces of a scenario and waits until they are gone, so the next
# scenario on this cluster starts from empty caches.
wipe() { kubectl delete namespace "$@" --wait=true --timeout=600s >/dev/null 2>&1 || true; }
sched_name() { [[ $1 == kube* ]] && echo default-scheduler || echo volcano; }

# record SCENARIO SYSTEM REP PODS CSV START_MS METRICS_BEFORE [EXTRA_JSON]
# settled_metrics FILE: the API server's counters once the writes that follow the last bind (the
# PodGroup Running status, events, KWOK's pod status) have landed: polled every second until
# the count of writes (leases left out) is unchanged for two polls, at most 30 s. Writes a
# system defers past the last bind are counted, not cut off by the end of the clock.
settled_metrics() {
  local last=-1 same=0 now i
  for ((i = 0; i < 30; i++)); do
    api_metrics "$1"
    now=$(grep -v 'resource="leases"' "$1" | grep -Ev 'verb="(GET|LIST|WATCH)"' |
      awk '{s += $NF} END {printf "%d", s}')
    if [[ $now == "$last" ]]; then ((++same >= 2)) && return 0; else same=0; fi
    last=$now
    sleep 1
  done
}
record() {
  settled_metrics "$OUT/runs/metrics-after.txt"
  python3 "$REPO/bench/peers/summarize.py" --scenario "$1" --system "$2" --rep "$3" --pods "$4" \
    --csv "$5" --start-ms "$6" --metrics-before "$7" --metrics-after "$OUT/runs/metrics-after.txt" \
    --procs "$(proc_json)" --extra "${8:-{\}}" --nodes "$NODES" >>"$OUT/results.jsonl"
  tail -n 1 "$OUT/results.jsonl" | python3 "$REPO/bench/peers/summarize.py" --line >&2
}

run_s1() { # SYSTEM REP GANGS
  local sys=$1 rep=$2 gangs=$3 tag="s1-$3-$1-$2" pods=$(($3 * 4)) t0 before=$OUT/runs/metrics-before.txt
  local csv=$OUT/runs/$tag.csv
  [[ $sys == kube* ]] && return 0
  if [[ $sys == ceiling ]]; then
    api_metrics "$before"
    t0=$(date +%s%3N)
    "$CEILING" --mode=bind --namespace=bench --gangs="$gangs" --gang-size=4 --bind-workers=16 \
      --kube-api-qps="$QPS" --kube-api-burst="$QPS" >"$OUT/runs/$tag.log" 2>&1
    local rate
    rate=$(sed -nE 's/^bind: [0-9]+\/[0-9]+ pods bound in ([0-9.]+) s: ([0-9]+) pods\/s.*/\2/p' "$OUT/runs/$tag.log")
    echo "pod,owner,created_ms,bound_ms" >"$csv"
    record "s1-$gangs" ceiling "$rep" "$pods" "$csv" "$t0" "$before" "{\"ceiling_pods_per_s\": ${rate:-0}}"
    wipe bench
    return 0
  fi
  "$BENCH" --create=gangs --namespace=bench --count="$gangs" --size=4 --expect=0 \
    --queue=default --scheduler-name=volcano --timeout=1 >"$OUT/runs/$tag-create.log" 2>&1 || true
  api_metrics "$before"
  "$BENCH" --create=none --namespace=bench --expect="$pods" --timeout="$TIMEOUT" --out="$csv" \
    >"$OUT/runs/$tag-watch.log" 2>&1 &
  local watcher=$!
  wait_log "$OUT/runs/$tag-watch.log" "watching namespace" 60
  t0=$(date +%s%3N)
  start_scheduler "$sys" "$OUT/runs/$tag-scheduler.log"
  wait "$watcher" || true
  record "s1-$gangs" "$sys" "$rep" "$pods" "$csv" "$t0" "$before"
  # s4: restart with every pod bound -> a new gang bound.
  kill -KILL "${PID_OF[scheduler]}" 2>/dev/null || true
  wait "${PID_OF[scheduler]}" 2>/dev/null || true
  PIDS=() PID_OF=()
  local late=$OUT/runs/s4-$pods-$sys-$rep.csv
  "$BENCH" --create=gangs --namespace=bench-late --count=1 --size=4 --queue=default \
    --scheduler-name=volcano --timeout="$TIMEOUT" --out="$late" >"$OUT/runs/$tag-late.log" 2>&1 &
  watcher=$!
  wait_log "$OUT/runs/$tag-late.log" "created 1 gangs" 60
  api_metrics "$before"
  t0=$(date +%s%3N)
  start_scheduler "$sys" "$OUT/runs/$tag-scheduler-restart.log"
  wait "$watcher" || true
  record "s4-$pods" "$sys" "$rep" 4 "$late" "$t0" "$before" "{\"bound_in_cache\": $pods}"
  stop_all
  wipe bench bench-late
}

run_jobs() { # SYSTEM REP SCENARIO COUNT SIZE
  local sys=$1 rep=$2 tag="$3-$1-$2" csv before=$OUT/runs/metrics-before.txt t0
  csv=$OUT/runs/$tag.csv
  [[ $sys == ceiling || $sys == kube* ]] && return 0
  start_controllers "$sys" "$OUT/runs/$tag-controllers.log"
  start_scheduler "$sys" "$OUT/runs/$tag-scheduler.log"
  api_metrics "$before"
  t0=$(date +%s%3N)
  "$BENCH" --create=jobs --namespace=bench --count="$4" --size="$5" --queue=default \
    --scheduler-name=volcano --timeout="$TIMEOUT" --out="$csv" >"$OUT/runs/$tag.log" 2>&1 || true
  record "$3" "$sys" "$rep" "$(($4 * $5))" "$csv" "$t0" "$before"
  stop_all
  wipe bench
}

run_s3() { # SYSTEM REP
  local sys=$1 rep=$2 tag="s3-$1-$2" csv before=$OUT/runs/metrics-before.txt t0
  csv=$OUT/runs/$tag.csv
  [[ $sys == ceiling ]] && return 0
  [[ $sys == kube* ]] || start_controllers "$sys" "$OUT/runs/$tag-controllers.log"
  start_scheduler "$sys" "$OUT/runs/$tag-scheduler.log"
  api_metrics "$before"
  t0=$(date +%s%3N)
  "$BENCH" --create=pods --namespace=bench --count="$S3_PODS" --scheduler-name="$(sched_name "$sys")" \
    --timeout="$TIMEOUT" --out="$csv" >"$OUT/runs/$tag.log" 2>&1 || true
  record s3 "$sys" "$rep" "$S3_PODS" "$csv" "$t0" "$before"
  stop_all
  wipe bench
}

blog "systems: $SYSTEMS; scenarios: $SCENARIOS; $REPS repetitions; $NODES nodes; results: $OUT/results.jsonl"
# One fresh cluster per system and repetition; the scenarios run on it one after the other,
# each in namespaces deleted afterwards, with the system's components restarted per scenario.
for ((rep = 1; rep <= REPS; rep++)); do
  # Interleaved: every system once per repetition, the order reversed every other repetition.
  read -ra order <<<"$SYSTEMS"
  if ((rep % 2 == 0)); then mapfile -t order < <(printf '%s\n' "${order[@]}" | tac); fi
  for sys in "${order[@]}"; do
    case $sys in ceiling | basalt | basalt-shadow | volcano | kube50 | kube2000) ;; *) echo "unknown system $sys" >&2; exit 2 ;; esac
    [[ $sys == volcano ]] && unpack_volcano
    fresh_cluster "$sys"
    for sc in $SCENARIOS; do
      case $sc in
        s1) for g in $S1_GANGS; do run_s1 "$sys" "$rep" "$g"; done ;;
        s2)
          run_jobs "$sys" "$rep" s2-1pod "$S2_JOBS" 1
          run_jobs "$sys" "$rep" s2-gang20 "$S2_GANGS" 20 ;;
        s3) run_s3 "$sys" "$rep" ;;
        *) echo "unknown scenario $sc" >&2; exit 2 ;;
      esac
    done
  done
done
# The plots need matplotlib: in a venv under _output (from PyPI), or the report without them.
PY=python3
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  if [[ -x $REPO/_output/venv/bin/python ]] || { python3 -m venv "$REPO/_output/venv" &&
    "$REPO/_output/venv/bin/pip" install -q matplotlib; } >/dev/null 2>&1; then
    PY=$REPO/_output/venv/bin/python
  else
    blog "matplotlib unavailable: the report has no plots"
  fi
fi
"$PY" "$REPO/bench/peers/report.py" --results "$OUT/results.jsonl" --out "$OUT/report.md" --plots "$OUT"
blog "report: $OUT/report.md"
