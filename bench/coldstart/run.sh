#!/usr/bin/env bash
# Cold start at scale: a fresh local cluster (e2e/cluster/up.sh) with N KWOK nodes, P pods
# already bound (spec.nodeName set) in G PodGroups with status Running over Q queues, created by
# coldstart_load with no scheduler or controller running. Then the system's vc-scheduler and
# vc-controller-manager start together, and a new 4-pod gang (peers_bench) is created at that
# moment. Measured: process start -> "caches synced" log line of each, process start -> that
# gang bound, peak RSS (VmHWM) of each after sync and per pod, and the LIST requests each
# resource got (count and how many carried a limit, i.e. were paginated) from the API server's
# apiserver_request_total. Figures only; it never passes or fails on speed.
#
#   bench/coldstart/run.sh [--scale 0.1|0.5|1] [--nodes N] [--pods P] [--podgroups G]
#                          [--queues Q] [--system basalt|volcano] [--out DIR]
# --scale s: N = 5000 s, P = 140000 s, G = 20000 s (issue 17's full size at 1). Results: one
# JSON line per run in DIR/results.jsonl (default _output/bench-coldstart).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$REPO/_output/bench-coldstart
BUILD=${BASALT_BUILD_DIR:-$REPO/_output/build}
PEERS=${BASALT_PEERS_DIR:-$REPO/../shared/peers/volcano-v1.15.1}
SCALE=0.1 NODES="" PODS="" GROUPS_N="" QUEUES=4 SYSTEM=basalt QPS=2000 TIMEOUT=600
while (($#)); do
  case $1 in
    --scale) SCALE=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --podgroups) GROUPS_N=$2; shift 2 ;;
    --queues) QUEUES=$2; shift 2 ;;
    --system) SYSTEM=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
done
scaled() { python3 -c "print(max(1, round($1 * $SCALE)))"; }
NODES=${NODES:-$(scaled 5000)} PODS=${PODS:-$(scaled 140000)} GROUPS_N=${GROUPS_N:-$(scaled 20000)}
case $SYSTEM in basalt | volcano) ;; *) echo "--system must be basalt or volcano" >&2; exit 2 ;; esac
# shellcheck source=../../e2e/cluster/lib.sh
source "$REPO/e2e/cluster/lib.sh"
STATE=$OUT/cluster
export KUBECONFIG=$STATE/kubeconfig
TAG=$SYSTEM-$NODES-$PODS
RUN=$OUT/runs/$TAG
mkdir -p "$RUN" "$OUT/bin"
LOAD=$BUILD/bench/coldstart/coldstart_load
GANG=$BUILD/bench/peers/peers_bench
for b in "$LOAD" "$GANG"; do [[ -x $b ]] || { echo "missing $b (ninja coldstart_load peers_bench)" >&2; exit 1; }; done
blog() { printf '%s [coldstart] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now_ms() { date +%s%3N; }

PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ ${KEEP_CLUSTER:-0} == 1 ]] || "$REPO/e2e/cluster/down.sh" --state-dir "$STATE" --quiet >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [[ $SYSTEM == volcano ]]; then
  SCHED=$OUT/bin/vc-scheduler CTRL=$OUT/bin/vc-controller-manager CRDS=$PEERS/crds
  for b in vc-scheduler vc-controller-manager; do
    [[ -x $OUT/bin/$b ]] || { gzip -dc "$PEERS/$b.gz" >"$OUT/bin/$b" && chmod +x "$OUT/bin/$b"; }
  done
else
  SCHED=$BUILD/scheduler/vc-scheduler CTRL=$BUILD/controllers/vc-controller-manager CRDS=$REPO/crds
fi
T_BEGIN=$(now_ms)
blog "$SYSTEM: cluster with $NODES nodes; then $PODS bound pods in $GROUPS_N PodGroups over $QUEUES queues"
"$REPO/e2e/cluster/up.sh" --state-dir "$STATE" --nodes "$NODES" --node-pods 110 --replace \
  --timeout 900 >"$RUN/cluster-up.log" 2>&1 || { tail -n 30 "$RUN/cluster-up.log" >&2; exit 1; }
T_CLUSTER=$(now_ms)
kubectl apply --server-side --force-conflicts -f "$CRDS" >/dev/null
kubectl wait --for condition=established --timeout=60s -f "$CRDS" >/dev/null
nice -n 10 "$LOAD" --namespace=cold --queues="$QUEUES" --podgroups="$GROUPS_N" --pods="$PODS" \
  --kube-api-qps="$QPS" --kube-api-burst="$QPS" >"$RUN/load.log" 2>&1 || { tail -n 20 "$RUN/load.log" >&2; exit 1; }
T_LOADED=$(now_ms)
blog "$(tail -n 1 "$RUN/load.log"); cluster up in $(((T_CLUSTER - T_BEGIN) / 1000)) s"
sleep 5 # let KWOK's pod status writes settle before the clock starts
kubectl get --raw /metrics | grep '^apiserver_request_total{' >"$RUN/metrics-before.txt"

# The gang's watcher lists first; the gang is created right as the processes start.
nice -n 10 "$GANG" --create=none --namespace=cold-late --expect=4 --timeout="$TIMEOUT" \
  --out="$RUN/late.csv" >"$RUN/late-watch.log" 2>&1 &
