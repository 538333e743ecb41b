#include "controllers/job/pods/pods.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "common/api/task_topology.h"
#include "common/api/vocabulary.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

void SetString(json::Value& obj, std::string_view key, std::string_view value,
               json::Allocator& alloc) {
  json::Set(obj, key, json::MakeString(value, alloc), alloc);
}

// Sets obj[key] = value when obj[key] is absent or "".
void DefaultString(json::Value& obj, std::string_view key, std::string_view value,
                   json::Allocator& alloc) {
  if (value.empty() || !json::GetString(obj, key).empty()) return;
  SetString(obj, key, value, alloc);
}

void CopyIfPresent(std::optional<std::string_view> value, std::string_view key, json::Value& to,
                   json::Allocator& alloc) {
  if (value) SetString(to, key, *value, alloc);
}

json::Value& EnsureArray(json::Value& obj, std::string_view key, json::Allocator& alloc) {
  json::Value* v = json::FindMutable(obj, key);
  if (v == nullptr) {
    json::Set(obj, key, json::Value(rapidjson::kArrayType), alloc);
    v = json::FindMutable(obj, key);
  } else if (!v->IsArray()) {
    v->SetArray();
  }
  return *v;
}

void AddJobVolumes(const api::Job& job, json::Value& spec, json::Allocator& alloc) {
  std::set<std::string> seen;
  for (const auto& vol : job.spec().volumes) {
    if (vol.volume_claim_name.empty() || !seen.insert(vol.volume_claim_name).second) continue;
    const std::string name = PodVolumeName(job.name(), vol.volume_claim_name);
    json::Value volume(rapidjson::kObjectType);
    SetString(volume, "name", name, alloc);
    json::Value pvc(rapidjson::kObjectType);
    SetString(pvc, "claimName", vol.volume_claim_name, alloc);
    json::Set(volume, "persistentVolumeClaim", std::move(pvc), alloc);
    EnsureArray(spec, "volumes", alloc).PushBack(std::move(volume), alloc);
    // Regular containers only, as Volcano does: init containers do not see job volumes.
    if (json::Value* containers = json::FindMutable(spec, "containers");
        containers && containers->IsArray()) {
      for (auto& c : containers->GetArray()) {
        if (!c.IsObject()) continue;
        json::Value mount(rapidjson::kObjectType);
        SetString(mount, "name", name, alloc);
        SetString(mount, "mountPath", vol.mount_path, alloc);
        EnsureArray(c, "volumeMounts", alloc).PushBack(std::move(mount), alloc);
      }
    }
  }
}

}  // namespace

json::Value JobOwnerReference(const api::Job& job, json::Allocator& alloc) {
  return api::EncodeOwnerReference(api::JobControllerRef(job), alloc);
}

namespace {
// FNV-1a 64 of `text`, written as 12 base-36 digits.
std::string Base36Hash12(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string suffix(12, '0');
  for (int i = 11; i >= 0; --i) {
    suffix[i] = kDigits[h % 36];
    h /= 36;
  }
  return suffix;
}
}  // namespace

std::string PodVolumeName(std::string_view job, std::string_view claim_name) {
  return fmt::format("{}-{}", job, Base36Hash12(claim_name));
}

std::string GeneratedPvcName(std::string_view job, std::string_view job_uid, size_t index) {
  return fmt::format("{}-pvc-{}", job, Base36Hash12(fmt::format("{}/{}", job_uid, index)));
}

json::Document BuildPvc(const api::Job& job, const api::JobVolume& volume, std::string_view name) {
  json::Document pvc;
  pvc.SetObject();
  auto& a = pvc.GetAllocator();
  SetString(pvc, "apiVersion", "v1", a);
  SetString(pvc, "kind", "PersistentVolumeClaim", a);
  json::Value meta(rapidjson::kObjectType);
  SetString(meta, "name", name, a);
  SetString(meta, "namespace", job.namespace_name(), a);
  json::Value labels(rapidjson::kObjectType);
  SetString(labels, api::kJobNameKey, job.name(), a);
  json::Set(meta, "labels", std::move(labels), a);
  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(JobOwnerReference(job, a), a);
  json::Set(meta, "ownerReferences", std::move(owners), a);
  json::Set(pvc, "metadata", std::move(meta), a);
  json::Value spec(rapidjson::kObjectType);
  if (volume.volume_claim && volume.volume_claim->IsObject())
    spec.CopyFrom(*volume.volume_claim, a);
  json::Set(pvc, "spec", std::move(spec), a);
  return pvc;
}

