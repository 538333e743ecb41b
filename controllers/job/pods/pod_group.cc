#include "controllers/job/pods/pod_group.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "common/util/status.h"
#include "controllers/job/keys.h"
#include "controllers/job/pods/pods.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

void SetString(json::Value& obj, std::string_view key, std::string_view value,
               json::Allocator& alloc) {
  json::Set(obj, key, json::MakeString(value, alloc), alloc);
}

bool IsExtendedResource(std::string_view name) {
  // Native resources have no domain or a *kubernetes.io/ domain; requests.* are quota names.
  return name.find('/') != std::string_view::npos &&
         name.find("kubernetes.io/") == std::string_view::npos && name.substr(0, 9) != "requests.";
}

struct ContainerResources {
  MilliResourceList requests;
  MilliResourceList limits;
};

absl::StatusOr<ContainerResources> ReadContainer(const json::Value& c) {
  ContainerResources out;
  const json::Value* res = json::Find(c, "resources");
  if (res == nullptr) return out;
  BASALT_ASSIGN_OR_RETURN(out.requests, ParseMilliResourceList(json::Find(*res, "requests")));
  BASALT_ASSIGN_OR_RETURN(out.limits, ParseMilliResourceList(json::Find(*res, "limits")));
  return out;
}

absl::StatusOr<ContainerResources> PodResources(const json::Value& spec) {
  ContainerResources sum;
  if (const json::Value* cs = json::Find(spec, "containers"); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      BASALT_ASSIGN_OR_RETURN(ContainerResources r, ReadContainer(c));
      BASALT_RETURN_IF_ERROR(AddInto(sum.requests, r.requests));
      BASALT_RETURN_IF_ERROR(AddInto(sum.limits, r.limits));
    }
  }
  if (const json::Value* cs = json::Find(spec, "initContainers"); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      BASALT_ASSIGN_OR_RETURN(ContainerResources r, ReadContainer(c));
      MaxInto(sum.requests, r.requests);
      MaxInto(sum.limits, r.limits);
    }
  }
  BASALT_ASSIGN_OR_RETURN(MilliResourceList overhead,
                          ParseMilliResourceList(json::Find(spec, "overhead")));
  BASALT_RETURN_IF_ERROR(AddInto(sum.requests, overhead));
  // Overhead adds to limits only where a limit is set.
  for (auto& [name, v] : sum.limits) {
    if (auto it = overhead.find(name); it != overhead.end()) v += it->second;
  }
  return sum;
}

const json::Value& TemplateSpec(const TaskSpecView& task) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  if (task.pod_template == nullptr) return kEmpty;
  const json::Value* spec = json::Find(*task.pod_template, "spec");
  return spec != nullptr && spec->IsObject() ? *spec : kEmpty;
}

}  // namespace

absl::StatusOr<MilliResourceList> PodQuotaUsage(const json::Value& pod_spec) {
  BASALT_ASSIGN_OR_RETURN(ContainerResources r, PodResources(pod_spec));
  MilliResourceList usage;
  usage["pods"] = 1000;
  usage["count/pods"] = 1000;
  for (std::string_view native : {"cpu", "memory", "ephemeral-storage"}) {
    const std::string n(native);
    if (auto it = r.requests.find(n); it != r.requests.end()) {
      usage[n] = it->second;
      usage["requests." + n] = it->second;
    }
    if (auto it = r.limits.find(n); it != r.limits.end()) usage["limits." + n] = it->second;
  }
  for (const auto& [name, v] : r.requests) {
    if (name.rfind("hugepages-", 0) == 0 || IsExtendedResource(name)) {
      usage[name] = v;
      usage["requests." + name] = v;
    }
  }
  return usage;
}

std::map<std::string, int32_t> MinTaskMember(const JobSpecView& spec) {
  std::map<std::string, int32_t> out;
  for (const auto& t : spec.tasks) out[t.name] = t.min_available.value_or(t.replicas);
  return out;
}

absl::StatusOr<MilliResourceList> MinResources(const JobSpecView& spec,
                                               const PriorityClassValues& priorities) {
  std::vector<size_t> order(spec.tasks.size());
  std::iota(order.begin(), order.end(), 0);
  auto priority_of = [&](size_t i) {
    auto it = priorities.find(std::string(spec.tasks[i].TemplateSpecString("priorityClassName")));
    return it == priorities.end() ? 0 : it->second;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return priority_of(a) > priority_of(b); });

  // Pods taken per task (by spec index).
  std::vector<int32_t> taken(spec.tasks.size(), 0);
  int32_t remaining = spec.min_available;
  auto take = [&](size_t i, int32_t want) {
    int32_t n = std::max(0, std::min({want, remaining}));
    taken[i] += n;
    remaining -= n;
  };
  if (spec.min_available < spec.TotalTaskMinAvailable()) {
    for (size_t i : order) take(i, spec.tasks[i].replicas);
  } else {
    for (size_t i : order) {
      const TaskSpecView& t = spec.tasks[i];
      take(i, std::min(t.min_available.value_or(t.replicas), t.replicas));
    }
    for (size_t i : order) take(i, spec.tasks[i].replicas - taken[i]);
  }

  MilliResourceList total;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    if (taken[i] == 0) continue;
    auto usage = PodQuotaUsage(TemplateSpec(spec.tasks[i]));
    if (!usage.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("task {}: {}", spec.tasks[i].name, MessageOf(usage.status())));
    }
    for (int32_t n = 0; n < taken[i]; ++n) BASALT_RETURN_IF_ERROR(AddInto(total, *usage));
  }
  return total;
}

