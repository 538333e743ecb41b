#!/usr/bin/env bash
# basalt-sim and the real vc-scheduler place the same small workload the same way, given the
# same scheduler configuration file (issue 16: "the simulator's placement for a small workload
# equals what the real vc-scheduler does on the local cluster with the same configuration").
#
# Six KWOK nodes: three with 8 whole GPUs (nvidia.com/gpu) and three registering 4 vGPU-shared
# GPUs each the way Volcano's device plugin does (16000 MiB, 4 vGPUs per GPU). 31 tasks in 20
# jobs (whole-GPU tasks, vGPU tasks, gangs of both kinds, one vGPU gang with the spread policy),
# more than fits, so some stay pending. The configuration is fgd (with bestfit as the
# tie-breaker) and deviceshare with vGPU.
#   - basalt-sim replays the workload (YAML, one job per 10 virtual seconds, one cycle per job)
#     and prints its placements (task, node, vGPU device indices);
#   - the same PodGroups and pods go to the cluster one job at a time, each waited for until
#     every pod is bound or marked unschedulable, so the order is the simulator's;
#   - task -> node and, for vGPU pods, the GPUs named in volcano.sh/vgpu-ids-new (as indices of
#     the node's registration) must equal the simulator's, pending tasks included;
#   - the check has teeth: the simulator with another plugin configuration (bestfit instead of
#     fgd, deviceshare's spread device policy) gives a different placement list.
# Ties between equal nodes go to the first node by name in both (the session's node order).
# The scheduler starts only once the pool's nodes are Ready and untainted (a node is born with
# the not-ready taint; the simulator's nodes are usable from the start).
# fgd learns the task types from every pod in the snapshot, so the cluster must hold no other
# pods (checked first).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

SIM_BIN=${BASALT_BUILD_DIR:-$BASALT_REPO_ROOT/_output/build}/sim/basalt-sim
if [[ ! -x $SIM_BIN ]]; then
  fail "basalt-sim not built: $SIM_BIN (ninja basalt-sim)"
  exit 1
fi

others=$(kubectl get pods -A --no-headers 2>/dev/null | wc -l)
if [[ $others != 0 ]]; then
  fail "the cluster runs $others other pods; fgd would learn them too (the simulator does not see them)"
  exit 1
fi

apply_crds
ns=$(new_namespace sched-simag)
pool=sa$RANDOM
work=$(mktemp -d)
GPU_MEM=16000 GPU_SPLIT=4

# Jobs in submission order: name replicas kind per-task(cpuMilli memMiB) and
#   kind w: whole GPUs per task;  kind v: vGPU memory MiB, cores %, spread (0/1).
JOBS="
a   1 w 2000 8192  2
b   1 v 1000 4096  6000 30 0
c   1 w 4000 16384 4
d   2 w 2000 8192  4
e   1 v 1000 4096  4000 25 0
f   1 v 2000 4096  8000 50 0
g   1 w 1000 4096  1
h   3 v 1000 2048  5000 20 0
i   1 w 2000 8192  3
j   2 v 1000 2048  3000 10 1
k   1 v 1000 4096  10000 40 0
l   1 w 1000 4096  1
m   2 w 2000 8192  2
n   1 v 1000 4096  7000 30 0
o   1 w 4000 16384 8
p   2 v 1000 2048  6000 20 0
q   1 w 1000 4096  2
r   1 v 1000 4096  2000 10 0
s   4 w 2000 8192  2
t   3 v 1000 2048  4000 30 0
"

# The nodes, the simulator's workload and one manifest per job, from the table above.
python3 - "$work" "$pool" "$ns" "$GPU_MEM" "$GPU_SPLIT" <<PY
import sys, os
work, pool, ns, gpu_mem, split = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
jobs = [l.split() for l in """$JOBS""".strip().splitlines()]
os.makedirs(work + "/jobs", exist_ok=True)
w = ["nodes:"]
for i in range(3):
    w.append(f"- {{name: {pool}-w{i}, cpuMilli: 32000, memoryMiB: 262144, gpus: 8}}")
for i in range(3):
    w.append(f"- {{name: {pool}-v{i}, cpuMilli: 32000, memoryMiB: 262144, vgpus: 4, "
             f"vgpuShares: {split}, vgpuMemoryMiB: {gpu_mem}, vgpuType: NVIDIA-NVIDIA-A100}}")
