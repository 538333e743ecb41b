#!/usr/bin/env bash
# API requests per job, counted by the API server (issue 17: every write but the bind costs
# throughput, so a change that adds writes must be seen). With vc-controller-manager and
# vc-scheduler running, a fixed small workload — 8 one-pod vcjobs and 2 vcjobs of a 4-pod gang —
# runs until every Job and PodGroup is Running with its pods Running; the deltas of the API
# server's apiserver_request_total over that window, by verb and resource, are compared with the
# budget in request_budget.txt (requests per job). The test fails when a row or the total of
# Basalt's writes goes over its budget, and prints the table either way.
#
# Left out of the count: leases (leader election is off here; KWOK's node heartbeats grow with
# time, not with the work), and pods/status (KWOK writes the pods' phase there; Basalt's own
# pods/status writes — PodScheduled=False — do not happen in a workload that fits, and the
# never_fit suite covers them). Read requests are printed but not budgeted.
#
# Then two 20-pod gangs, one at a time, counted per pod against request_budget_gang.txt, with
# pods/status counted this time (KWOK's one Running write per pod is in the budget): "fits", a
# vcjob of 20 replicas with minAvailable 20 on a cluster with room; "held", the same gang with a
# nodeSelector no node matches until the test labels a node, a few cycles later. While a gang's
# pods are being created the scheduler explains the wait once on its PodGroup, never per pod
# per cycle; a gang that cannot fit writes each pod's PodScheduled=False and FailedScheduling
# once, not again each cycle with the same content (the 2026-12-07 regression wrote 10 writes
# per pod for "fits", 2.2 pods/status and 4.9 events per pod).
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

BUDGET_FILE=$(dirname "$0")/request_budget.txt
install_crds
# Earlier suites' namespaces must be gone: the controllers and the scheduler started below act
# on every namespace, and a terminating one's leftover Jobs and pods would be counted here.
no_terminating() { ! kubectl get namespaces --no-headers 2>/dev/null | grep -q Terminating; }
wait_for "no namespace terminating" 300 no_terminating
ns=$(new_namespace ctrl-budget)
cm_start
scheduler_start "$ns"
[[ ${BASALT_E2E_SCHEDULER:-real} == real ]] || { fail "this suite needs the real vc-scheduler"; exit 1; }

job_yaml() { # name replicas [node-selector-label]
  cat <<JOB
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1, namespace: $ns}
spec:
  schedulerName: volcano
  queue: default
  minAvailable: $2
  tasks:
  - name: worker
    replicas: $2
    template:
      spec:
        restartPolicy: Never
        nodeSelector: {${3:+$3: placed-here}}
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
---
JOB
}

api_metrics() { kubectl get --raw /metrics | grep '^apiserver_request_total{' >"$1"; }

# check_budget BEFORE AFTER BUDGET_FILE UNITS UNIT SCENARIO EXCLUDED WHAT: the deltas of the
# two samples per UNIT (job, pod) against the budget lines of SCENARIO ("-": the 3-column
# lines), resources in EXCLUDED (comma-separated) not counted; passes or fails WHAT.
check_budget() {
  local report
  report=$(python3 - "$@" <<'PY'
import re, sys
before, after, budget_file, units, unit, scenario = (sys.argv[1], sys.argv[2], sys.argv[3],
                                                   int(sys.argv[4]), sys.argv[5], sys.argv[6])
excluded = set(filter(None, sys.argv[7].split(",")))
pat = re.compile(r'^apiserver_request_total\{(.*)\} (\S+)$')
def load(path):
    out = {}
    for line in open(path):
        m = pat.match(line.strip())
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        res = labels.get("resource", "")
        if labels.get("subresource"):
            res += "/" + labels["subresource"]
        key = (labels.get("verb", ""), res)
        out[key] = out.get(key, 0.0) + float(m.group(2))
    return out
b, a = load(before), load(after)
delta = {k: a[k] - b.get(k, 0.0) for k in a if a[k] - b.get(k, 0.0) > 0}
budget = {}
for line in open(budget_file):
    line = line.split("#", 1)[0].split()
    if scenario != "-":  # "<scenario> <verb> <resource> <max>" lines of that scenario
        if len(line) != 4 or line[0] != scenario:
            continue
        line = line[1:]
    if len(line) == 3:
        budget[(line[0], line[1])] = float(line[2])
writes = {"POST", "PUT", "PATCH", "DELETE"}
rows, over = [], []
total_writes = 0.0
for (verb, res), n in sorted(delta.items(), key=lambda kv: -kv[1]):
    if res.split("/")[0] == "leases":
        continue
    per_unit = n / units
    limit = budget.get((verb, res))
    counted = verb in writes and res not in excluded
    if counted:
        total_writes += per_unit
        if limit is None or per_unit > limit + 1e-9:
            over.append(f"{verb} {res}: {per_unit:.2f} per {unit} > budget {limit if limit is not None else 'none (a new kind of write)'}")
    rows.append(f"  {verb:7} {res:28} {per_unit:6.2f}/{unit}  {'budget ' + format(limit, 'g') if limit is not None else ('not counted' if not counted else 'NO BUDGET')}")
limit_total = budget.get(("ALL", "writes"))
print("\n".join(rows))
left_out = "".join(", " + e for e in sorted(excluded - {"leases"}))
print(f"  counted writes (left out: leases{left_out}): {total_writes:.2f} per {unit}, budget {limit_total}")
if limit_total is not None and total_writes > limit_total + 1e-9:
    over.append(f"total writes {total_writes:.2f} per {unit} > budget {limit_total}")
for o in over:
    print("OVER: " + o)
PY
)
  e2e_log "$8: API requests per $5 (deltas of apiserver_request_total over the run):"
  echo "$report" >&2
  if grep -q '^OVER: ' <<<"$report"; then
    fail "$8: API requests over budget: $(grep '^OVER: ' <<<"$report" | sed 's/^OVER: //' | paste -sd';')"
  else
    pass "$8: every counted write within its budget ($3)"
  fi
}

