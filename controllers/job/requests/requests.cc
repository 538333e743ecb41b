#include "controllers/job/requests/requests.h"

#include <charconv>

#include "common/api/views.h"
#include "common/api/vocabulary.h"

namespace basalt::controllers {
namespace {

std::optional<int32_t> ParseInt32(std::string_view s) {
  int32_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

const json::Value& Empty() {
  static const json::Value kEmpty(rapidjson::kObjectType);
  return kEmpty;
}

const json::Value& Child(const json::Value& v, std::string_view key) {
  const json::Value* c = json::Find(v, key);
  return c != nullptr && c->IsObject() ? *c : Empty();
}

JobRequest FromPod(const JobPodInfo& pod, Event event) {
  JobRequest r;
  r.job_uid = pod.job_uid;
  r.task = pod.task;
  r.pod = pod.name;
  r.event = event;
  r.job_version = pod.job_version;
  return r;
}

}  // namespace

std::optional<JobPodInfo> ReadJobPod(const json::Value& pod) {
  const json::Value& meta = Child(pod, "metadata");
  const json::Value* owners = json::Find(meta, "ownerReferences");
  std::string job_uid;
  bool owned = false;
  if (owners != nullptr && owners->IsArray()) {
    for (const auto& o : owners->GetArray()) {
      if (json::GetBool(o, "controller") && json::GetString(o, "kind") == api::kJobKind &&
          json::GetString(o, "apiVersion") == api::kBatchApiVersion) {
        owned = true;
        job_uid = std::string(json::GetString(o, "uid"));
      }
    }
  }
  if (!owned) return std::nullopt;
  const json::Value& ann = Child(meta, "annotations");
  auto job_name = json::GetOptionalString(ann, api::kJobNameKey);
  auto task = json::GetOptionalString(ann, api::kTaskSpecKey);
  auto version_text = json::GetOptionalString(ann, api::kJobVersionKey);
  if (!job_name || !task || !version_text) return std::nullopt;
  auto version = ParseInt32(*version_text);
  if (!version) return std::nullopt;

  JobPodInfo info;
  info.name = std::string(json::GetString(meta, "name"));
  info.namespace_name = std::string(json::GetString(meta, "namespace"));
  info.uid = std::string(json::GetString(meta, "uid"));
  info.job_name = std::string(*job_name);
  info.job_uid = std::move(job_uid);
  info.task = std::string(*task);
  info.job_version = *version;
  info.out_of_sync = json::GetString(ann, api::kControllerOutOfSyncKey) == "true";
  info.terminating = json::Find(meta, "deletionTimestamp") != nullptr &&
                     !json::Find(meta, "deletionTimestamp")->IsNull();
  if (auto p = json::GetOptionalString(Child(meta, "labels"), api::kPartitionIdKey)) {
    info.partition = ParseInt32(*p);
  }

  const json::Value& status = Child(pod, "status");
  info.phase = std::string(json::GetString(status, "phase"));
  bool all_ready = true;
  bool any_container = false;
  for (std::string_view list : {"initContainerStatuses", "containerStatuses"}) {
    const json::Value* statuses = json::Find(status, list);
    if (statuses == nullptr || !statuses->IsArray()) continue;
    for (const auto& cs : statuses->GetArray()) {
      info.restart_count += static_cast<int32_t>(json::GetInt(cs, "restartCount"));
      if (list == "containerStatuses") {
        any_container = true;
        all_ready = all_ready && json::GetBool(cs, "ready");
        if (!info.exit_code) {
          if (const json::Value* t = json::FindPath(cs, {"state", "terminated"})) {
            info.exit_code = static_cast<int32_t>(json::GetInt(*t, "exitCode"));
          }
        }
      }
    }
  }
  info.ready = info.phase == "Running" && any_container && all_ready;
  return info;
}

PodSnapshot ToSnapshot(const JobPodInfo& pod) {
  PodSnapshot s;
  s.name = pod.name;
  s.task = pod.task;
  s.phase = pod.phase;
  s.terminating = pod.terminating;
  s.partition = pod.partition;
  s.ready = pod.ready;
  s.out_of_sync = pod.out_of_sync;
  return s;
}

TaskProgress ProgressOf(const api::TaskSpec& task, const std::vector<JobPodInfo>& task_pods) {
  return ProgressOf(task.replicas, task.max_retry, task_pods);
}

TaskProgress ProgressOf(int32_t replicas, int32_t max_retry,
                        const std::vector<JobPodInfo>& task_pods) {
  TaskProgress p;
  p.replicas = replicas;
  p.max_retry = max_retry;
  for (const auto& pod : task_pods) {
    if (pod.phase == "Succeeded") ++p.succeeded_pods;
    if (pod.phase == "Running" || pod.phase == "Pending") p.live_pod_restarts += pod.restart_count;
  }
  return p;
}

bool TaskRetriesExhausted(const TaskProgress& progress) {
  if (progress.max_retry == -1) return false;
  const int32_t limit = progress.max_retry == 0 ? 3 : progress.max_retry;
  return progress.live_pod_restarts >= limit;
}

JobRequest RequestForPodAdd(const JobPodInfo& pod) {
  if (pod.out_of_sync) return FromPod(pod, Event::kOutOfSync);
  // First seen Failed: the pod failed while no controller watched (a restart or a leader
  // take-over). Without this its PodFailed/exitCode policy never runs and the Job stays
  // Running (Volcano loses these too). A pod of an older job version is ignored by the policy.
  if (pod.phase == "Failed") {
    JobRequest r = FromPod(pod, Event::kPodFailed);
    r.exit_code = pod.exit_code;
    return r;
  }
  return FromPod(pod, Event::kPodPending);
}

JobRequest RequestForPodUpdate(const JobPodInfo& old_pod, const JobPodInfo& new_pod,
                               const TaskProgress& task) {
  if (new_pod.out_of_sync) return FromPod(new_pod, Event::kOutOfSync);
  const std::string& phase = new_pod.phase;
  if (phase == "Failed" && old_pod.phase != "Failed") {
    JobRequest r = FromPod(new_pod, Event::kPodFailed);
    r.exit_code = new_pod.exit_code;
    return r;
  }
  if (phase == "Succeeded" && old_pod.phase != "Succeeded" &&
      task.succeeded_pods >= task.replicas) {
    return FromPod(new_pod, Event::kTaskCompleted);
  }
  if (phase == "Running" || phase == "Pending") {
    if (old_pod.phase != phase) {
      return FromPod(new_pod, phase == "Running" ? Event::kPodRunning : Event::kPodPending);
    }
    if (TaskRetriesExhausted(task)) return FromPod(new_pod, Event::kTaskFailed);
  }
  return FromPod(new_pod, Event::kOutOfSync);
}

JobRequest RequestForPodDelete(const JobPodInfo& pod, bool in_cache) {
  return FromPod(pod, pod.out_of_sync || !in_cache ? Event::kOutOfSync : Event::kPodEvicted);
}

std::optional<JobRequest> RequestForPodGroupUpdate(std::string_view old_phase,
                                                   std::string_view new_phase) {
  if (old_phase == new_phase) return std::nullopt;
  JobRequest r;
  r.event = new_phase == "Unknown" ? Event::kUnknown : Event::kNone;
  return r;
}

bool JobUpdateNeedsSync(const json::Value& old_job, const json::Value& new_job) {
  if (api::view::ResourceVersion(old_job) == api::view::ResourceVersion(new_job)) return false;
  return !api::view::SameSpec(old_job, new_job) ||
         api::view::JobPhase(old_job) != api::view::JobPhase(new_job);
}

JobRequest RequestForCommand(std::string_view action) {
  JobRequest r;
  r.event = Event::kCommandIssued;
  r.action = std::string(action);
  return r;
}

std::string OutOfSyncPatch() {
  return R"({"metadata":{"annotations":{"volcano.sh/controller-out-of-sync":"true"}}})";
}

}  // namespace basalt::controllers
