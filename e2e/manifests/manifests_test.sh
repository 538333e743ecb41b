#!/usr/bin/env bash
# The shipped manifests are valid for the real API server, and the RBAC they grant lets each
# component do what it must (and not more than it should).
source "$(dirname "$0")/../lib/testlib.sh"
M=$BASALT_REPO_ROOT/manifests/base

kubectl apply --server-side --force-conflicts -f "$BASALT_REPO_ROOT/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s -f "$BASALT_REPO_ROOT/crds" >/dev/null
kubectl apply -f "$M/namespace.yaml" >/dev/null
out=$(kubectl apply -k "$M" --dry-run=server 2>&1) && pass "kubectl apply -k manifests/base --dry-run=server" ||
  fail "server-side dry run of manifests/base failed: $out"
kubectl apply -f "$M/rbac.yaml" >/dev/null

can() { # service-account verb resource[/subresource]
  local res=${3%%/*} sub=()
  [[ $3 == */* ]] && sub=(--subresource="${3#*/}")
  kubectl auth can-i "$2" "$res" "${sub[@]}" --as="system:serviceaccount:volcano-system:$1" -A 2>/dev/null
}
expect_can() { [[ $(can "$@") == yes ]] && pass "$1 can $2 $3" || fail "$1 cannot $2 $3"; }
expect_cannot() { [[ $(can "$@") == no ]] && pass "$1 cannot $2 $3" || fail "$1 unexpectedly can $2 $3"; }

expect_can volcano-scheduler create pods/binding
expect_can volcano-scheduler patch pods/status
expect_can volcano-scheduler update podgroups.scheduling.volcano.sh/status
expect_can volcano-scheduler list nodes
expect_can volcano-scheduler create events
expect_cannot volcano-scheduler create pods
expect_can volcano-controllers create pods
expect_can volcano-controllers create podgroups.scheduling.volcano.sh
expect_can volcano-controllers update jobs.batch.volcano.sh/status
expect_can volcano-controllers delete commands.bus.volcano.sh
expect_can volcano-controllers create secrets
expect_cannot volcano-controllers create pods/binding
expect_can volcano-admission list queues.scheduling.volcano.sh
expect_can volcano-admission patch validatingwebhookconfigurations.admissionregistration.k8s.io
expect_can volcano-admission list namespaces
expect_cannot volcano-admission delete queues.scheduling.volcano.sh