WATCHER=$!
for ((i = 0; i < 600; i++)); do grep -q "watching namespace" "$RUN/late-watch.log" && break; sleep 0.1; done
T0=$(now_ms)
if [[ $SYSTEM == basalt ]]; then
  "$SCHED" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
    --health-addr=127.0.0.1:0 --schedule-period=1s --kube-api-qps="$QPS" --kube-api-burst="$QPS" \
    >"$RUN/scheduler.log" 2>&1 &
  SPID=$!
  "$CTRL" --kubeconfig="$KUBECONFIG" --leader-elect=false --metrics-addr=127.0.0.1:0 \
    --health-addr=127.0.0.1:0 --kube-api-qps="$QPS" --kube-api-burst="$QPS" >"$RUN/controllers.log" 2>&1 &
  CPID=$!
  S_SYNC="Caches synced" C_SYNC="Caches synced"
else
  "$SCHED" --kubeconfig="$KUBECONFIG" --leader-elect=false --schedule-period=1s \
    --kube-api-qps="$QPS" --kube-api-burst="$QPS" --listen-address=127.0.0.1:0 \
    --healthz-address=127.0.0.1:0 --scheduler-name=volcano -v=2 >"$RUN/scheduler.log" 2>&1 &
  SPID=$!
  "$CTRL" --kubeconfig="$KUBECONFIG" --leader-elect=false --kube-api-qps="$QPS" --kube-api-burst="$QPS" \
    --listen-address=127.0.0.1:0 --healthz-address=127.0.0.1:0 -v=2 \
    --controllers=job-controller,pg-controller,queue-controller,gc-controller >"$RUN/controllers.log" 2>&1 &
  CPID=$!
  S_SYNC="Scheduler completes Initialization" C_SYNC="WaitForCacheSync\|Caches are synced\|caches synced"
fi
PIDS+=("$SPID" "$CPID")
nice -n 10 "$GANG" --create=gangs --namespace=cold-late --count=1 --size=4 --expect=0 --queue=q0 \
  --scheduler-name=volcano --timeout=1 >"$RUN/late-create.log" 2>&1 &
T_S="" T_C=""
while [[ -z $T_S || -z $T_C ]] && (($(now_ms) - T0 < TIMEOUT * 1000)); do
  [[ -z $T_S ]] && grep -qa -- "$S_SYNC" "$RUN/scheduler.log" && T_S=$(now_ms)
  [[ -z $T_C ]] && grep -qa -- "$C_SYNC" "$RUN/controllers.log" && T_C=$(now_ms)
  kill -0 "$SPID" 2>/dev/null || { echo "scheduler exited:" >&2; tail -n 20 "$RUN/scheduler.log" >&2; exit 1; }
  kill -0 "$CPID" 2>/dev/null || { echo "controller-manager exited:" >&2; tail -n 20 "$RUN/controllers.log" >&2; exit 1; }
  sleep 0.1
done
wait "$WATCHER" || true
T_END=$(now_ms)
sleep 5 # settled: the peak below is the one after sync and the first bind
hwm() { awk '/^VmHWM:/{print $2}' "/proc/$1/status"; }
rss() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
S_HWM=$(hwm "$SPID") S_RSS=$(rss "$SPID") C_HWM=$(hwm "$CPID") C_RSS=$(rss "$CPID")
kubectl get --raw /metrics | grep '^apiserver_request_total{' >"$RUN/metrics-after.txt"
BOUND_MS=$(awk -F, 'NR > 1 && $4 > 0 {if ($4 > m) m = $4; n++} END {if (n == 4) print m; else print 0}' "$RUN/late.csv" 2>/dev/null || echo 0)
LOAD_AVG=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$RUN/metrics-before.txt" "$RUN/metrics-after.txt" >"$RUN/lists.json" <<'PY'
import json, re, sys
def read(path):
    out = {}
    for line in open(path):
        m = re.match(r'apiserver_request_total\{(.*)\} ([0-9.e+]+)$', line.strip())
        if not m: continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("verb") != "LIST": continue
        key = labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else "")
        out[key] = out.get(key, 0) + float(m.group(2))
    return out
a, b = read(sys.argv[1]), read(sys.argv[2])
print(json.dumps({k: int(b[k] - a.get(k, 0)) for k in sorted(b) if b[k] - a.get(k, 0) > 0}))
PY
python3 - <<PY | tee -a "$OUT/results.jsonl"
import json
t0, ts, tc, tb = $T0, ${T_S:-0}, ${T_C:-0}, $BOUND_MS
pods = $PODS
r = {"system": "$SYSTEM", "nodes": $NODES, "pods": pods, "podgroups": $GROUPS_N, "queues": $QUEUES,
     "cluster_up_s": ($T_CLUSTER - $T_BEGIN) / 1000, "load_s": ($T_LOADED - $T_CLUSTER) / 1000,
     "scheduler_synced_s": (ts - t0) / 1000 if ts else None,
     "controllers_synced_s": (tc - t0) / 1000 if tc else None,
     "first_gang_bound_s": (tb - t0) / 1000 if tb else None,
     "scheduler_hwm_mib": $S_HWM / 1024, "scheduler_rss_mib": $S_RSS / 1024,
     "controllers_hwm_mib": $C_HWM / 1024, "controllers_rss_mib": $C_RSS / 1024,
     "scheduler_kib_per_pod": round($S_HWM / pods, 3), "controllers_kib_per_pod": round($C_HWM / pods, 3),
     "lists": json.load(open("$RUN/lists.json")), "loadavg": "$LOAD_AVG",
     "end_to_end_s": ($T_END - $T_BEGIN) / 1000}
print(json.dumps(r))
PY
blog "done in $((($(now_ms) - T_BEGIN) / 1000)) s; logs in $RUN"
