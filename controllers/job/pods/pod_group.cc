#include "controllers/job/pods/pod_group.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "common/api/scheduling.h"
#include "common/api/views.h"
#include "common/api/vocabulary.h"
#include "common/util/status.h"
#include "controllers/job/pods/pods.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

bool IsExtendedResource(std::string_view name) {
  // Native resources have no domain or a *kubernetes.io/ domain; requests.* are quota names.
  return name.find('/') != std::string_view::npos &&
         name.find("kubernetes.io/") == std::string_view::npos && name.substr(0, 9) != "requests.";
}

using resource::ResourceList;

struct PodResources {
  ResourceList requests;
  ResourceList limits;
};

absl::StatusOr<ResourceList> ReadList(const json::Value& container, std::string_view kind) {
  const json::Value* list = json::FindPath(container, {"resources", kind});
  if (list == nullptr) return ResourceList();
  auto r = ResourceList::FromJson(*list);
  if (!r.ok()) {
    return Annotate(r.status(),
                    fmt::format("container \"{}\" {}", json::GetString(container, "name"), kind));
  }
  return r;
}

absl::StatusOr<PodResources> ReadPodResources(const json::Value& spec) {
  std::vector<ResourceList> containers;
  std::vector<resource::InitContainerRequests> inits;
  PodResources out;
  if (const json::Value* cs = json::Find(spec, "containers"); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      BASALT_ASSIGN_OR_RETURN(ResourceList requests, ReadList(c, "requests"));
      BASALT_ASSIGN_OR_RETURN(ResourceList limits, ReadList(c, "limits"));
      containers.push_back(resource::RequestsOrLimits(requests, limits));
      out.limits.Add(limits);
    }
  }
  if (const json::Value* cs = json::Find(spec, "initContainers"); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      BASALT_ASSIGN_OR_RETURN(ResourceList requests, ReadList(c, "requests"));
      BASALT_ASSIGN_OR_RETURN(ResourceList limits, ReadList(c, "limits"));
      const bool sidecar = json::GetString(c, "restartPolicy") == "Always";
      inits.push_back({resource::RequestsOrLimits(requests, limits), sidecar});
      out.limits = sidecar ? out.limits + limits : resource::Max(out.limits, limits);
    }
  }
  ResourceList overhead;
  if (const json::Value* o = json::Find(spec, "overhead")) {
    auto r = ResourceList::FromJson(*o);
    if (!r.ok()) return Annotate(r.status(), "overhead");
    overhead = *std::move(r);
  }
  out.requests = resource::PodEffectiveRequest(containers, inits, overhead);
  // Overhead adds to limits only where a limit is set.
  for (const auto& [name, q] : out.limits) {
    if (overhead.Has(name)) out.limits.Set(name, q + overhead.Get(name));
  }
  return out;
}

const json::Value& TemplateSpec(const api::TaskSpec& task) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  if (task.pod_template == nullptr) return kEmpty;
  const json::Value* spec = json::Find(*task.pod_template, "spec");
  return spec != nullptr && spec->IsObject() ? *spec : kEmpty;
}

}  // namespace

absl::StatusOr<ResourceList> PodQuotaUsage(const json::Value& pod_spec) {
  BASALT_ASSIGN_OR_RETURN(PodResources r, ReadPodResources(pod_spec));
  ResourceList usage;
  usage.Set("pods", resource::Quantity::FromInt(1));
  usage.Set("count/pods", resource::Quantity::FromInt(1));
  for (std::string_view native : {"cpu", "memory", "ephemeral-storage"}) {
    if (r.requests.Has(native)) {
      usage.Set(native, r.requests.Get(native));
      usage.Set(fmt::format("requests.{}", native), r.requests.Get(native));
    }
    if (r.limits.Has(native)) usage.Set(fmt::format("limits.{}", native), r.limits.Get(native));
  }
  for (const auto& [name, q] : r.requests) {
    if (name.rfind("hugepages-", 0) == 0 || IsExtendedResource(name)) {
      usage.Set(name, q);
      usage.Set("requests." + name, q);
    }
  }
  return usage;
}

