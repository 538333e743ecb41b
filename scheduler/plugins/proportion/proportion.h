#pragma once
// proportion: weighted fair share between queues. At session open every queue that has jobs
// gets a `deserved` share by water-filling the cluster total among queues in proportion to
// their weights, capped by each queue's request and capability and raised to its guarantee.
// QueueOrder (higher spec.priority, then lower allocated/deserved), Overused, Allocatable,
// Reclaimable, Preemptive and JobEnqueueable follow from it (reference §4.4).
//
// Deliberate differences from Volcano, so that queues flooded at once settle at their weighted
// shares (in Volcano, PodGroups not yet admitted have no pods, so their queue requests nothing
// and gets no share, while the first queue popped can admit the whole cluster's worth):
//  * a job's demand in `request` is at least its PodGroup minResources while the PodGroup is
//    Pending or Inqueue, so not-yet-admitted and not-yet-created pods count; except an admitted
//    (Inqueue) PodGroup that has no pod at all: until its pods exist it asks for nothing, so pods
//    that never come (a bare pod deleted with its node, a hand-made PodGroup without pods, a job
//    controller that is down) do not raise its queue's share at the other queues' expense;
//  * JobEnqueueable also rejects a job once the queue's allocated + inqueue - elastic has reached
//    its deserved share in a dimension the job asks for, so admission stays fair across queues.
//    Admitted PodGroups without pods count in `inqueue` only against candidates without pods
//    (issue 14: they never keep a job whose pods exist from being admitted).
//  * tasks and gangs that can never be placed (JobInfo::never_fit_tasks / never_fits, see
//    api/feasibility.h) add nothing to `request` or `inqueue`: an unsatisfiable request must not
//    raise the queue's share at the expense of other queues, nor hold its own queue's admission.
//  * deserved shares of whole-unit resources (nvidia.com/gpu, any extended resource) are whole
//    numbers, distributed by largest remainder and summing to the (rounded) total;
//  * QueueHeadroom = deserved - allocated, so that overcommit counts a queue's admitted work
//    only up to what the queue may still place (docs/scheduler.md, "Admission").
//  * deserved is not a ceiling below one unit of work: Allocatable lets a queue under its share
//    (or holding nothing) start one gang past it on resources no other queue is entitled to
//    use now, and a queue that runs nothing of a dimension may admit past its share of it;
//    Preemptive (reclaim) stays within deserved (docs/scheduler.md, "Admission never strands").

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kProportionPluginName = "proportion";

absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments& args);

// Inputs of the water-filling for one queue.
struct QueueDemand {
  std::string name;
  int32_t weight = 1;
  Resource request;
  Resource real_capability;  // dimensions absent = unlimited
  Resource guarantee;
};

// realCapability = max(total - sum of all guarantees, 0) + guarantee, capped per dimension by
// capability (nullopt or absent dimensions = unlimited; cpu or memory <= 0 = unlimited).
Resource RealCapability(const Resource& total, const Resource& all_guarantees,
                        const Resource& guarantee, const std::optional<Resource>& capability);

// The water-filling of reference §4.4: deserved share per queue name; whole-unit dimensions
// rounded as described above.
std::map<std::string, Resource> ComputeDeserved(const Resource& total,
                                                const std::vector<QueueDemand>& queues);

// max over the dimensions of `deserved` and `allocated` of allocated_r / deserved_r
// (0/0 = 0, x/0 = 1).
double QueueShare(const Resource& allocated, const Resource& deserved);

}  // namespace basalt::sched
