#include "webhook/jobs/task_topology.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/task_topology.h"

namespace basalt::webhook {
namespace {

// The annotation's value; nullopt when absent (a non-string value reads as absent: the API
// server refuses it before admission).
std::optional<std::string_view> Annotation(const json::Value& job, std::string_view key) {
  const json::Value* annotations = json::FindPath(job, {"metadata", "annotations"});
  if (annotations == nullptr || !annotations->IsObject()) return std::nullopt;
  const json::Value* v = json::Find(*annotations, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return json::AsView(*v);
}

}  // namespace

void ValidateTaskTopologyAnnotations(const json::Value& job, ErrorList& errors) {
  std::optional<std::string_view> affinity = Annotation(job, api::kTaskTopologyAffinityKey);
  std::optional<std::string_view> anti = Annotation(job, api::kTaskTopologyAntiAffinityKey);
  std::optional<std::string_view> order = Annotation(job, api::kTaskTopologyTaskOrderKey);
  if (!affinity && !anti && !order) return;
  std::vector<std::string> task_names;
  const json::Value* tasks = json::FindPath(job, {"spec", "tasks"});
  if (tasks != nullptr && tasks->IsArray()) {
    for (const auto& task : tasks->GetArray()) {
      if (!task.IsObject()) continue;
      std::string_view name = json::GetString(task, "name");
      if (!name.empty()) task_names.emplace_back(name);
    }
  }
  std::optional<api::TaskTopologyParse> parsed =
      api::ParseTaskTopology(affinity, anti, order, task_names);
  if (!parsed.has_value()) return;
  const FieldPath path = FieldPath("metadata").Child("annotations");
  for (const api::TaskTopologyError& e : parsed->errors) {
    errors.Invalid(path.Key(e.annotation), e.message);
  }
}

}  // namespace basalt::webhook
