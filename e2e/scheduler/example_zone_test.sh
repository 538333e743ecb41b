#!/usr/bin/env bash
# The example_zone plugin (docs/plugins.md's worked example) as a user sees it, on four
# dedicated 4-GPU KWOK nodes whose topology.kubernetes.io/zone labels alternate a, b, a, b:
#   - with the default-style config (nodeorder, least requested) a gang of three 1-GPU pods
#     spreads over three nodes, so over both zones;
#   - the config file is edited to add example_zone (weight 10): the running scheduler picks it
#     up, the next gang of three lands in a single zone, and the plugin's per-cycle latency is
#     exported under its name.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

apply_crds
ns=$(new_namespace sched-zone)
pool=zone-$RANDOM
zones=(a b a b)
for i in 0 1 2 3; do
  add_fake_node "$pool-$i" 4 "basalt.dev/pool=$pool"
  kubectl label node "$pool-$i" "topology.kubernetes.io/zone=$pool-${zones[$i]}" --overwrite >/dev/null
done
conf=$(sched_conf "enqueue, allocate, backfill")
start_scheduler --scheduler-conf="$conf"

zones_of() { # GANG: the distinct zones of its pods' nodes
  local n
  for n in $(kubectl -n "$ns" get pods -l "volcano.sh/job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'); do
    kubectl get node "$n" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}'
  done | sort -u | paste -sd' '
}

make_gang "$ns" g1 3 1 default "" "basalt.dev/pool=$pool"
wait_for "gang g1 bound" 30 bound_is "$ns" 3 g1
expect_eq "without example_zone, g1 spreads over both zones" "$(zones_of g1)" "$pool-a $pool-b"

reloads_before=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
# shellcheck disable=SC2086 # the default tiers are words
write_sched_conf "$conf" "enqueue, allocate, backfill" $SCHED_DEFAULT_TIERS example_zone example_zone.weight=10
reloaded() {
  local now
  now=$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '/config_reloads_total\{result="success"\}/ {print $2}')
  [[ ${now%.*} -gt ${reloads_before%.*} ]]
}
wait_for "the edited config is loaded" 10 reloaded
expect_eq "example_zone is not a skipped name" \
  "$(curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" | awk '$1 == "basalt_scheduler_config_skipped_names{kind=\"plugin\"}" {print $2}')" "0"

make_gang "$ns" g2 3 1 default "" "basalt.dev/pool=$pool"
wait_for "gang g2 bound" 30 bound_is "$ns" 3 g2
g2_zones=$(zones_of g2)
if [[ $g2_zones == "$pool-a" || $g2_zones == "$pool-b" ]]; then
  pass "with example_zone, g2 stays in one zone ($g2_zones)"
else
  fail "with example_zone, g2 is in zones '$g2_zones'"
fi
plugin_series() {
  curl -sf "http://127.0.0.1:$SCHED_PORT/metrics" |
    grep -q '^volcano_plugin_scheduling_latency_milliseconds_count{OnSession="OnSessionOpen",plugin="example_zone"}'
}
wait_for "example_zone's latency is exported under its name" 10 plugin_series
rm -f "$conf"
if stop_scheduler; then pass "SIGTERM: vc-scheduler exited 0"; else fail "SIGTERM: non-zero exit"; fi
