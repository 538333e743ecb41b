#include "webhook/jobs/mutate_job.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "fmt/format.h"
#include "webhook/validation.h"

namespace basalt::webhook {
namespace {

// The Job is read through api::FieldReader; a member of the wrong type reads as absent (the
// reader's type errors are not reported here: the validator refuses such Jobs).
using api::FieldReader;

// The task minAvailable Volcano assumes when unset.
int64_t DefaultTaskMinAvailable(FieldReader& task) {
  int64_t replicas = task.Int("replicas");
  FieldReader pp = task.Child("partitionPolicy");
  int64_t min_partitions = pp.Int("minPartitions");
  if (min_partitions > 0) return SaturatingMul(min_partitions, pp.Int("partitionSize"));
  return replicas;
}

void MutateTask(FieldReader& task, size_t index, JobMutation& mutation, int64_t& min_sum) {
  JsonPatch& patch = mutation.patch;
  std::string base = fmt::format("/spec/tasks/{}", index);
  if (task.View("name").empty()) {
    patch.AddString(base + "/name", fmt::format("default{}", index));
  }
  FieldReader pod_spec = task.Child("template").Child("spec");
  if (pod_spec.Bool("hostNetwork") && pod_spec.View("dnsPolicy").empty()) {
    patch.AddString(base + "/template/spec/dnsPolicy", "ClusterFirstWithHostNet");
  }
  std::optional<int64_t> min_available = task.OptInt("minAvailable");
  if (!min_available) {
    min_available = DefaultTaskMinAvailable(task);
    patch.AddInt(base + "/minAvailable", *min_available);
  }
  // Saturating: a review sent straight to the webhook may carry any int64 (the validator then
  // refuses the sizes; the sum must not wrap into a nonsensical default first).
  min_sum = SaturatingAdd(min_sum, *min_available);
  if (task.Int("maxRetry") == 0) patch.AddInt(base + "/maxRetry", kDefaultMaxRetry);
}

void MutatePlugins(FieldReader& spec, JsonPatch& patch) {
  // The plugins named in spec.plugins (an entry whose arguments are null included).
  std::vector<std::string_view> named;
  spec.ForEachEntry("plugins", [&](std::string_view name, std::optional<std::string_view>) {
    named.push_back(name);
  });
  auto present = [&](std::string_view plugin) {
    return std::find(named.begin(), named.end(), plugin) != named.end();
  };
  bool need_svc = false;
  for (std::string_view p : api::kPluginsImplyingSvc) need_svc = need_svc || present(p);
  bool need_ssh = false;
  for (std::string_view p : api::kPluginsImplyingSsh) need_ssh = need_ssh || present(p);
  json::Value empty(rapidjson::kArrayType);
  auto add = [&](std::string_view plugin) {
    if (!present(plugin)) patch.Add(fmt::format("/spec/plugins/{}", plugin), empty);
  };
  if (need_svc) add(api::kSvcPlugin);
  if (need_ssh) add(api::kSshPlugin);
}

}  // namespace

JobMutation MutateJob(const json::Value& job, std::string_view scheduler_name) {
  JobMutation mutation;
  JsonPatch& patch = mutation.patch;
  FieldReader reader(&job, "");
  FieldReader spec = reader.Child("spec");
  if (spec.value() == nullptr) return mutation;  // validation reports it

  if (spec.View("queue").empty()) patch.AddString("/spec/queue", api::kDefaultQueue);
  if (spec.View("schedulerName").empty() && !scheduler_name.empty()) {
    patch.AddString("/spec/schedulerName", scheduler_name);
  }
  if (spec.Int("maxRetry") == 0) {
    patch.AddInt("/spec/maxRetry", kDefaultMaxRetry);
    if (spec.OptInt("maxRetry").has_value()) mutation.warnings.emplace_back(kMaxRetryZeroWarning);
  }

  int64_t min_sum = 0;
  // Elements() skips the tasks that are not objects; index() is the task's own position.
  for (FieldReader& task : spec.Elements("tasks")) {
    MutateTask(task, static_cast<size_t>(task.index()), mutation, min_sum);
  }
  if (spec.Int("minAvailable") == 0) patch.AddInt("/spec/minAvailable", min_sum);
  MutatePlugins(spec, patch);
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
