#!/usr/bin/env bash
# PodGroup status on Volcano's own CRDs (issue 11, defect 7). Users migrating from Volcano keep its
# CRDs, whose PodGroup has no status subresource (Volcano writes PodGroup status with a plain
# update). In a cluster of its own (the shared test cluster keeps Basalt's CRDs), with Volcano's
# PodGroup and Queue CRDs, vc-scheduler finds that out at start-up, binds a gang, and the
# PodGroup's phase becomes Running; no status write is dropped.
#
# Volcano's CRDs come from $BASALT_VOLCANO_CRDS (default: the benchmark peers in
# /work/shared/peers); where they are absent, Basalt's PodGroup CRD with its status subresource
# removed stands in (the property under test).
set -euo pipefail
REPO=${BASALT_REPO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
VOLCANO_CRDS=${BASALT_VOLCANO_CRDS:-/work/shared/peers/volcano-v1.15.1/crds}
STATE=$REPO/_output/e2e-volcano-crd-$$
# Checked before the cluster starts, so that a missing binary cannot leave a cluster behind.
if [[ ! -x ${BASALT_BUILD_DIR:-$REPO/_output/build}/scheduler/vc-scheduler ]]; then
  echo "volcano_crd: FAIL: vc-scheduler not built (ninja vc-scheduler)" >&2
  exit 1
fi
mkdir -p "$STATE"
if ! "$REPO/e2e/cluster/up.sh" --state-dir "$STATE" --nodes 2 --racks 1 >"$STATE/up.log" 2>&1; then
  tail -n 30 "$STATE/up.log" >&2
  echo "volcano_crd: FAIL: the test's own cluster did not start" >&2
  "$REPO/e2e/cluster/down.sh" --state-dir "$STATE" --purge --quiet || true
  exit 1
fi
export KUBECONFIG=$STATE/kubeconfig BASALT_TEST_CLUSTER_DIR=$STATE
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
crd_cleanup() {
  local rc=$?
  if [[ -n $SCHED_PID ]]; then
    kill -KILL "$SCHED_PID" 2>/dev/null || true
    wait "$SCHED_PID" 2>/dev/null || true
  fi
  if ((E2E_FAILS > 0)) && [[ -n $SCHED_LOG && -f $SCHED_LOG ]]; then
    echo "---- last lines of $SCHED_LOG ----" >&2
    tail -n 40 "$SCHED_LOG" >&2
  fi
  "$REPO/e2e/cluster/down.sh" --state-dir "$STATE" --quiet || true
  ((E2E_FAILS > 0)) || rm -rf "$STATE"
  trap - EXIT
  echo "volcano_crd: $E2E_PASSES passed, $E2E_FAILS failed"
  ((E2E_FAILS == 0 && rc == 0)) || exit 1
  exit 0
}
trap crd_cleanup EXIT

if [[ -f $VOLCANO_CRDS/scheduling.volcano.sh_podgroups.yaml ]]; then
  e2e_log "using Volcano's CRDs from $VOLCANO_CRDS"
  kubectl apply --server-side -f "$VOLCANO_CRDS/scheduling.volcano.sh_podgroups.yaml" \
    -f "$VOLCANO_CRDS/scheduling.volcano.sh_queues.yaml" >/dev/null
else
  e2e_log "no Volcano CRDs in $VOLCANO_CRDS: Basalt's PodGroup CRD without its status subresource"
  sed '/^ *subresources:/,/^ *status: {}/d' "$REPO/crds/scheduling.volcano.sh_podgroups.yaml" |
    kubectl apply --server-side -f - >/dev/null
  kubectl apply --server-side -f "$REPO/crds/scheduling.volcano.sh_queues.yaml" >/dev/null
fi
# Retried: right after a create, kubectl wait can fail on a CRD with no status yet
# (".status.conditions accessor error: <nil>") instead of waiting.
for _ in $(seq 1 30); do
  kubectl wait --for=condition=Established --timeout=60s \
    crd/queues.scheduling.volcano.sh crd/podgroups.scheduling.volcano.sh >/dev/null 2>&1 && break
  sleep 1
done
served=$(kubectl get --raw /apis/scheduling.volcano.sh/v1beta1 | jq -r '[.resources[].name] | join(" ")')
e2e_log "served: $served"
if [[ " $served " == *" podgroups/status "* ]]; then
  fail "the PodGroup CRD under test serves podgroups/status"
else
  pass "the PodGroup CRD under test has no status subresource"
fi

ns=$(new_namespace sched-volcano-crd)
make_queue vq 1
start_scheduler
wait_for "vc-scheduler found out how to write PodGroup status" 10 grep -q "no status subresource" "$SCHED_LOG"
expect_eq "basalt_scheduler_podgroup_status_subresource" "$(sched_metric basalt_scheduler_podgroup_status_subresource)" "0"

make_gang "$ns" g 2 1 vq
wait_for "gang g bound" 30 bound_is "$ns" 2 g
wait_for "PodGroup g phase Running" 20 pg_phase_is "$ns" g Running
# Running comes with the binds (as in Volcano); the running count once KWOK reports the pods.
running_is_2() { [[ $(kubectl -n "$ns" get podgroup g -o jsonpath='{.status.running}') == 2 ]]; }
wait_for "PodGroup g status.running 2" 20 running_is_2
scheduled=$(kubectl -n "$ns" get podgroup g -o jsonpath='{.status.conditions[?(@.type=="Scheduled")].status}')
expect_eq "PodGroup g Scheduled condition" "$scheduled" "True"
dropped=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '$1 ~ /^basalt_scheduler_status_writes_dropped_total/ {s += $2} END {print s + 0}')
expect_eq "status writes dropped" "$dropped" "0"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