absl::StatusOr<json::Document> BuildPod(const api::Job& job, const api::TaskSpec& task,
                                        int32_t index, bool forwarded) {
  json::Document pod;
  pod.SetObject();
  auto& a = pod.GetAllocator();
  SetString(pod, "apiVersion", "v1", a);
  SetString(pod, "kind", "Pod", a);

  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value& tmpl = task.pod_template ? *task.pod_template : kEmpty;
  if (!tmpl.IsObject()) {
    return absl::InvalidArgumentError(fmt::format("job {}/{} task {}: template must be an object",
                                                  job.namespace_name(), job.name(), task.name));
  }

  json::Value meta(rapidjson::kObjectType);
  if (const json::Value* m = json::Find(tmpl, "metadata"); m && m->IsObject()) {
    meta.CopyFrom(*m, a);
  }
  // Identity fields a template cannot meaningfully carry.
  for (std::string_view k : {"generateName", "uid", "resourceVersion", "creationTimestamp",
                             "deletionTimestamp", "selfLink", "ownerReferences"}) {
    json::Remove(meta, k);
  }
  const std::string name = MakePodName(job.name(), task.name, index);
  const std::string index_str = std::to_string(index);
  const std::string_view task_spec = task.name.empty() ? api::kDefaultTaskSpec : task.name;
  SetString(meta, "name", name, a);
  SetString(meta, "namespace", job.namespace_name(), a);

  json::Value& ann = json::EnsureObject(meta, "annotations", a);
  SetString(ann, api::kTaskIndexKey, index_str, a);
  SetString(ann, api::kTaskSpecKey, task_spec, a);
  SetString(ann, api::kGroupNameAnnotation, job.name(), a);
  SetString(ann, api::kJobNameKey, job.name(), a);
  SetString(ann, api::kQueueNameKey, job.spec().queue, a);
  SetString(ann, api::kJobVersionKey, std::to_string(job.status().version), a);
  SetString(ann, api::kTemplateUidKey, fmt::format("{}-{}", job.name(), task.name), a);
  SetString(ann, api::kJobRetryCountKey, std::to_string(job.status().retry_count), a);
  if (!task.topology_policy.empty()) {
    SetString(ann, api::kNumaTopologyPolicyKey, task.topology_policy, a);
  }
  CopyIfPresent(job.annotation(api::kPreemptableKey), api::kPreemptableKey, ann, a);
  CopyIfPresent(job.annotation(api::kCooldownTimeKey), api::kCooldownTimeKey, ann, a);
  CopyIfPresent(job.annotation(api::kRevocableZoneKey), api::kRevocableZoneKey, ann, a);
  if (job.annotation(api::kJdbMinAvailableKey)) {
    CopyIfPresent(job.annotation(api::kJdbMinAvailableKey), api::kJdbMinAvailableKey, ann, a);
  } else {
    CopyIfPresent(job.annotation(api::kJdbMaxUnavailableKey), api::kJdbMaxUnavailableKey, ann, a);
  }
  if (forwarded) SetString(ann, api::kJobForwardingKey, "true", a);
  // `ann` is not used below: adding "labels" to `meta` may move its members.

  json::Value& labels = json::EnsureObject(meta, "labels", a);
  SetString(labels, api::kTaskIndexKey, index_str, a);
  SetString(labels, api::kJobNameKey, job.name(), a);
  SetString(labels, api::kTaskSpecKey, task_spec, a);
  SetString(labels, api::kJobNamespaceKey, job.namespace_name(), a);
  SetString(labels, api::kQueueNameKey, job.spec().queue, a);
  CopyIfPresent(job.label(api::kPreemptableKey), api::kPreemptableKey, labels, a);
  CopyIfPresent(job.label(api::kCooldownTimeKey), api::kCooldownTimeKey, labels, a);
  if (forwarded) SetString(labels, api::kJobForwardingKey, "true", a);
  if (task.partition_policy && task.partition_policy->partition_size > 0) {
    SetString(labels, api::kPartitionIdKey,
              std::to_string(index / task.partition_policy->partition_size), a);
  }

  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(JobOwnerReference(job, a), a);
  json::Set(meta, "ownerReferences", std::move(owners), a);
  json::Set(pod, "metadata", std::move(meta), a);

  json::Value spec(rapidjson::kObjectType);
  if (const json::Value* s = json::Find(tmpl, "spec"); s && s->IsObject()) spec.CopyFrom(*s, a);
  DefaultString(spec, "schedulerName", job.spec().scheduler_name, a);
  DefaultString(spec, "priorityClassName", job.spec().priority_class_name, a);
  AddJobVolumes(job, spec, a);
  json::Set(pod, "spec", std::move(spec), a);
  return pod;
}

