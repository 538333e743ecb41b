#!/usr/bin/env bash
# The Helm chart (manifests/helm/basalt): lint, generated files up to date, values reach the
# right objects, bad values are refused, the rendering passes a server-side dry run, and a real
# `helm install` / `helm uninstall` leaves nothing of the release behind.
source "$(dirname "$0")/../lib/testlib.sh"
CHART=$BASALT_REPO_ROOT/manifests/helm/basalt

# The pinned helm, built from its Go module and cached like the cluster's binaries.
"$BASALT_REPO_ROOT/e2e/cluster/build.sh" --with-helm
# shellcheck source=../cluster/lib.sh
HELM=$(source "$BASALT_REPO_ROOT/e2e/cluster/lib.sh" && find_bin helm "$HELM_VERSION" helm) ||
  { fail "no helm binary after e2e/cluster/build.sh --with-helm"; exit 1; }
KUBE_VERSION=$(kubectl version -o json | jq -r .serverVersion.gitVersion)
tmp=$(mktemp -d)

render() { "$HELM" template basalt "$CHART" --kube-version "$KUBE_VERSION" "$@"; }
# json_of RENDERED_YAML: the objects as a JSON array.
json_of() { yq -c -s 'map(select(. != null))' <<<"$1"; }

# ---- lint and generated files -----------------------------------------------------------
if out=$("$HELM" lint --strict "$CHART" --kube-version "$KUBE_VERSION" 2>&1); then pass "helm lint --strict"
else fail "helm lint --strict: $out"; fi
if out=$(BASALT_HELM=$HELM "$BASALT_REPO_ROOT/hack/update-manifests.sh" --check 2>&1); then
  pass "manifests/base and the chart's crds/ are generated from the chart (hack/update-manifests.sh --check)"
else fail "generated files out of date: $out"; fi

# ---- defaults ---------------------------------------------------------------------------
d=$(json_of "$(render -n volcano-system)")
expect_eq "objects rendered with default values" \
  "$(jq -r 'map(.kind) | sort | unique | join(" ")' <<<"$d")" \
  "ClusterRole ClusterRoleBinding ConfigMap Deployment MutatingWebhookConfiguration Role RoleBinding Service ServiceAccount ValidatingWebhookConfiguration"
