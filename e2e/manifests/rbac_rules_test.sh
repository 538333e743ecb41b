#!/usr/bin/env bash
# Least privilege, read: the chart's RBAC (manifests/base/rbac.yaml, the chart with its
# default values) grants exactly what e2e/manifests/rbac-rules.yaml lists, and that list is
# exactly what the code of each component calls (rbac_rules.py says how it is derived). Then
# the check is shown to bite: a grant too many in the chart, a grant too few, a call in the code
# that the list lacks, a listed verb no code needs, a stale indirect entry and shared code run
# unannounced each fail it.
# Needs no cluster.
source "$(dirname "$0")/../lib/testlib.sh"
HERE=$BASALT_REPO_ROOT/e2e/manifests
TABLE=$HERE/rbac-rules.yaml
RBAC=$BASALT_REPO_ROOT/manifests/base/rbac.yaml
tmp=$(mktemp -d)
trap 'rc=$?; rm -rf "$tmp"; (exit $rc); e2e_finish' EXIT

check() { python3 "$HERE/rbac_rules.py" --repo "${REPO:-$BASALT_REPO_ROOT}" --table "${2:-$TABLE}" --rbac "${1:-$RBAC}" 2>&1; }

if out=$(check); then pass "manifests/base/rbac.yaml = rbac-rules.yaml = the code's calls: $(tail -n 1 <<<"$out")"
else fail "RBAC and code disagree:"$'\n'"$out"; fi

# expect_refused WHAT NEEDLE [RBAC] [TABLE]: the check fails, saying NEEDLE.
expect_refused() {
  local what=$1 needle=$2 out
  if out=$(check "${3:-}" "${4:-}"); then fail "$what: the check passed"
  else expect_contains "$what: the check fails" "$out" "$needle"; fi
}
# edit_yaml IN OUT PYTHON: loads every document of IN as `docs`, runs PYTHON, writes OUT.
edit_yaml() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys, yaml
src, dst, code = sys.argv[1:]
docs = list(yaml.safe_load_all(open(src)))
exec(code)
yaml.safe_dump_all(docs, open(dst, "w"), sort_keys=False)
PY
}
role() { echo "next(d for d in docs if d and d['kind'] == '$1' and d['metadata']['name'] == '$2')"; }

# A grant too many: list on Secrets for the controllers.
edit_yaml "$RBAC" "$tmp/extra.yaml" "$(role ClusterRole basalt:controllers)['rules'].append({'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['list']})"
expect_refused "the controllers may list Secrets" "the chart grants controllers: list core/secrets (cluster-wide)" "$tmp/extra.yaml"
# A grant too few: the scheduler's binding rule gone.
edit_yaml "$RBAC" "$tmp/fewer.yaml" "r = $(role ClusterRole basalt:scheduler); r['rules'] = [x for x in r['rules'] if x['resources'] != ['pods/binding']]"
expect_refused "no pods/binding for the scheduler" "the chart lacks scheduler: create core/pods/binding (cluster-wide)" "$tmp/fewer.yaml"
# Cluster-wide instead of in the release namespace.
edit_yaml "$RBAC" "$tmp/scope.yaml" "$(role ClusterRole basalt:scheduler)['rules'].append({'apiGroups': ['coordination.k8s.io'], 'resources': ['leases'], 'verbs': ['create']})"
expect_refused "Leases granted cluster-wide" "the chart grants scheduler: create coordination.k8s.io/leases (cluster-wide)" "$tmp/scope.yaml"
# Without the name restriction.
edit_yaml "$RBAC" "$tmp/names.yaml" "r = $(role ClusterRole basalt:admission); [x.pop('resourceNames') for x in r['rules'] if 'resourceNames' in x]"
expect_refused "webhook configurations writable by any name" "the chart grants webhook: update admissionregistration.k8s.io/mutatingwebhookconfigurations (cluster-wide)" "$tmp/names.yaml"
# The list grants a verb no code needs (and the chart with it).
edit_yaml "$TABLE" "$tmp/table-extra.yaml" "docs[0]['components']['scheduler']['rules'].append({'apiGroups': ['policy'], 'resources': ['poddisruptionbudgets'], 'verbs': ['list']})"
expect_refused "a listed verb no call needs" "scheduler: the table grants list policy/poddisruptionbudgets, which no call of its code needs" "" "$tmp/table-extra.yaml"
# A stale indirect entry.
edit_yaml "$TABLE" "$tmp/table-stale.yaml" "docs[0]['indirect'][0]['match'] = ['Create\\\\(no_such_ref']"
expect_refused "an indirect entry that matches no code" "match nothing (stale table entry)" "" "$tmp/table-stale.yaml"

# A call the list lacks: a copy of the code with one more call in vc-scheduler.
mkdir -p "$tmp/repo"
cp -r "$BASALT_REPO_ROOT"/{controllers,webhook,scheduler,common} "$tmp/repo/"
find "$tmp/repo" -type f ! -name '*.cc' ! -name '*.h' -delete
cat >>"$tmp/repo/scheduler/cache/evictor.cc" <<'CC'
namespace basalt::sched::cache {
void ListPdbs(client::Client* client_) { (void)client_->List(client::PodDisruptionBudgets(), ""); }
}  // namespace basalt::sched::cache
CC
REPO=$tmp/repo expect_refused "vc-scheduler lists PodDisruptionBudgets" \
  "scheduler needs list policy/poddisruptionbudgets (scheduler/cache/evictor.cc:"
# A call whose resource is a variable, claimed by no entry.
cat >>"$tmp/repo/controllers/gc/gc_controller.cc" <<'CC'
namespace basalt::controllers {
void Touch(client::Client& client, const client::ResourceRef& ref) { (void)client.Get(ref, "ns", "x"); }
}  // namespace basalt::controllers
CC
REPO=$tmp/repo expect_refused "an unclaimed call on a variable resource" \
  "controllers/gc/gc_controller.cc:"
# Shared code a component starts to run without the list saying so.
echo 'namespace basalt::webhook { basalt::ctrlkit::EventRecorder* recorder = nullptr; }' \
  >>"$tmp/repo/webhook/main.cc"
REPO=$tmp/repo expect_refused "the webhook records Events" "webhook: /EventRecorder/ appears in webhook/main.cc"
