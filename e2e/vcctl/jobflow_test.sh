#!/usr/bin/env bash
# vcctl jobtemplate / jobflow create, get, list, describe and delete against the real API server with the
# controllers, the scheduler and the webhook running (about 30 s): templates and a flow created
# from multi-document YAML files, Volcano's columns in get and list, -o yaml/json, a missing
# flow named by the server, a flow the webhook refuses printed with the webhook's message
# verbatim, and delete by name and by file.
source "$(dirname "$0")/../lib/testlib.sh"
source "$(dirname "$0")/lib.sh"

install_crds
cm_start
ns=$(new_namespace vcctl-flow)
scheduler_start "$ns"
vcctl_webhook_start
dir=$(mktemp -d)
on_exit() {
  local rc=$?
  set +e
  rm -rf "$dir"
  (exit "$rc")
  vcctl_on_exit
}
trap on_exit EXIT

template() { # NAME
  cat <<T
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata: {name: $1, namespace: $ns}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: main
    replicas: 1
    template:
      metadata: {annotations: {basalt.dev/run-for: "2s"}}
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox, resources: {requests: {cpu: 100m}}}]
T
}
{ template prep; echo "---"; template train; } >"$dir/templates.yaml"

# --- jobtemplate create / list / get ------------------------------------------------------------
run_vcctl jobtemplate create -f "$dir/templates.yaml"
expect_eq "jobtemplate create exit code" "$RC" 0
expect_eq "jobtemplate create output" "$OUT" "Created JobTemplate: $ns/prep
Created JobTemplate: $ns/train"
run_vcctl jobtemplate list -n "$ns"
expect_eq "jobtemplate list exit code" "$RC" 0
expect_eq "jobtemplate list header" "$(header_of "$OUT")" "Name Namespace"
expect_eq "jobtemplate list row prep" "$(row_of "$OUT" prep)" "prep $ns"
expect_eq "jobtemplate list row train" "$(row_of "$OUT" train)" "train $ns"
run_vcctl jobtemplate get -N train -n "$ns" -o yaml
expect_eq "jobtemplate get -o yaml exit code" "$RC" 0
expect_contains "jobtemplate get -o yaml kind" "$OUT" "kind: JobTemplate"
expect_contains "jobtemplate get -o yaml task" "$OUT" "  tasks:
  - maxRetry: 3
    name: main"
yaml_out=$OUT
run_vcctl jobtemplate get -N train -n "$ns" -o json
expect_eq "jobtemplate get: -o yaml reads back as -o json" \
  "$(python3 -c 'import json, sys, yaml; print(yaml.safe_load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' \
    <(printf '%s\n' "$yaml_out") <(printf '%s\n' "$OUT"))" "True"
run_vcctl jobtemplate create -f "$dir/templates.yaml"
expect_eq "jobtemplate create again exit code" "$RC" 6
expect_contains "jobtemplate create again names the object" "$ERR" \
  "create JobTemplate $ns/prep: Error from server (AlreadyExists): jobtemplates.flow.volcano.sh \"prep\" already exists"

# --- jobflow create / get / list ----------------------------------------------------------------
cat >"$dir/flow.yaml" <<F
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata: {name: pipeline, namespace: $ns}
spec:
  jobRetainPolicy: retain
  flows:
  - name: prep
  - name: train
    dependsOn: {targets: [prep]}
F
run_vcctl jobflow create -f "$dir/flow.yaml"
expect_eq "jobflow create exit code" "$RC" 0
expect_eq "jobflow create output" "$OUT" "Created JobFlow: $ns/pipeline"
flow_phase() { run_vcctl jobflow get -N pipeline -n "$ns"; [[ $(row_of "$OUT" pipeline | awk '{print $3}') == "$1" ]]; }
wait_for "vcctl jobflow get shows the flow Succeed" 60 flow_phase Succeed
expect_eq "jobflow get header" "$(header_of "$OUT")" "Name Namespace Phase Age"
run_vcctl jobflow list -n "$ns"
expect_eq "jobflow list header" "$(header_of "$OUT")" "Name Namespace Phase Age"
expect_eq "jobflow list row" "$(row_of "$OUT" pipeline | cut -d' ' -f1-3)" "pipeline $ns Succeed"
run_vcctl jobflow list --all-namespaces
expect_eq "jobflow list -A row" "$(row_of "$OUT" pipeline | cut -d' ' -f1-3)" "pipeline $ns Succeed"
run_vcctl jobflow get -N pipeline -n "$ns" -o json
expect_eq "jobflow get -o json completedJobs" \
  "$(jq -r '.status.completedJobs | sort | join(",")' <<<"$OUT")" "pipeline-prep,pipeline-train"

