#include "controllers/jobflow/sync.h"

#include <algorithm>

#include "common/util/duration.h"

namespace basalt::controllers {
namespace {

// batch.volcano.sh Job phases (status.state.phase).
constexpr std::string_view kJobPending = "Pending";
constexpr std::string_view kJobRunning = "Running";
constexpr std::string_view kJobCompleting = "Completing";
constexpr std::string_view kJobCompleted = "Completed";
constexpr std::string_view kJobTerminating = "Terminating";
constexpr std::string_view kJobTerminated = "Terminated";
constexpr std::string_view kJobFailed = "Failed";

}  // namespace

FlowJob FlowJobOf(const json::Value& job) {
  FlowJob j;
  if (const json::Value* m = json::Find(job, "metadata"); m != nullptr && m->IsObject()) {
    j.name = std::string(json::GetString(*m, "name"));
    j.uid = std::string(json::GetString(*m, "uid"));
    if (auto t = json::GetOptionalString(*m, "creationTimestamp")) {
      if (absl::StatusOr<api::Time> p = api::ParseRfc3339(*t); p.ok()) j.creation_timestamp = *p;
    }
  }
  const json::Value* st = json::Find(job, "status");
  if (st == nullptr || !st->IsObject()) return j;
  if (const json::Value* p = json::FindPath(*st, {"state", "phase"});
      p != nullptr && p->IsString()) {
    j.phase = std::string(json::AsView(*p));
  }
  if (auto d = json::GetOptionalString(*st, "runningDuration"))
    j.running_duration = std::string(*d);
  j.retry_count = static_cast<int32_t>(json::GetInt(*st, "retryCount", 0));
  if (const json::Value* tsc = json::Find(*st, "taskStatusCount");
      tsc != nullptr && tsc->IsObject()) {
    for (const auto& t : tsc->GetObject()) {
      auto& out = j.task_status_count[std::string(json::AsView(t.name))];
      const json::Value* phases = t.value.IsObject() ? json::Find(t.value, "phase") : nullptr;
      if (phases == nullptr || !phases->IsObject()) continue;
      for (const auto& p : phases->GetObject()) {
        if (p.value.IsInt()) out[std::string(json::AsView(p.name))] = p.value.GetInt();
      }
    }
  }
  return j;
}

std::vector<std::string> FlowsReadyToCreate(const api::JobFlow& flow,
                                            const std::map<std::string, FlowJob>& jobs) {
  std::vector<std::string> out;
  for (const api::Flow& f : flow.spec().flows) {
    if (jobs.contains(api::FlowJobName(flow.name(), f.name))) continue;
    bool ready = true;
    if (f.depends_on) {
      for (const std::string& target : f.depends_on->targets) {
        auto it = jobs.find(api::FlowJobName(flow.name(), target));
        if (it == jobs.end() || it->second.phase != kJobCompleted) {
          ready = false;
          break;
        }
      }
    }
    if (ready) out.push_back(f.name);
  }
  return out;
}

api::JobFlowStatus ComputeJobFlowStatus(const api::JobFlow& flow, const std::vector<FlowJob>& jobs,
                                        api::Time now) {
  const api::JobFlowStatus& old = flow.status();
  api::JobFlowStatus st;
  for (const FlowJob& j : jobs) {
    if (j.phase == kJobPending) {
      st.pending_jobs.push_back(j.name);
    } else if (j.phase == kJobRunning) {
      st.running_jobs.push_back(j.name);
    } else if (j.phase == kJobCompleted) {
      st.completed_jobs.push_back(j.name);
    } else if (j.phase == kJobTerminated) {
      st.terminated_jobs.push_back(j.name);
    } else if (j.phase == kJobFailed) {
      st.failed_jobs.push_back(j.name);
    } else if (j.phase != kJobCompleting && j.phase != kJobTerminating) {
      // Completing and Terminating are known phases that no list shows (as in Volcano).
      st.unknown_jobs.push_back(j.name);
    }
    st.conditions[j.name] =
        api::FlowCondition{j.phase, j.creation_timestamp, j.running_duration, j.task_status_count};
  }
  st.job_status_list = old.job_status_list;
  for (const FlowJob& j : jobs) {
    api::FlowJobStatus js;
    js.name = j.name;
    js.state = j.phase;
    js.start_timestamp = j.creation_timestamp;
    if (j.running_duration && j.creation_timestamp) {
      if (auto d = ParseGoDuration(*j.running_duration); d.ok()) {
        js.end_timestamp =
            *j.creation_timestamp + std::chrono::duration_cast<api::Time::duration>(*d);
      }
    }
    js.restart_count = j.retry_count;
    auto it = std::find_if(st.job_status_list.begin(), st.job_status_list.end(),
                           [&](const api::FlowJobStatus& e) { return e.name == j.name; });
    if (it != st.job_status_list.end()) js.running_histories = it->running_histories;
    if (js.running_histories.empty()) {
      if (!j.phase.empty()) js.running_histories.push_back({now, std::nullopt, j.phase});
    } else if (js.running_histories.back().state != j.phase) {
      js.running_histories.back().end_timestamp = now;
      js.running_histories.push_back({now, std::nullopt, j.phase});
    }
    if (it != st.job_status_list.end()) {
      *it = std::move(js);
    } else {
      st.job_status_list.push_back(std::move(js));
    }
  }
  st.phase = NextJobFlowPhase(old.phase, st, flow.spec().flows.size());
  return st;
}

std::string NextJobFlowPhase(std::string_view current, const api::JobFlowStatus& st, size_t flows) {
  if (current.empty() || current == api::kFlowPhasePending) {
    if (!st.failed_jobs.empty()) return std::string(api::kFlowPhaseFailed);
    if (!st.running_jobs.empty() || !st.completed_jobs.empty()) {
      return std::string(api::kFlowPhaseRunning);
    }
    return std::string(api::kFlowPhasePending);
  }
  if (current == api::kFlowPhaseRunning && st.completed_jobs.size() == flows) {
    return std::string(api::kFlowPhaseSucceed);
  }
  return std::string(current);
}

}  // namespace basalt::controllers