expect_eq "image of vc-scheduler by default (the chart's appVersion)" \
  "$(jq -r '.[] | select(.kind == "Deployment" and .metadata.name == "volcano-scheduler") | .spec.template.spec.containers[0].image' <<<"$d")" \
  "basalt/vc-scheduler:$("$HELM" show chart "$CHART" | sed -n 's/^appVersion: "*\([^"]*\)"*$/\1/p')"
expect_contains "vc-webhook-manager's args by default" \
  "$(jq -c '.[] | select(.metadata.name == "volcano-admission" and .kind == "Deployment") | .spec.template.spec.containers[0].args' <<<"$d")" \
  '"--cert-secret=volcano-system/volcano-admission-secret"'

# ---- overrides --------------------------------------------------------------------------
o=$(json_of "$(render -n batch-system --set image.tag=v9.8.7 --set scheduler.replicas=2 --set controllers.logVerbosity=5 \
  --set image.registry=registry.example.com --set admission.certificates.mode=provided \
  --set admission.certificates.secretName=my-webhook-tls --set admission.webhooks.failurePolicy=Ignore \
  --set createDefaultQueue=false --set admission.maxJobPods=500 --set 'imagePullSecrets[0].name=regcred')")
dep() { jq -c --arg n "$1" '.[] | select(.kind == "Deployment" and .metadata.name == $n)' <<<"$o"; }
expect_eq "images with image.registry and image.tag" \
  "$(jq -r '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].image] | sort | join(" ")' <<<"$o")" \
  "registry.example.com/basalt/vc-controller-manager:v9.8.7 registry.example.com/basalt/vc-scheduler:v9.8.7 registry.example.com/basalt/vc-webhook-manager:v9.8.7"
expect_eq "replicas (scheduler 2, the others 1)" \
  "$(jq -r '[.[] | select(.kind == "Deployment") | "\(.metadata.name)=\(.spec.replicas)"] | sort | join(" ")' <<<"$o")" \
  "volcano-admission=1 volcano-controllers=1 volcano-scheduler=2"
expect_eq "verbosity flags (controllers 5)" \
  "$(jq -r '[.[] | select(.kind == "Deployment") | "\(.metadata.name)\(.spec.template.spec.containers[0].args[] | select(startswith("-v=")))"] | sort | join(" ")' <<<"$o")" \
  "volcano-admission-v=2 volcano-controllers-v=5 volcano-scheduler-v=2"
expect_eq "imagePullSecrets on every Deployment" \
  "$(jq -r '[.[] | select(.kind == "Deployment") | .spec.template.spec.imagePullSecrets[0].name] | join(" ")' <<<"$o")" "regcred regcred regcred"
adm=$(dep volcano-admission)
expect_eq "certificate flags in mode provided" \
  "$(jq -r '[.spec.template.spec.containers[0].args[] | select(test("^--(cert-secret|tls-cert-file|tls-private-key-file|ca-cert-file|create-default-queue)"))] | join(" ")' <<<"$adm")" \
  "--tls-cert-file=/etc/basalt/webhook-certs/tls.crt --tls-private-key-file=/etc/basalt/webhook-certs/tls.key --ca-cert-file=/etc/basalt/webhook-certs/ca.crt --create-default-queue=false"
expect_eq "admission.maxJobPods" \
  "$(jq -r '.spec.template.spec.containers[0].args[] | select(startswith("--max-job-pods="))' <<<"$adm")" "--max-job-pods=500"
expect_eq "the provided Secret is mounted where the flags point" \
  "$(jq -r '[.spec.template.spec.volumes[] | select(.name == "webhook-certs") | .secret.secretName] + [.spec.template.spec.containers[0].volumeMounts[] | select(.name == "webhook-certs") | .mountPath] | join(" ")' <<<"$adm")" \
  "my-webhook-tls /etc/basalt/webhook-certs"
expect_eq "no rule on Secrets for the webhook in mode provided" \
  "$(jq -r '[.[] | select(.kind == "Role" or (.kind == "ClusterRole" and .metadata.name == "basalt:admission")) | .rules[] | select(.resources | index("secrets"))] | length' <<<"$o")" "0"
expect_eq "Roles in mode provided (the Leases only)" \
  "$(jq -r '[.[] | select(.kind == "Role") | .metadata.name] | sort | join(" ")' <<<"$o")" \
  "basalt:controllers-leader-election basalt:scheduler-leader-election"
expect_eq "--create-default-queue=false in vc-controller-manager too" \
  "$(dep volcano-controllers | jq -r '[.spec.template.spec.containers[0].args[] | select(startswith("--create-default-queue"))] | join(" ")')" \
  "--create-default-queue=false"
# The Deployments' args are flags our binaries accept: each binary, run with its container's
# args, gets past flag parsing and validation to the API client (exit 2 and the usage text would
# mean an unknown or invalid flag).
expect_args_accepted() { # WHAT RENDERED_JSON
  local what=$1 row image args bin out rc
  while read -r row; do
    image=$(jq -r .image <<<"$row")
    image=${image%:*}
    case ${image##*/} in
      vc-scheduler) bin=$BASALT_BUILD_DIR/scheduler/vc-scheduler ;;
      vc-controller-manager) bin=$BASALT_BUILD_DIR/controllers/vc-controller-manager ;;
      vc-webhook-manager) bin=$BASALT_BUILD_DIR/webhook/vc-webhook-manager ;;
      *) fail "$what: no binary for image $image"; continue ;;
    esac
    mapfile -t args < <(jq -r '.args[]' <<<"$row")
    rc=0; out=$(timeout 20 "$bin" "${args[@]}" --kubeconfig=/nonexistent 2>&1) || rc=$?
    if ((rc == 1)) && [[ $out == *"Cannot configure the API client"* ]]; then
      pass "$what: ${image##*/} accepts its args"
    else
      fail "$what: ${image##*/} with its args exited $rc: $(tail -n 3 <<<"$out")"
    fi
  done < <(jq -c '.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0] | {image, args}' <<<"$2")
}
expect_args_accepted "default values" "$d"
expect_args_accepted "overrides (provided certificates, no default queue, -v=5)" "$o"