# settle FILE: samples into FILE until two samples a second apart agree (the writers are
# asynchronous and events are aggregated), at most 20 s.
settle() {
  local prev="" cur
  for _ in $(seq 1 20); do
    sleep 1
    api_metrics "$1"
    cur=$(grep -v 'resource="leases"' "$1" | md5sum)
    [[ $cur == "$prev" ]] && break
    prev=$cur
  done
}


# Warm: informers listed and watching, the namespace's service account and root CA config map
# made by kube-controller-manager, the default queue present. Then take the "before" sample.
wait_for "default queue exists" 30 kubectl get queue default
sleep 3
before=$(mktemp) after=$(mktemp)
trap 'rm -f "$before" "$after"' RETURN
api_metrics "$before"

jobs=10
{
  for i in $(seq 0 7); do job_yaml "one-$i" 1; done
  for i in 0 1; do job_yaml "gang-$i" 4; done
} | kubectl apply -f - >/dev/null

all_running() {
  local phases pgs pods
  phases=$(kubectl -n "$ns" get vcjob -o jsonpath='{range .items[*]}{.status.state.phase}{"\n"}{end}' | grep -c '^Running$' || true)
  pgs=$(kubectl -n "$ns" get podgroup -o jsonpath='{range .items[*]}{.status.phase}/{.status.running}{"\n"}{end}' | grep -cE '^Running/(1|4)$' || true)
  pods=$(kubectl -n "$ns" get pods --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)
  [[ $phases == "$jobs" && $pgs == "$jobs" && $pods == 16 ]]
}
wait_for "10 jobs, their PodGroups and 16 pods Running" 120 all_running
settle "$after"

check_budget "$before" "$after" "$BUDGET_FILE" "$jobs" job - leases,pods/status "8 one-pod jobs and 2 4-pod gangs"

# The 20-pod gangs, one at a time, per pod. pods/status is counted here.
GANG_BUDGET=$(dirname "$0")/request_budget_gang.txt
gang_running() { # job
  [[ $(kubectl -n "$ns" get podgroup -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name=='$1')]}{.status.phase}/{.status.running}{end}") == Running/20 &&
    $(kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l) == 20 ]]
}
api_metrics "$before"
job_yaml gang20-fits 20 | kubectl apply -f - >/dev/null
wait_for "gang20-fits: PodGroup and 20 pods Running" 120 gang_running gang20-fits
settle "$after"
check_budget "$before" "$after" "$GANG_BUDGET" 20 pod fits leases "a 20-pod gang that fits"

label=basalt.dev/request-budget
node=$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')
unschedulable_pods() { # job -> pods with PodScheduled=False
  kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].status}{"\n"}{end}' | grep -c '^False$' || true
}
held_explained() { [[ $(unschedulable_pods gang20-held) == 20 ]]; }
api_metrics "$before"
job_yaml gang20-held 20 "$label" | kubectl apply -f - >/dev/null
wait_for "gang20-held: 20 pods with PodScheduled=False" 120 held_explained
sleep 4 # a few more cycles (1 s period) that find the same gang unschedulable again
kubectl label node "$node" "$label=placed-here" >/dev/null
wait_for "gang20-held: PodGroup and 20 pods Running once $node is labelled" 120 gang_running gang20-held
settle "$after"
kubectl label node "$node" "$label-" >/dev/null
check_budget "$before" "$after" "$GANG_BUDGET" 20 pod held leases \
  "a 20-pod gang held by its node selector, then placed"

# Leave no terminating namespace behind: the next suite on this cluster starts controllers that
# act on every namespace (leaderelection/ha counts their 403s from one).
kubectl delete vcjob -n "$ns" --all --wait=false >/dev/null 2>&1 || true
kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
ns_gone() { ! kubectl get namespace "$ns" >/dev/null 2>&1; }
wait_for "namespace $ns gone" 120 ns_gone