absl::StatusOr<json::Document> BuildPodGroup(const JobView& job,
                                             const PriorityClassValues& priorities) {
  BASALT_ASSIGN_OR_RETURN(MilliResourceList min_resources, MinResources(job.spec, priorities));
  json::Document pg;
  pg.SetObject();
  auto& a = pg.GetAllocator();
  SetString(pg, "apiVersion", keys::kPodGroupApiVersion, a);
  SetString(pg, "kind", keys::kPodGroupKind, a);

  json::Value meta(rapidjson::kObjectType);
  SetString(meta, "name", job.name, a);
  SetString(meta, "namespace", job.namespace_name, a);
  json::Value labels(rapidjson::kObjectType);
  for (const auto& [k, v] : job.labels) SetString(labels, k, v, a);
  SetString(labels, keys::kJobName, job.name, a);
  json::Set(meta, "labels", std::move(labels), a);
  json::Value annotations(rapidjson::kObjectType);
  for (const auto& [k, v] : job.annotations) SetString(annotations, k, v, a);
  json::Set(meta, "annotations", std::move(annotations), a);
  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(JobOwnerReference(job, a), a);
  json::Set(meta, "ownerReferences", std::move(owners), a);
  json::Set(pg, "metadata", std::move(meta), a);

  json::Value spec(rapidjson::kObjectType);
  json::Set(spec, "minMember", json::Value(job.spec.min_available), a);
  json::Value mtm(rapidjson::kObjectType);
  for (const auto& [task, n] : MinTaskMember(job.spec)) {
    json::Set(mtm, task, json::Value(n), a);
  }
  json::Set(spec, "minTaskMember", std::move(mtm), a);
  SetString(spec, "queue", job.spec.queue, a);
  if (!job.spec.priority_class_name.empty()) {
    SetString(spec, "priorityClassName", job.spec.priority_class_name, a);
  }
  json::Set(spec, "minResources", ToJson(min_resources, a), a);
  if (job.spec.network_topology) {
    const NetworkTopologyView& nt = *job.spec.network_topology;
    json::Value t(rapidjson::kObjectType);
    SetString(t, "mode", nt.mode.empty() ? "hard" : nt.mode, a);
    if (nt.highest_tier_allowed) {
      json::Set(t, "highestTierAllowed", json::Value(*nt.highest_tier_allowed), a);
    } else if (!nt.highest_tier_name.empty()) {
      SetString(t, "highestTierName", nt.highest_tier_name, a);
    }
    json::Set(spec, "networkTopology", std::move(t), a);
  }
  json::Set(pg, "spec", std::move(spec), a);

  json::Value status(rapidjson::kObjectType);
  SetString(status, "phase", "Pending", a);
  json::Set(pg, "status", std::move(status), a);
  return pg;
}

bool PodGroupSpecDiffers(const json::Value& existing, const json::Value& desired) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value* e = json::Find(existing, "spec");
  const json::Value* d = json::Find(desired, "spec");
  if (e == nullptr) e = &kEmpty;
  if (d == nullptr) d = &kEmpty;
  if (json::GetInt(*e, "minMember") != json::GetInt(*d, "minMember")) return true;
  if (json::GetString(*e, "priorityClassName") != json::GetString(*d, "priorityClassName")) {
    return true;
  }
  const json::Value* dm = json::Find(*d, "minTaskMember");
  if (dm != nullptr && dm->IsObject()) {
    const json::Value* em = json::Find(*e, "minTaskMember");
    for (const auto& m : dm->GetObject()) {
      if (em == nullptr || json::GetOptionalInt(*em, json::AsView(m.name)) !=
                               std::optional<int64_t>(m.value.IsInt64() ? m.value.GetInt64() : 0)) {
        return true;
      }
    }
  }
  auto er = ParseMilliResourceList(json::Find(*e, "minResources"));
  auto dr = ParseMilliResourceList(json::Find(*d, "minResources"));
  if (!er.ok() || !dr.ok()) return true;
  return *er != *dr;
}

bool PodGroupOwnedBy(const json::Value& pod_group, std::string_view job_uid) {
  const json::Value* owners = json::FindPath(pod_group, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->IsArray()) return false;
  for (const auto& o : owners->GetArray()) {
    if (json::GetBool(o, "controller") && json::GetString(o, "kind") == keys::kJobKind &&
        json::GetString(o, "uid") == job_uid) {
      return true;
    }
  }
  return false;
}

}  // namespace basalt::controllers