std::map<std::string, int32_t> MinTaskMember(const api::JobSpec& spec) {
  std::map<std::string, int32_t> out;
  for (const auto& t : spec.tasks) {
    if (t.min_available) {
      out[t.name] = *t.min_available;
    } else if (t.partition_policy && t.partition_policy->min_partitions > 0 &&
               t.partition_policy->partition_size > 0) {
      out[t.name] = t.partition_policy->min_partitions * t.partition_policy->partition_size;
    } else {
      out[t.name] = t.replicas;
    }
  }
  return out;
}

absl::StatusOr<ResourceList> MinResources(const api::JobSpec& spec,
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
      const api::TaskSpec& t = spec.tasks[i];
      take(i, std::min(t.min_available.value_or(t.replicas), t.replicas));
    }
    for (size_t i : order) take(i, spec.tasks[i].replicas - taken[i]);
  }

  ResourceList total;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    if (taken[i] == 0) continue;
    auto usage = PodQuotaUsage(TemplateSpec(spec.tasks[i]));
    if (!usage.ok())
      return Annotate(usage.status(), fmt::format("task \"{}\"", spec.tasks[i].name));
    total.Add(usage->MulInt(taken[i]));
  }
  return total;
}

absl::StatusOr<json::Document> BuildPodGroup(const api::Job& job,
                                             const PriorityClassValues& priorities) {
  BASALT_ASSIGN_OR_RETURN(ResourceList min_resources, MinResources(job.spec(), priorities));
  api::PodGroup pg = api::PodGroup::Make(job.namespace_name(), job.name());
  for (const auto& [k, v] : job.labels()) pg.SetLabel(k, v);
  pg.SetLabel(api::kJobNameKey, job.name());
  for (const auto& [k, v] : job.annotations()) pg.SetAnnotation(k, v);
  pg.SetOwnerReferences({api::JobControllerRef(job)});

  api::PodGroupSpec spec;
  spec.min_member = job.spec().min_available;
  spec.min_task_member = MinTaskMember(job.spec());
  spec.min_resources = std::move(min_resources);
  spec.queue = job.spec().queue;
  spec.priority_class_name = job.spec().priority_class_name;
  spec.network_topology = job.spec().network_topology;
  pg.SetSpec(spec);
  std::vector<api::SubGroupPolicy> sub_groups;
  for (const auto& task : job.spec().tasks) {
    if (!task.partition_policy) continue;
    const api::PartitionPolicy& pp = *task.partition_policy;
    api::SubGroupPolicy g;
    g.name = task.name;
    g.sub_group_size = pp.partition_size;
    g.min_sub_groups = pp.min_partitions;
    g.label_selector_json =
        api::MatchLabelsSelectorJson(api::StringMap{{std::string(api::kTaskSpecKey), task.name}});
    g.match_label_keys = {std::string(api::kPartitionIdKey)};
    g.network_topology = pp.network_topology;
    sub_groups.push_back(std::move(g));
  }
  pg.SetSubGroupPolicy(sub_groups);

  api::PodGroupStatus status;
  status.phase = std::string(api::kPodGroupPending);
  pg.SetStatus(status);
  // The PodGroup control works on documents (as the informer caches them).
  json::Document doc;
  doc.CopyFrom(pg.doc(), doc.GetAllocator());
  return doc;
}

bool PodGroupSpecDiffers(const json::Value& existing, const json::Value& desired) {
  return api::view::PodGroupSpecDiffers(existing, desired);
}

bool PodGroupOwnedBy(const json::Value& pod_group, std::string_view job_uid) {
  return api::view::ControlledBy(pod_group, api::kJobKind, job_uid);
}

}  // namespace basalt::controllers