# The release namespace everywhere the base said volcano-system.
expect_eq "objects still naming volcano-system" "$(grep -c volcano-system <<<"$o" || true)" "0"
expect_eq "namespaces of the namespaced objects" \
  "$(jq -r '[.[] | .metadata.namespace // empty] | unique | join(" ")' <<<"$o")" "batch-system"
expect_eq "RBAC subjects' namespace" \
  "$(jq -r '[.[] | .subjects[]?.namespace] | unique | join(" ")' <<<"$o")" "batch-system"
expect_eq "webhook clientConfig.service.namespace" \
  "$(jq -r '[.[] | .webhooks[]?.clientConfig.service.namespace] | unique | join(" ")' <<<"$o")" "batch-system"
expect_eq "namespaces the webhooks exclude" \
  "$(jq -r '[.[] | .webhooks[]? | .namespaceSelector.matchExpressions[]? | .values | join(",")] | unique | join(" ")' <<<"$o")" \
  "batch-system,kube-system,kube-public,kube-node-lease"
expect_eq "failurePolicy of the webhooks" \
  "$(jq -r '[.[] | .webhooks[]?.failurePolicy] | unique | join(" ")' <<<"$o")" "Ignore"
expect_contains "vc-webhook-manager's --service-namespace and leader election namespaces" \
  "$(jq -c '[.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args[] | select(test("namespace"))]' <<<"$o")" \
  '"--service-namespace=batch-system"'

# RBAC names what the other templates name: the webhook may write only the configurations the
# chart renders (with the suffix), each component only the Lease its args name, the webhook only
# the Secret it is told to keep its certificate in.
r=$(json_of "$(render -n batch-system --set clusterResourceSuffix=-two --set 'controllers.controllers={queue,job}' \
  --set admission.certificates.secretName=my-cert)")
expect_eq "resourceNames of the webhook's writable configurations = the configurations rendered" \
  "$(jq -r '[.[] | select(.kind == "ClusterRole" and .metadata.name == "basalt:admission-two") | .rules[] | select(.resourceNames) | .resourceNames[]] | sort | join(" ")' <<<"$r")" \
  "$(jq -r '[.[] | select(.kind | endswith("WebhookConfiguration")) | .metadata.name] | sort | join(" ")' <<<"$r")"
for c in scheduler controllers; do
  expect_eq "the $c Lease its Role allows = the Lease its args name" \
    "$(jq -r --arg n "basalt:$c-leader-election" '.[] | select(.kind == "Role" and .metadata.name == $n) | .rules[] | select(.resourceNames) | "\(.resourceNames | join(",")) in \(.apiGroups[0])/\(.resources[0])"' <<<"$r")" \
    "$(jq -r --arg d "volcano-$c" '.[] | select(.kind == "Deployment" and .metadata.name == $d) | .spec.template.spec.containers[0].args[] | select(startswith("--leader-elect-resource-name=")) | ltrimstr("--leader-elect-resource-name=")' <<<"$r") in coordination.k8s.io/leases"
done
expect_eq "the controllers' Lease for --controllers=queue,job (the binary's own default name)" \
  "$(jq -r '.[] | select(.kind == "Deployment" and .metadata.name == "volcano-controllers") | .spec.template.spec.containers[0].args[] | select(startswith("--leader-elect-resource-name="))' <<<"$r")" \
  "--leader-elect-resource-name=vc-controller-manager-job-queue"
expect_eq "the webhook's Secret by name" \
  "$(jq -r '.[] | select(.kind == "Role" and .metadata.name == "basalt:admission-certs") | .rules[] | select(.resourceNames) | .resourceNames | join(",")' <<<"$r")" "my-cert"
expect_eq "no Lease rule without leader election" \
  "$(render -n batch-system --set leaderElection.enabled=false | grep -c 'leases' || true)" "0"

