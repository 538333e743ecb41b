#include "webhook/jobs/mutate_job.h"

#include <cstdint>

#include "common/api/vocabulary.h"
#include "fmt/format.h"
#include "webhook/validation.h"

namespace basalt::webhook {
namespace {

// The task minAvailable Volcano assumes when unset.
int64_t DefaultTaskMinAvailable(const json::Value& task) {
  int64_t replicas = json::GetInt(task, "replicas");
  if (const json::Value* pp = json::Find(task, "partitionPolicy")) {
    int64_t min_partitions = json::GetInt(*pp, "minPartitions");
    if (min_partitions > 0)
      return SaturatingMul(min_partitions, json::GetInt(*pp, "partitionSize"));
  }
  return replicas;
}

void MutateTask(const json::Value& task, size_t index, JsonPatch& patch, int64_t& min_sum) {
  std::string base = fmt::format("/spec/tasks/{}", index);
  if (json::GetString(task, "name").empty()) {
    patch.AddString(base + "/name", fmt::format("default{}", index));
  }
  if (const json::Value* pod_spec = json::FindPath(task, {"template", "spec"})) {
    if (json::GetBool(*pod_spec, "hostNetwork") &&
        json::GetString(*pod_spec, "dnsPolicy").empty()) {
      patch.AddString(base + "/template/spec/dnsPolicy", "ClusterFirstWithHostNet");
    }
  }
  std::optional<int64_t> min_available = json::GetOptionalInt(task, "minAvailable");
  if (!min_available) {
    min_available = DefaultTaskMinAvailable(task);
    patch.AddInt(base + "/minAvailable", *min_available);
  }
  // Saturating: a review sent straight to the webhook may carry any int64 (the validator then
  // refuses the sizes; the sum must not wrap into a nonsensical default first).
  min_sum = SaturatingAdd(min_sum, *min_available);
  if (json::GetInt(task, "maxRetry") == 0) patch.AddInt(base + "/maxRetry", kDefaultMaxRetry);
}

void MutatePlugins(const json::Value& spec, JsonPatch& patch) {
  const json::Value* plugins = json::Find(spec, "plugins");
  if (plugins == nullptr || !plugins->IsObject()) return;
  bool need_svc = false;
  for (std::string_view p : api::kPluginsImplyingSvc)
    need_svc = need_svc || json::Find(*plugins, p) != nullptr;
  bool need_ssh = false;
  for (std::string_view p : api::kPluginsImplyingSsh)
    need_ssh = need_ssh || json::Find(*plugins, p) != nullptr;
  json::Value empty(rapidjson::kArrayType);
  auto add = [&](std::string_view plugin) {
    if (json::Find(*plugins, plugin) == nullptr) {
      patch.Add(fmt::format("/spec/plugins/{}", plugin), empty);
    }
  };
  if (need_svc) add(api::kSvcPlugin);
  if (need_ssh) add(api::kSshPlugin);
}

}  // namespace

JobMutation MutateJob(const json::Value& job, std::string_view scheduler_name) {
  JobMutation mutation;
  JsonPatch& patch = mutation.patch;
  const json::Value* spec = json::Find(job, "spec");
  if (spec == nullptr || !spec->IsObject()) return mutation;  // validation reports it

  if (json::GetString(*spec, "queue").empty()) patch.AddString("/spec/queue", api::kDefaultQueue);
  if (json::GetString(*spec, "schedulerName").empty() && !scheduler_name.empty()) {
    patch.AddString("/spec/schedulerName", scheduler_name);
  }
  if (json::GetInt(*spec, "maxRetry") == 0) {
    patch.AddInt("/spec/maxRetry", kDefaultMaxRetry);
    if (json::GetOptionalInt(*spec, "maxRetry").has_value()) {
      mutation.warnings.emplace_back(kMaxRetryZeroWarning);
    }
  }

  int64_t min_sum = 0;
  if (const json::Value* tasks = json::Find(*spec, "tasks"); tasks && tasks->IsArray()) {
    for (rapidjson::SizeType i = 0; i < tasks->Size(); ++i) {
      if ((*tasks)[i].IsObject()) MutateTask((*tasks)[i], i, patch, min_sum);
    }
  }
  if (json::GetInt(*spec, "minAvailable") == 0) patch.AddInt("/spec/minAvailable", min_sum);
  MutatePlugins(*spec, patch);
  return mutation;
}

AdmissionResponse JobMutator::Handle(const AdmissionRequest& request) const {
  if (request.operation != Operation::kCreate || request.object == nullptr) {
    return AdmissionResponse::Allow();
  }
  JobMutation mutation = MutateJob(*request.object, scheduler_name_);
  AdmissionResponse response = AdmissionResponse::Allow();
  if (!mutation.patch.empty()) response.patch = mutation.patch.ToJson();
  response.warnings = std::move(mutation.warnings);
  return response;
}

}  // namespace basalt::webhook
