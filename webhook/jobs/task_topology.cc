#include "webhook/jobs/task_topology.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/field_reader.h"
#include "common/api/task_topology.h"

namespace basalt::webhook {

void ValidateTaskTopologyAnnotations(const json::Value& job, ErrorList& errors) {
  api::FieldReader reader(&job, "");
  ValidateTaskTopologyAnnotations(reader, errors);
}

void ValidateTaskTopologyAnnotations(api::FieldReader& reader, ErrorList& errors) {
  // A non-string annotation (or metadata, annotations, tasks of the wrong type) reads as absent:
  // the API server refuses it before admission, so the reader's own error is not used.
  api::FieldReader annotations = reader.Child("metadata").Child("annotations");
  std::optional<std::string_view> affinity = annotations.OptView(api::kTaskTopologyAffinityKey);
  std::optional<std::string_view> anti = annotations.OptView(api::kTaskTopologyAntiAffinityKey);
  std::optional<std::string_view> order = annotations.OptView(api::kTaskTopologyTaskOrderKey);
  if (!affinity && !anti && !order) return;
  std::vector<std::string> task_names;
  reader.Child("spec").ForEachItem("tasks", [&](api::FieldReader& task) {
    if (task.value() == nullptr) return;
    std::string_view name = task.View("name");
    if (!name.empty()) task_names.emplace_back(name);
  });
  std::optional<api::TaskTopologyParse> parsed =
      api::ParseTaskTopology(affinity, anti, order, task_names);
  if (!parsed.has_value()) return;
  const FieldPath path = FieldPath("metadata").Child("annotations");
  for (const api::TaskTopologyError& e : parsed->errors) {
    errors.Invalid(path.Key(e.annotation), e.message);
  }
}

}  // namespace basalt::webhook
