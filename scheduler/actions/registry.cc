#include "scheduler/actions/registry.h"

#include "scheduler/actions/allocate/allocate.h"
#include "scheduler/actions/backfill/backfill.h"
#include "scheduler/actions/enqueue/enqueue.h"
#include "scheduler/actions/gangpreempt/gangpreempt.h"
#include "scheduler/actions/gangreclaim/gangreclaim.h"
#include "scheduler/actions/preempt/preempt.h"
#include "scheduler/actions/reclaim/reclaim.h"

namespace basalt::sched {

ActionRegistry NewInTreeActionRegistry() {
  ActionRegistry r;
  r.Register(std::string(kEnqueueActionName), NewEnqueueAction);
  r.Register(std::string(kAllocateActionName), NewAllocateAction);
  r.Register(std::string(kBackfillActionName), NewBackfillAction);
  r.Register(std::string(kReclaimActionName), NewReclaimAction);
  r.Register(std::string(kPreemptActionName), NewPreemptAction);
  r.Register(std::string(kGangPreemptActionName), NewGangPreemptAction);
  r.Register(std::string(kGangReclaimActionName), NewGangReclaimAction);
  return r;
}

}  // namespace basalt::sched
