#include "scheduler/plugins/gang/gang.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

bool GangJobReady(const JobInfo& job) {
  return job.CheckTaskMinAvailable(false) &&
         job.ReadyTaskNum() + job.PendingBestEffortTaskNum() >= job.min_available;
}

bool GangJobPipelined(const JobInfo& job) {
  return job.CheckTaskMinAvailable(true) &&
         job.WaitingTaskNum() + job.ReadyTaskNum() + job.PendingBestEffortTaskNum() >=
             job.min_available;
}

bool GangJobStarving(const JobInfo& job) {
  return job.WaitingTaskNum() + job.ReadyTaskNum() < job.min_available;
}

std::string GangUnschedulableMessage(const JobInfo& job) {
  int64_t schedulable = job.ReadyTaskNum();
  for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
    if (t->last_transaction && t->last_transaction->status == TaskStatus::kAllocated) {
      ++schedulable;
    }
  }
  const int64_t missing = std::max<int64_t>(1, int64_t{job.min_available} - schedulable);
  return fmt::format("{}/{} tasks in gang unschedulable: {}", missing, job.tasks().size(),
                     job.FitError());
}

namespace {

// A gang with fewer pods than it needs is invalid. While pods are missing (the job's
// controller is still creating them) the result says so with `awaiting_pods` and a message
// that does not count the pods that exist: the count changes with every pod created, and a
// message that changes is written again (PodGroup condition, event) every cycle. Deliberately
// differs from Volcano, whose message counts the valid pods ("valid: 7, min: 20").
std::optional<ValidateResult> ValidateGang(const JobInfo& job) {
  int64_t sum = 0;  // int64: the sum of int32 minTaskMember values cannot overflow it
  for (const auto& [role, min] : job.task_min_available) sum += min;
  const bool per_task = !job.task_min_available.empty() && job.min_available >= sum;
  if (per_task) {
    std::map<std::string, int32_t> present;
    std::map<std::string, int32_t> valid;
    for (const auto& [id, t] : job.tasks()) {
      ++present[t.role];
      if (IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded ||
          t.status == TaskStatus::kPipelined || t.status == TaskStatus::kPending) {
        ++valid[t.role];
      }
    }
    for (const auto& [role, min] : job.task_min_available) {
      if (present[role] < min) {
        return ValidateResult{
            "NotEnoughPodsOfTask",
            fmt::format("Waiting for the pods of task {} to be created: minTaskMember {}", role,
                        min),
            true};
      }
    }
    for (const auto& [role, min] : job.task_min_available) {
      if (valid[role] < min) {
        return ValidateResult{"NotEnoughPodsOfTask",
                              fmt::format("Not enough valid pods of each task for gang-scheduling: "
                                          "task {} has {}, minTaskMember {}",
                                          role, valid[role], min)};
      }
    }
  }
  if (std::cmp_less(job.tasks().size(), job.min_available)) {
    return ValidateResult{"NotEnoughTasks",
                          fmt::format("Waiting for the gang's pods to be created: minAvailable {}",
                                      job.min_available),
                          true};
  }
  int valid = job.ValidTaskNum();
  if (valid < job.min_available) {
    return ValidateResult{
        "NotEnoughTasks",
        fmt::format("Not enough valid tasks for gang-scheduling, valid: {}, min: {}", valid,
                    job.min_available)};
  }
  return std::nullopt;
}

class GangPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kGangPluginName; }

  void OnSessionOpen(Session& ssn) override {
    ssn.AddJobValidFn(Name(), ValidateGang);
    ssn.AddJobReadyFn(Name(), GangJobReady);
    ssn.AddJobPipelinedFn(
        Name(), [](const JobInfo& job) { return GangJobPipelined(job) ? kPermit : kReject; });
    ssn.AddJobStarvingFn(Name(), GangJobStarving);
    ssn.AddJobOrderFn(Name(), [](const JobInfo& l, const JobInfo& r) {
      bool lr = GangJobReady(l);
      bool rr = GangJobReady(r);
      if (lr == rr) return 0;
      return lr ? 1 : -1;  // not-ready gangs first
    });
    auto evictable = [&ssn](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> {
      std::vector<const TaskInfo*> victims;
      std::map<std::string, int> occupied;
      for (const TaskInfo* t : candidates) {
        const JobInfo* job = ssn.FindJob(t->job_id);
        if (job == nullptr) continue;
        auto [it, inserted] = occupied.emplace(job->uid, job->ReadyTaskNum());
        if (it->second > job->min_available) {
          --it->second;
          victims.push_back(t);
        }
      }
      return victims;
    };
    ssn.AddPreemptableFn(Name(), evictable);
    ssn.AddReclaimableFn(Name(), evictable);
  }

  void OnSessionClose(Session& ssn) override {
    for (auto& [id, job] : ssn.jobs()) {
      PodGroupCondition cond;
      cond.status = "True";
      cond.transition_id = ssn.uid();
      cond.last_transition_time = ssn.now();
      if (job.tasks().empty()) {
        // Basalt addition: a PodGroup held at admission (no pods yet) says why in its condition,
        // e.g. which queue limit it hit; Volcano only emits a transient event.
        if (!job.IsPending()) {
          // Admitted since: clear the admission complaint until its pods exist.
          for (auto& c : job.podgroup_status.conditions) {
            if (c.type == kConditionUnschedulable && c.status == "True") {
              c.status = "False";
              c.reason = "Admitted";
              c.message.clear();
              c.transition_id = ssn.uid();
              c.last_transition_time = ssn.now();
            }
          }
          continue;
        }
        if (job.job_fit_errors.empty()) continue;
        cond.type = std::string(kConditionUnschedulable);
        cond.reason = std::string(kReasonNotEnoughResources);
        cond.message = job.FitError();
      } else if (auto invalid = ValidateGang(job); invalid.has_value() && invalid->awaiting_pods) {
        // Waiting for its own pods: one condition, unchanged until they all exist.
        cond.type = std::string(kConditionUnschedulable);
        cond.reason = invalid->reason;
        cond.message = invalid->message;
      } else if (!GangJobReady(job)) {
        cond.type = std::string(kConditionUnschedulable);
        cond.reason = std::string(kReasonNotEnoughResources);
        cond.message = GangUnschedulableMessage(job);
      } else {
        cond.type = std::string(kConditionScheduled);
        cond.reason = std::string(kReasonGangReady);
      }
      if (cond.type == kConditionScheduled) {
        // Basalt flips a stale Unschedulable=True to False once the gang is ready, so
        // `kubectl describe podgroup` does not show both; Volcano leaves it True.
        for (auto& c : job.podgroup_status.conditions) {
          if (c.type == kConditionUnschedulable && c.status == "True") {
            c.status = "False";
            c.reason = std::string(kReasonGangReady);
            c.message.clear();
            c.transition_id = ssn.uid();
            c.last_transition_time = ssn.now();
          }
        }
      }
      bool same = false;
      for (auto& c : job.podgroup_status.conditions) {
        if (c.type == cond.type && c.SameAs(cond)) {
          // Unchanged: keep its lastTransitionTime, but mark it as decided by this session.
          c.transition_id = ssn.uid();
          same = true;
        }
      }
      if (!same) job.podgroup_status.SetCondition(std::move(cond));
    }
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments&) {
  return std::make_unique<GangPlugin>();
}

}  // namespace basalt::sched
