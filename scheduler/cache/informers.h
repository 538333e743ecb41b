#pragma once
// Wires the scheduler's informers to a ClusterState: all pods (compact, with their
// PodScheduled condition), nodes (compact), PodGroups, Queues, PriorityClasses and
// HyperNodes (topology.volcano.sh). Each handler
// applies the change to the state at once; nothing is rebuilt per cycle.

#include <vector>

#include "common/informer/informer_factory.h"
#include "scheduler/cache/cluster_state.h"

namespace basalt::sched::cache {

// Which optional informers to register.
struct InformerSet {
  bool hypernodes = true;  // false where the HyperNode CRD is not installed
};

// Registers the handlers (before or after factory->Start()) and returns the informers, for
// WaitForCacheSync and the /readyz check. `state` must outlive the factory's informers.
std::vector<const informer::SharedInformer*> RegisterInformers(
    informer::SharedInformerFactory* factory, ClusterState* state, InformerSet set = {});

}  // namespace basalt::sched::cache