w.append("jobs:")
for k, j in enumerate(jobs):
    name, replicas, kind, cpu, mem = j[0], int(j[1]), j[2], j[3], j[4]
    line = f"- {{name: \"{name}\", arrival: {10 * k}, replicas: {replicas}, minAvailable: {replicas}, cpuMilli: {cpu}, memoryMiB: {mem}"
    if kind == "w":
        line += f", gpus: {j[5]}"
        res = f'requests: {{cpu: {cpu}m, memory: {mem}Mi, nvidia.com/gpu: "{j[5]}"}}\n      limits: {{nvidia.com/gpu: "{j[5]}"}}'
        extra = ""
    else:
        line += f", vgpuNumber: 1, vgpuMemoryMiB: {j[5]}, vgpuCores: {j[6]}"
        if j[7] == "1":
            line += ", vgpuSpread: true"
        res = (f'requests: {{cpu: {cpu}m, memory: {mem}Mi}}\n      limits: {{volcano.sh/vgpu-number: "1", '
               f'volcano.sh/vgpu-memory: "{j[5]}", volcano.sh/vgpu-cores: "{j[6]}"}}')
        extra = ", volcano.sh/vgpu-podgroup-policy: spread" if j[7] == "1" else ""
    w.append(line + "}")
    docs = [f"""apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: "{name}"
  labels: {{volcano.sh/job-name: "{name}"}}
spec:
  minMember: {replicas}
  queue: default"""]
    for r in range(replicas):
        docs.append(f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}-task-{r}
  annotations: {{scheduling.k8s.io/group-name: "{name}"{extra}}}
  labels: {{volcano.sh/job-name: "{name}"}}