# cert-manager: a Certificate for the Service's DNS names, writing the mounted Secret.
c=$(json_of "$(render -n batch-system --set admission.certificates.mode=certManager \
  --set admission.certificates.certManager.issuerRef.name=basalt-ca --set admission.certificates.certManager.issuerRef.kind=ClusterIssuer)")
expect_eq "cert-manager Certificate (secret, issuer, DNS names)" \
  "$(jq -r '.[] | select(.kind == "Certificate") | "\(.spec.secretName) \(.spec.issuerRef.kind)/\(.spec.issuerRef.name) \(.spec.dnsNames | join(","))"' <<<"$c")" \
  "volcano-admission-secret ClusterIssuer/basalt-ca volcano-admission-service,volcano-admission-service.batch-system,volcano-admission-service.batch-system.svc,volcano-admission-service.batch-system.svc.cluster.local"

# ---- scheduler.preemption: reclaim and preempt join the actions ---------------------------
sched_actions() { render "$@" | yq -r 'select(.kind == "ConfigMap" and .metadata.name == "volcano-scheduler-configmap") | .data["volcano-scheduler.conf"]' | grep '^actions:'; }
expect_eq "default actions" "$(sched_actions)" 'actions: "enqueue, allocate, backfill"'
expect_eq "scheduler.preemption=true" "$(sched_actions --set scheduler.preemption=true)" \
  'actions: "enqueue, allocate, backfill, reclaim, preempt"'
printf 'scheduler:\n  preemption: true\n  config: |\n    actions: "enqueue, allocate, preempt"\n    tiers:\n    - plugins:\n      - name: priority\n' >"$tmp/preempt-values.yaml"
expect_eq "scheduler.preemption with a config naming preempt" \
  "$(sched_actions -f "$tmp/preempt-values.yaml")" 'actions: "enqueue, allocate, preempt"'

# ---- bad values -------------------------------------------------------------------------
bad() { # WHAT EXPECTED_MESSAGE ARGS...
  local what=$1 want=$2 out; shift 2
  if out=$(render "$@" 2>&1); then fail "$what: helm template accepted it"; else expect_contains "$what refused" "$out" "$want"; fi
}
bad "an unknown certificate mode" "at '/admission/certificates/mode': value must be one of 'generate', 'provided', 'certManager'" \
  --set admission.certificates.mode=selfsigned
bad "replicas as a string" "at '/scheduler/replicas': got string, want integer" --set-string scheduler.replicas=two
printf 'controllers:\n  workerThreads: "8"\n' >"$tmp/bad-values.yaml"
bad "a values file with a wrong type" "at '/controllers/workerThreads': got string, want integer" -f "$tmp/bad-values.yaml"
bad "a misspelt key" "additional properties 'replica' not allowed" --set admission.replica=2
bad "certManager without an issuer" "needs admission.certificates.certManager.issuerRef.name" --set admission.certificates.mode=certManager

# ---- server-side dry run ----------------------------------------------------------------
kubectl apply --server-side --force-conflicts -f "$CHART/crds" >/dev/null
kubectl wait --for condition=established --timeout=60s -f "$CHART/crds" >/dev/null
ns=$(new_namespace helm)
for mode in generate provided; do
  if out=$(render -n "$ns" --set admission.certificates.mode=$mode --set scheduler.replicas=2 |
    kubectl apply --dry-run=server -f - 2>&1); then
    pass "server-side dry run of the chart (certificates $mode, namespace $ns)"
  else fail "server-side dry run (certificates $mode): $out"; fi
done

