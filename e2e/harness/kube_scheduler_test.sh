#!/usr/bin/env bash
# --with-kube-scheduler: a second, small cluster whose kube-scheduler places an ordinary pod on
# a KWOK node (mixed workloads and the benchmark peer need it). down.sh leaves nothing running.
source "$(dirname "$0")/../lib/testlib.sh"
state=$(mktemp -d)
trap '"$BASALT_REPO_ROOT/e2e/cluster/down.sh" --state-dir "$state" --quiet; rm -rf "$state"; e2e_finish' EXIT

"$BASALT_REPO_ROOT/e2e/cluster/up.sh" --state-dir "$state" --with-kube-scheduler --nodes 2 >/dev/null 2>&1 ||
  { fail "up.sh --with-kube-scheduler failed: $(tail -n 5 "$state"/logs/*.log 2>/dev/null)"; exit 1; }
export KUBECONFIG=$state/kubeconfig
kubectl run plain --image=busybox --restart=Never >/dev/null
node_of() { kubectl get pod plain -o jsonpath='{.spec.nodeName}'; }
running() { [[ $(kubectl get pod plain -o jsonpath='{.status.phase}') == Running ]]; }
wait_for "kube-scheduler binds a default-scheduler pod and it runs" 60 running
expect_contains "pod placed on a fake node" "$(node_of)" "gpu-node-"
"$BASALT_REPO_ROOT/e2e/cluster/down.sh" --state-dir "$state" --quiet
left=$(pgrep -f -- "$state" || true)
expect_eq "processes left after down.sh" "$left" ""