spec:
  schedulerName: volcano
  nodeSelector: {{basalt.dev/pool: {pool}}}
  containers:
  - name: main
    image: busybox
    resources:
      {res}""")
    open(f"{work}/jobs/{k:02d}-{name}.yaml", "w").write("\n---\n".join(docs) + "\n")
open(work + "/workload.yaml", "w").write("\n".join(w) + "\n")
PY

# conf DEVICE_POLICY SCORER...: the scheduler configuration (scorers appended to tier 2).
conf() {
  local policy=$1
  shift
  printf 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
  printf -- '- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n'
  printf '      deviceshare.VGPUEnable: true\n'
  [[ $policy != none ]] && printf '      deviceshare.SchedulePolicy: %s\n' "$policy"
  printf '%s\n' "$@"
}
conf none '  - name: fgd' '  - name: bestfit' '    arguments:' '      bestfit.weight: 0.01' >"$work/conf.yaml"
conf spread '  - name: bestfit' >"$work/other.yaml"

# sim_placements CONF OUT: "task node vgpus" for every task (pending: node "-").
sim_placements() {
  "$SIM_BIN" --workload "$work/workload.yaml" --scheduler-conf "$1" --period 10 --quiet \
    --placements "$work/sim.csv" >"$work/sim.out" || return 1
  python3 - "$work/workload.yaml" "$work/sim.csv" >"$2" <<'PY'
import csv, sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
got = {r["task"]: (r["node"], r["vgpus"] or "-") for r in csv.DictReader(open(sys.argv[2]))}
for j in w["jobs"]:
    for r in range(j["replicas"]):
        t = f'{j["name"]}-task-{r}'
        node, vg = got.get(t, ("-", "-"))
        print(t, node, vg)
PY
}

if sim_placements "$work/conf.yaml" "$work/sim.txt"; then
  pass "basalt-sim: $(cat "$work/sim.out")"
else
  fail "basalt-sim failed: $(cat "$work/sim.out")"
  exit 1
fi

for i in 0 1 2; do
  add_fake_node "$pool-w$i" 8 "basalt.dev/pool=$pool"
  reg=""
  for ((g = 0; g < 4; g++)); do reg+="GPU-$pool-v$i-$g,$GPU_SPLIT,$GPU_MEM,NVIDIA-NVIDIA-A100,true,hami-core:"; done
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $pool-v$i
  annotations:
    kwok.x-k8s.io/node: fake
    volcano.sh/node-vgpu-register: "$reg"
    volcano.sh/node-vgpu-handshake: "Reported $(date -u '+%Y-%m-%d %H:%M:%S')"
  labels: {type: kwok, kubernetes.io/hostname: $pool-v$i, basalt.dev/pool: $pool}
status:
  allocatable: &res
    cpu: "32"
    memory: 256Gi
    pods: "110"
    volcano.sh/vgpu-number: "$((4 * GPU_SPLIT))"
    volcano.sh/vgpu-memory: "$((4 * GPU_MEM))"
    volcano.sh/vgpu-cores: "400"
  capacity: *res
YAML
  CLUSTER_OBJECTS+=("node/$pool-v$i")
done
# A new node carries the node.kubernetes.io/not-ready:NoSchedule taint until KWOK reports it
# Ready and kube-controller-manager lifts the taint; on a freshly started cluster that can take
# seconds. A scheduler that starts meanwhile passes over the tainted node (the simulator's nodes
# are all usable from the start) and places differently, so the pool must be Ready and
# untainted first.
pool_ready() {
  local n
  n=$(kubectl get nodes -l "basalt.dev/pool=$pool" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' |
    grep -c '^True $' || true)
  ((n == 6))
}
# Twice, a second apart: a controller acting on a stale view of a node can still taint it just
# after it became Ready (and lift the taint again soon after).
pool_ready_steady() { pool_ready && sleep 1 && pool_ready; }
wait_for "the pool's 6 nodes Ready and untainted" 60 pool_ready_steady
start_scheduler --scheduler-conf="$work/conf.yaml"

# settled NS FILE: every pod of FILE is bound or marked unschedulable.
settled() {
  kubectl -n "$1" get -f "$2" -o json 2>/dev/null | python3 -c '
import json, sys
for o in json.load(sys.stdin)["items"]:
    if o["kind"] != "Pod":
        continue
    if o["spec"].get("nodeName"):
        continue
    conds = o.get("status", {}).get("conditions", [])
    if not any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conds):
        sys.exit(1)
'
}
for f in "$work"/jobs/*.yaml; do
  kubectl -n "$ns" apply -f "$f" >/dev/null
  wait_for "job $(basename "$f" .yaml) bound or unschedulable" 30 settled "$ns" "$f" || break
done
sleep 2 # a few more cycles: nothing pending may fit later

kubectl -n "$ns" get pods -o json | python3 -c '
import json, sys
pods = {p["metadata"]["name"]: p for p in json.load(sys.stdin)["items"]}
def key(n):
    job, _, r = n.rpartition("-task-")
    return job, int(r)
for name in sorted(pods, key=key):
    p = pods[name]
    node = p["spec"].get("nodeName") or "-"
    ids = p["metadata"].get("annotations", {}).get("volcano.sh/vgpu-ids-new", "")
    idx = [e.split(",")[0].rsplit("-", 1)[1] for c in ids.split(";") for e in c.split(":") if "," in e]
    print(name, node, "|".join(idx) or "-")
' >"$work/real.txt"
# Same order as the simulator's list (submission order, then task index).
python3 - "$work/sim.txt" "$work/real.txt" >"$work/real.sorted" <<'PY'
import sys
order = [l.split()[0] for l in open(sys.argv[1])]
real = {l.split()[0]: l for l in open(sys.argv[2])}
for t in order:
    print(real.get(t, f"{t} missing missing\n"), end="")
PY

placed=$(awk '$2 != "-"' "$work/sim.txt" | wc -l)
total=$(wc -l <"$work/sim.txt")
e2e_log "simulator: $placed of $total tasks placed"
if ((placed >= 20 && placed < total)); then
  pass "the workload fills the pool: $placed of $total tasks placed, the rest pending"
else
  fail "the workload should place most but not all tasks: $placed of $total"
fi
if diff <(cat "$work/sim.txt") "$work/real.sorted" >"$work/diff.txt"; then
  pass "vc-scheduler placed all $total tasks (node and vGPU devices) as basalt-sim did"
else
  fail "placements differ (< basalt-sim, > vc-scheduler): $(tr '\n' ';' <"$work/diff.txt")"
fi
vgpu_placed=$(awk '$3 != "-"' "$work/real.sorted" | wc -l)
if ((vgpu_placed >= 8)); then
  pass "$vgpu_placed vGPU tasks compared with their devices"
else
  fail "only $vgpu_placed vGPU tasks placed"
fi

# The comparison tells configurations apart.
if sim_placements "$work/other.yaml" "$work/other.txt" && ! diff -q "$work/other.txt" "$work/real.sorted" >/dev/null; then
  pass "basalt-sim with another configuration (bestfit, spread devices) disagrees with the cluster on $(diff "$work/other.txt" "$work/real.sorted" | grep -c '^>') tasks"
else
  fail "basalt-sim with another configuration gives the cluster's placement: the check would not notice a wrong configuration"
fi
[[ -n ${KEEP_WORK:-} ]] && echo "work dir: $work" || rm -rf "$work"