# ---- helm install / uninstall -----------------------------------------------------------
# The webhook configurations fail closed and no pod serves them here (no kubelet runs the
# Deployments), so while they exist Basalt objects cluster-wide would be refused: the
# release gets its own cluster-scoped names (clusterResourceSuffix), and it is uninstalled and
# its webhook configurations deleted on every way out of this test.
release=basalt-e2e
suffix="-$ns"
cleanup() {
  "$HELM" uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  kubectl delete mutatingwebhookconfiguration "volcano-admission-service-mutate$suffix" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete validatingwebhookconfiguration "volcano-admission-service-validate$suffix" --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap 'rc=$?; cleanup; (exit $rc); e2e_finish' EXIT

t0=$SECONDS
if out=$("$HELM" install "$release" "$CHART" -n "$ns" --set clusterResourceSuffix="$suffix" 2>&1); then
  pass "helm install into $ns"
else fail "helm install: $out"; fi
expect_contains "NOTES after install" "$out" "kubectl -n $ns wait --for=condition=Available deployment -l app.kubernetes.io/instance=$release"
expect_eq "helm status" "$("$HELM" status "$release" -n "$ns" -o json | jq -r .info.status)" "deployed"
owned="deployments,services,configmaps,serviceaccounts,roles,rolebindings"
expect_eq "namespaced objects of the release" \
  "$(kubectl get "$owned" -n "$ns" -l app.kubernetes.io/instance="$release" -o name | sort | tr '\n' ' ')" \
  "configmap/volcano-scheduler-configmap deployment.apps/volcano-admission deployment.apps/volcano-controllers deployment.apps/volcano-scheduler role.rbac.authorization.k8s.io/basalt:admission-certs role.rbac.authorization.k8s.io/basalt:controllers-leader-election role.rbac.authorization.k8s.io/basalt:scheduler-leader-election rolebinding.rbac.authorization.k8s.io/basalt:admission-certs rolebinding.rbac.authorization.k8s.io/basalt:controllers-leader-election rolebinding.rbac.authorization.k8s.io/basalt:scheduler-leader-election service/volcano-admission-service serviceaccount/volcano-admission serviceaccount/volcano-controllers serviceaccount/volcano-scheduler "
cluster_scoped() {
  kubectl get clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations \
    -l app.kubernetes.io/instance="$release" -o name | grep -F -- "$suffix" | sort | tr '\n' ' ' || true
}
expect_eq "cluster-scoped objects of the release" "$(cluster_scoped)" \
  "clusterrole.rbac.authorization.k8s.io/basalt:admission$suffix clusterrole.rbac.authorization.k8s.io/basalt:controllers$suffix clusterrole.rbac.authorization.k8s.io/basalt:scheduler$suffix clusterrolebinding.rbac.authorization.k8s.io/basalt:admission$suffix clusterrolebinding.rbac.authorization.k8s.io/basalt:controllers$suffix clusterrolebinding.rbac.authorization.k8s.io/basalt:scheduler$suffix mutatingwebhookconfiguration.admissionregistration.k8s.io/volcano-admission-service-mutate$suffix validatingwebhookconfiguration.admissionregistration.k8s.io/volcano-admission-service-validate$suffix "
expect_eq "the installed service account's permissions (create pods/binding as the scheduler)" \
  "$(kubectl auth can-i create pods --subresource=binding --as="system:serviceaccount:$ns:volcano-scheduler" -A 2>/dev/null || true)" "yes"

if out=$("$HELM" uninstall "$release" -n "$ns" --wait --timeout 60s 2>&1); then pass "helm uninstall"
else fail "helm uninstall: $out"; fi
kubectl delete mutatingwebhookconfiguration "volcano-admission-service-mutate$suffix" --ignore-not-found >/dev/null
kubectl delete validatingwebhookconfiguration "volcano-admission-service-validate$suffix" --ignore-not-found >/dev/null
e2e_log "install to uninstall: $((SECONDS - t0))s with the webhook configurations in place"
expect_eq "cluster-scoped objects left after uninstall" "$(cluster_scoped)" ""
nothing_left() { [[ -z $(kubectl get "$owned,replicasets,pods,secrets" -n "$ns" -l app.kubernetes.io/instance="$release" -o name) ]]; }
wait_for "no object of the release left in $ns (pods and ReplicaSets garbage-collected)" 60 nothing_left
expect_eq "helm's release records left" "$(kubectl get secrets -n "$ns" -l owner=helm -o name)" ""
# Helm never deletes CRDs it installed from crds/ (nor, so, any Job, Queue or PodGroup).
expect_eq "CRDs kept by Helm by design" \
  "$(kubectl get crd jobs.batch.volcano.sh queues.scheduling.volcano.sh -o name | wc -l | tr -d ' ')" "2"