bool TaskDependenciesMet(const api::Job& job, const api::TaskSpec& task,
                         const std::vector<PodSnapshot>& pods) {
  if (!task.depends_on || task.depends_on->names.empty()) return true;
  auto ready = [&](const std::string& name) {
    const api::TaskSpec* dep = job.spec().FindTask(name);
    if (dep == nullptr || !dep->min_available) return true;
    int32_t n = 0;
    for (const auto& p : pods) {
      if (p.task == name && !p.terminating &&
          (p.phase == "Succeeded" || (p.phase == "Running" && p.ready))) {
        ++n;
      }
    }
    return n >= *dep->min_available;
  };
  const auto& names = task.depends_on->names;
  if (task.depends_on->iteration == "any" && names.size() >= 2) {
    return std::any_of(names.begin(), names.end(), ready);
  }
  return std::all_of(names.begin(), names.end(), ready);
}

PodSyncPlan PlanPodSync(const api::Job& job, const std::vector<PodSnapshot>& pods) {
  return PlanPodSyncImpl(job, pods, std::vector<bool>(job.spec().tasks.size(), true),
                         kMaxPodCreatesPerSync);
}

std::optional<int32_t> PodIndexIn(std::string_view job, std::string_view task,
                                  std::string_view name) {
  const size_t prefix = job.size() + 1 + task.size() + 1;
  if (name.size() <= prefix || name.substr(0, job.size()) != job || name[job.size()] != '-' ||
      name.substr(job.size() + 1, task.size()) != task || name[prefix - 1] != '-') {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(prefix);
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;  // not MakePodName's form
  int32_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || index < 0) return std::nullopt;
  return index;
}

std::vector<size_t> CreationOrder(const api::Job& job) {
  const std::vector<api::TaskSpec>& tasks = job.spec().tasks;
  std::vector<size_t> order(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) order[t] = t;
  std::optional<std::string_view> value = job.annotation(api::kTaskTopologyTaskOrderKey);
  if (!value) return order;
  std::vector<std::string> names;
  names.reserve(tasks.size());
  for (const api::TaskSpec& t : tasks) names.push_back(t.name);
  std::optional<api::TaskTopologyParse> parsed =
      api::ParseTaskTopology(std::nullopt, std::nullopt, value, names);
  // An order the webhook would refuse is not followed here either (the scheduler ignores it too
  // and says so on the PodGroup).
  if (!parsed || !parsed->errors.empty()) return order;
  const std::vector<std::string>& first = parsed->topology.task_order;
  auto rank = [&](size_t t) {
    auto it = std::find(first.begin(), first.end(), tasks[t].name);
    return it == first.end() ? first.size() : size_t(it - first.begin());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });
  return order;
}

PodSyncPlan PlanPodSyncImpl(const api::Job& job, const std::vector<PodSnapshot>& pods,
                            const std::vector<bool>& task_ready, size_t max_create) {
  PodSyncPlan plan;
  // Existing pod indexes per task (by spec position); a pod no task claims is not desired.
  std::vector<std::set<int32_t>> existing(job.spec().tasks.size());
  for (const auto& p : pods) {
    bool desired = false;
    for (size_t t = 0; t < job.spec().tasks.size(); ++t) {
      const api::TaskSpec& task = job.spec().tasks[t];
      std::optional<int32_t> index = PodIndexIn(job.name(), task.name, p.name);
      if (!index) continue;
      existing[t].insert(*index);
      desired = *index < task.replicas;
      break;
    }
    if (p.terminating || (desired && !p.out_of_sync)) continue;
    plan.remove.push_back(p.name);
  }
  for (size_t t : CreationOrder(job)) {
    const api::TaskSpec& task = job.spec().tasks[t];
    if (!task_ready[t]) continue;
    // Walks indexes 0, 1, ... skipping existing ones: at most |existing| + max_create + 1 steps.
    auto next_existing = existing[t].begin();
    for (int32_t i = 0; i < task.replicas; ++i) {
      while (next_existing != existing[t].end() && *next_existing < i) ++next_existing;
      if (next_existing != existing[t].end() && *next_existing == i) continue;
      if (plan.create.size() >= max_create) {
        plan.more_missing = true;
        return plan;
      }
      plan.create.push_back({task.name, i});
    }
  }
  return plan;
}

}  // namespace basalt::controllers
