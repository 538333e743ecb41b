#include "scheduler/plugins/priority/priority.h"

#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

int HigherFirst(int32_t l, int32_t r) {
  if (l == r) return 0;
  return l > r ? -1 : 1;
}

class PriorityPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kPriorityPluginName; }

  void OnSessionOpen(Session& ssn) override {
    ssn.AddTaskOrderFn(Name(), [](const TaskInfo& l, const TaskInfo& r) {
      return HigherFirst(l.priority, r.priority);
    });
    ssn.AddJobOrderFn(Name(), [](const JobInfo& l, const JobInfo& r) {
      return HigherFirst(l.priority, r.priority);
    });
    ssn.AddPreemptableFn(
        Name(),
        [&ssn](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          const JobInfo* preemptor_job = ssn.FindJob(preemptor.job_id);
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* t : candidates) {
            if (t->job_id != preemptor.job_id) {
              const JobInfo* victim_job = ssn.FindJob(t->job_id);
              if (preemptor_job != nullptr && victim_job != nullptr &&
                  victim_job->priority < preemptor_job->priority) {
                victims.push_back(t);
              }
            } else if (t->priority < preemptor.priority) {
              victims.push_back(t);
            }
          }
          return victims;
        });
    ssn.AddJobStarvingFn(Name(), [](const JobInfo& job) {
      return job.ReadyTaskNum() + job.WaitingTaskNum() < static_cast<int>(job.tasks().size());
    });
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments&) {
  return std::make_unique<PriorityPlugin>();
}

}  // namespace basalt::sched
