#pragma once
// Gang-level eviction, shared by the gangpreempt and gangreclaim actions (Volcano v1.15's
// gang-aware preemption design): a starving job's whole pending gang is placed at once, and its
// victims are chosen per victim job as "bundles" so that no victim job is silently left below
// its minAvailable.
//
// For each victim job, the candidate pods (Running or Bound, preemptable, not critical, allowed
// by the action's rules) are split into a *safe* bundle -- pods the job can lose and still keep
// minAvailable ready pods (and each role its minTaskMember) -- and a *whole* bundle -- the rest,
// whose eviction breaks the gang (the job controller then applies its PodEvicted policy).
// Bundles are ordered (gangreclaim: victim queue first, in the plugins' queue order reversed),
// then safe before whole (victimOrderPolicy safe-first, the default) or lower job priority
// before safe/whole (priority-first), then the less important job, then the best return: the
// share of the need the bundle frees over what the job loses in all (a safe bundle loses no gang,
// so it has infinite return). The plugins filter the flattened candidates (the gang plugin's
// function counts as allowing all, as in Volcano: the bundles keep minAvailable); a whole
// bundle survives only if every pod of it is allowed.
//
// Bundles are taken in that order until the domain's future idle resources plus what they free
// cover the gang's need; then the placement is simulated (victims evicted, every pending pod
// pipelined onto the best node that fits, in task order) and kept only if the job is then
// pipelined (JobPipelined), else the next bundle is added and it is tried again. Before the
// simulation, victims the placement does not need are pruned (most protected first; a whole
// bundle goes or stays as one), checked node by node with a first-fit of the pending pods; when
// the pruned set does not place the gang, the unpruned one is simulated. Nothing is evicted for
// a gang that would still not run. All evictions carry the preemptor in their cause (Evicted
// events), and the pipelined pods get nominatedNodeName.
//
// Domains: the job's candidate domains from the network-topology plugin (JobDomainsFor), at most
// maxDomains of them, in order; without a topology constraint one domain holds every node.
//
// Single-threaded, like the Session it works on.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/conf/arguments.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

enum class GangEvictionKind { kPreempt, kReclaim };

// Within a victim queue: safe bundles first, then lower priority (safe-first), or lower priority
// first, then safe before whole (priority-first).
enum class VictimOrderPolicy { kSafeFirst, kPriorityFirst };

struct GangEvictionOptions {
  int max_domains = 8;                                             // maxDomains
  bool allow_whole_bundle = true;                                  // allowWholeBundle
  VictimOrderPolicy victim_order = VictimOrderPolicy::kSafeFirst;  // victimOrderPolicy
};

// Reads maxDomains (an integer; <= 0 means the default 8, as in Volcano), allowWholeBundle (a
// boolean) and victimOrderPolicy (safe-first or priority-first). Returns kInvalidArgument naming
// the key for a value of the wrong type or an unknown policy (the configuration is then refused
// at load, like any wrong type; see ValidateSchedulerConfig).
absl::StatusOr<GangEvictionOptions> ParseGangEvictionOptions(const Arguments& args);

// Runs gangpreempt (within each queue, lower-priority victims) or gangreclaim (across queues,
// from reclaimable queues, for a queue that is not overused) on the session.
void RunGangEviction(Session& ssn, GangEvictionKind kind, const GangEvictionOptions& options);

}  // namespace basalt::sched
