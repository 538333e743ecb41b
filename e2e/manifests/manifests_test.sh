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
expect_can volcano-scheduler patch podgroups.scheduling.volcano.sh/status
expect_cannot volcano-scheduler update podgroups.scheduling.volcano.sh/status # it sends patches only
expect_can volcano-scheduler list nodes
expect_can volcano-scheduler create events
expect_cannot volcano-scheduler create pods
expect_can volcano-controllers create pods
expect_can volcano-controllers create podgroups.scheduling.volcano.sh
expect_can volcano-controllers update jobs.batch.volcano.sh/status
expect_can volcano-controllers delete commands.bus.volcano.sh
expect_can volcano-controllers create secrets
expect_cannot volcano-controllers list secrets
expect_cannot volcano-controllers get secrets
expect_cannot volcano-controllers create pods/binding
expect_can volcano-scheduler create queues.scheduling.volcano.sh
expect_cannot volcano-scheduler create pods/eviction
expect_cannot volcano-scheduler list persistentvolumes
expect_can volcano-admission list queues.scheduling.volcano.sh
expect_can volcano-admission list namespaces
expect_cannot volcano-admission delete queues.scheduling.volcano.sh
expect_cannot volcano-admission update validatingwebhookconfigurations.admissionregistration.k8s.io

# By name and namespace: the webhook's own configurations and Secret, each component's Lease in
# volcano-system only.
can_in() { # service-account namespace verb resource/name
  kubectl auth can-i "$3" "$4" -n "$2" --as="system:serviceaccount:volcano-system:$1" 2>/dev/null
}
expect_can_in() { [[ $(can_in "$@") == yes ]] && pass "$1 can $3 $4 in $2" || fail "$1 cannot $3 $4 in $2"; }
expect_cannot_in() { [[ $(can_in "$@") == no ]] && pass "$1 cannot $3 $4 in $2" || fail "$1 unexpectedly can $3 $4 in $2"; }
expect_can_in volcano-admission default update validatingwebhookconfigurations.admissionregistration.k8s.io/volcano-admission-service-validate
expect_cannot_in volcano-admission default update validatingwebhookconfigurations.admissionregistration.k8s.io/another
expect_can_in volcano-admission volcano-system get secrets/volcano-admission-secret
expect_cannot_in volcano-admission volcano-system get secrets/another
expect_cannot_in volcano-admission default create secrets
expect_can_in volcano-scheduler volcano-system update leases.coordination.k8s.io/volcano
expect_cannot_in volcano-scheduler volcano-system update leases.coordination.k8s.io/vc-controller-manager-cronjob-gc-job-podgroup-queue
expect_cannot_in volcano-scheduler default create leases.coordination.k8s.io
expect_can_in volcano-controllers volcano-system update leases.coordination.k8s.io/vc-controller-manager-cronjob-gc-job-podgroup-queue
expect_cannot_in volcano-controllers kube-system get leases.coordination.k8s.io/vc-controller-manager-cronjob-gc-job-podgroup-queue

# The shipped webhook configurations (as the API server stores them, after its own validation
# of the CEL matchConditions and selectors): fail closed for Basalt's objects, never in the way
# of anything else.
hooks=$(kubectl apply --dry-run=server -o json -f "$M/webhooks.yaml" | jq -c '[.items[] | .webhooks[]]')
expect_eq "webhooks shipped" "$(jq -r 'map(.name) | sort | join(" ")' <<<"$hooks")" \
  "mutatejob.volcano.sh mutatepodgroup.volcano.sh mutatequeue.volcano.sh validatecronjob.volcano.sh validatejob.volcano.sh validatejobflow.volcano.sh validatepod.volcano.sh validatepodgroup.volcano.sh validatequeue.volcano.sh"
expect_eq "webhooks without failurePolicy Fail" "$(jq -r 'map(select(.failurePolicy != "Fail") | .name) | join(" ")' <<<"$hooks")" ""
expect_eq "webhooks without sideEffects None" "$(jq -r 'map(select(.sideEffects != "None") | .name) | join(" ")' <<<"$hooks")" ""
expect_eq "webhooks whose timeoutSeconds is not 10 (twice the default --request-timeout)" \
  "$(jq -r 'map(select(.timeoutSeconds != 10) | .name) | join(" ")' <<<"$hooks")" ""
expect_eq "webhooks not on AdmissionReview v1" \
  "$(jq -r 'map(select(.admissionReviewVersions != ["v1"]) | .name) | join(" ")' <<<"$hooks")" ""
# Every webhook on a namespaced resource leaves the control-plane namespaces alone.
expect_eq "namespaced webhooks that may see a control-plane namespace (kube-system, kube-public, kube-node-lease, volcano-system)" \
  "$(jq -r 'map(select(any(.rules[].resources[]; . != "queues")) |
      select([.namespaceSelector.matchExpressions[]? | select(.key == "kubernetes.io/metadata.name" and .operator == "NotIn") | .values[]]
        | (index("kube-system") == null or index("kube-public") == null or index("kube-node-lease") == null
           or index("volcano-system") == null)) | .name) | join(" ")' <<<"$hooks")" ""
# Only Basalt's resources, and pods only through the schedulerName condition.
expect_eq "resources the webhooks match" \
  "$(jq -r '[.[].rules[] | (.apiGroups[0] + "/" + .resources[])] | unique | join(" ")' <<<"$hooks")" \
  "/pods batch.volcano.sh/cronjobs batch.volcano.sh/jobs flow.volcano.sh/jobflows scheduling.volcano.sh/podgroups scheduling.volcano.sh/queues"
expect_eq "pod webhooks without a schedulerName matchCondition" \
  "$(jq -r 'map(select(any(.rules[].resources[]; . == "pods")) |
      select([.matchConditions[]?.expression | select(test("schedulerName == .volcano."))] | length == 0) | .name) | join(" ")' <<<"$hooks")" ""