# --- describe: the whole object without managedFields, or every one of the namespace -----------
run_vcctl jobflow describe -N pipeline -n "$ns"
expect_eq "jobflow describe exit code" "$RC" 0
expect_contains "jobflow describe prints YAML with the kind" "$OUT" "apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow"
expect_contains "jobflow describe prints the spec" "$OUT" "  jobRetainPolicy: retain"
expect_contains "jobflow describe prints the status" "$OUT" "    phase: Succeed"
[[ $OUT != *managedFields* ]] && pass "jobflow describe leaves out managedFields" ||
  fail "jobflow describe printed managedFields"
run_vcctl jobtemplate describe -n "$ns" -o json
expect_eq "jobtemplate describe (all) exit code" "$RC" 0
expect_eq "jobtemplate describe: each template as JSON with its kind, Volcano's separator between" \
  "$(python3 -c 'import json, sys
parts = sys.stdin.read().split("\n---------------------------------\n")
print(" ".join(json.loads(p)["kind"] + "/" + json.loads(p)["metadata"]["name"] for p in parts))' <<<"$OUT")" \
  "JobTemplate/prep JobTemplate/train"
run_vcctl jobflow describe -N nope -n "$ns"
expect_eq "jobflow describe missing exit code" "$RC" 6
expect_eq "jobflow describe missing message" "$ERR" \
  "Error from server (NotFound): jobflows.flow.volcano.sh \"nope\" not found"

# --- errors: a missing flow, the webhook's denial, bad command lines ----------------------------
run_vcctl jobflow get -N nope -n "$ns"
expect_eq "jobflow get missing exit code" "$RC" 6
expect_eq "jobflow get missing message" "$ERR" \
  "Error from server (NotFound): jobflows.flow.volcano.sh \"nope\" not found"
cat >"$dir/bad.yaml" <<F
kind: JobFlow
metadata: {name: bad, namespace: $ns}
spec:
  flows:
  - {name: prep, dependsOn: {targets: [train]}}
  - {name: train, dependsOn: {targets: [prep]}}
F
run_vcctl jobflow create -f "$dir/bad.yaml"
expect_eq "denied jobflow exit code" "$RC" 6
expect_eq "denied jobflow: the webhook's message verbatim" "$ERR" \
  "create JobFlow $ns/bad: Error from server (Invalid): admission webhook \"validatejobflow.volcano.sh\" denied the request: spec.flows: Invalid value: jobflow flow is not dag: prep depends on itself through dependsOn.targets (prep -> train -> prep)"
expect_eq "denied jobflow not created" "$(kubectl -n "$ns" get jf bad -o name 2>/dev/null)" ""
run_vcctl jobflow delete -n "$ns"
expect_eq "jobflow delete without name exit code" "$RC" 2
expect_contains "jobflow delete without name message" "$ERR" \
  "jobflow name (--name/-N) or a file (--file/-f) must be specified"

# --- delete by file and by name -----------------------------------------------------------------
run_vcctl jobflow delete -f "$dir/flow.yaml"
expect_eq "jobflow delete -f exit code" "$RC" 0
expect_eq "jobflow delete -f output" "$OUT" "Deleted JobFlow: $ns/pipeline"
run_vcctl jobtemplate delete -N prep -n "$ns"
expect_eq "jobtemplate delete exit code" "$RC" 0
expect_eq "jobtemplate delete output" "$OUT" "Deleted JobTemplate: $ns/prep"
run_vcctl jobtemplate list -n "$ns"
expect_eq "jobtemplate list after delete" "$(row_of "$OUT" prep)" ""
expect_eq "jobtemplate list keeps train" "$(row_of "$OUT" train)" "train $ns"
run_vcctl jobtemplate delete -N prep -n "$ns"
expect_eq "jobtemplate delete again exit code" "$RC" 6
expect_eq "jobtemplate delete again message" "$ERR" \
  "Error from server (NotFound): jobtemplates.flow.volcano.sh \"prep\" not found"
run_vcctl jobtemplate delete -N train -n "$ns"
run_vcctl jobflow list -n "$ns"
expect_eq "jobflow list empty" "$OUT" "No resources found"
