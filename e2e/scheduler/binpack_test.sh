#!/usr/bin/env bash
# Node scoring and config hot reload as a user sees them, on three dedicated 4-GPU nodes with
# 2-GPU pods:
#   - default config (nodeorder only, least requested): the first two pods spread over two
#     nodes;
#   - the config file is edited to add binpack (weight 10, nvidia.com/gpu weighted): the running
#     scheduler picks it up within seconds and the next two pods fill the two used nodes
#     completely, leaving the third empty;
#   - an invalid edit is refused and logged, and the previous config stays in force.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-binpack)
pool=binpack-$RANDOM
for i in 0 1 2; do add_fake_node "$pool-$i" 4 "basalt.dev/pool=$pool"; done
conf=$(sched_conf "enqueue, allocate, backfill")
start_scheduler --scheduler-conf="$conf"

node_of() { kubectl -n "$ns" get pod "$1" -o jsonpath='{.spec.nodeName}'; }
one_pod() { # name
  local uid
  uid=$(owner_uid "$ns" "$1")
  gang_yaml "$ns" "$1" 1 2 default "" "basalt.dev/pool=$pool" "$uid" | kubectl -n "$ns" apply -f - >/dev/null
  wait_for "$1 bound" 20 bash -c "[[ -n \$(kubectl -n $ns get pod $1-0 -o jsonpath='{.spec.nodeName}') ]]"
}
one_pod p1
one_pod p2
n1=$(node_of p1-0) n2=$(node_of p2-0)
if [[ $n1 != "$n2" ]]; then pass "without binpack the pods spread ($n1, $n2)"; else fail "without binpack both pods on $n1"; fi

reloads_before=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
# shellcheck disable=SC2086 # the default tiers are words
write_sched_conf "$conf" "enqueue, allocate, backfill" $SCHED_DEFAULT_TIERS binpack binpack.weight=10 \
  binpack.resources=nvidia.com/gpu binpack.resources.nvidia.com/gpu=5
reloaded() {
  local now
  now=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
  [[ ${now%.*} -gt ${reloads_before%.*} ]]
}
wait_for "the edited config is loaded" 10 reloaded
one_pod p3
one_pod p4
declare -A on
for p in p1 p2 p3 p4; do n=$(node_of "$p-0"); on[$n]=$((${on[$n]:-0} + 2)); done
e2e_log "GPUs per node: $(for n in "${!on[@]}"; do printf '%s=%s ' "$n" "${on[$n]}"; done)"
expect_eq "nodes used" "${#on[@]}" "2"
expect_eq "GPUs on $n1" "${on[$n1]:-0}" "4"
expect_eq "GPUs on $n2" "${on[$n2]:-0}" "4"

# An invalid edit keeps the binpack config in force. (An unknown action next to known ones is
# skipped, as Volcano does, and the rest applies; a file with no known action is refused.)
echo "actions: \"nosuchaction\"" >"$conf"
wait_for "the invalid config is refused and logged" 10 grep -q "Invalid scheduler configuration; keeping the previous one" "$SCHED_LOG"
expect_contains "refusal" "$(grep "Invalid scheduler configuration" "$SCHED_LOG" | tail -1)" "nosuchaction"
kubectl -n "$ns" delete pod p4-0 --grace-period=0 --force >/dev/null 2>&1
wait_for "p4 gone" 20 bash -c "! kubectl -n $ns get pod p4-0"
kubectl -n "$ns" delete podgroup p4 >/dev/null
one_pod p5
if [[ $(node_of p5-0) == "$(node_of p1-0)" || $(node_of p5-0) == "$(node_of p2-0)" ]]; then
  pass "after the invalid edit binpack still applies (p5 on $(node_of p5-0))"
else
  fail "p5 went to the empty node $(node_of p5-0): binpack config lost"
fi
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
