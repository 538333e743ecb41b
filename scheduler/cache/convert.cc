#include "scheduler/cache/convert.h"

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "common/api/core.h"
#include "common/api/task_topology.h"
#include "common/api/time.h"
#include "common/api/vocabulary.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "rapidjson/document.h"
#include "scheduler/cache/vgpu.h"

namespace basalt::sched::cache {
namespace {

size_t HashCombine(size_t seed, size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

struct StringMapHash {
  size_t operator()(const std::map<std::string, std::string>& m) const {
    size_t h = m.size();
    for (const auto& [k, v] : m) {
      h = HashCombine(h, std::hash<std::string>{}(k));
      h = HashCombine(h, std::hash<std::string>{}(v));
    }
    return h;
  }
};
struct LabelSetHash {
  size_t operator()(const LabelSet& m) const {
    size_t h = m.size();
    for (const auto& [k, v] : m) {
      h = HashCombine(h, std::hash<std::string_view>{}(k));
      h = HashCombine(h, std::hash<std::string_view>{}(v));
    }
    return h;
  }
};
struct TolerationsHash {
  size_t operator()(const std::vector<Toleration>& ts) const {
    size_t h = ts.size();
    for (const Toleration& t : ts) {
      h = HashCombine(h, std::hash<std::string>{}(t.key));
      h = HashCombine(h, std::hash<std::string>{}(t.value));
      h = HashCombine(h, static_cast<size_t>(t.op));
      h = HashCombine(h, t.effect.has_value() ? static_cast<size_t>(*t.effect) + 1 : 0);
    }
    return h;
  }
};

// Process-wide: every ClusterState (and test) of the process shares them, as values are
// immutable.
SharedPool<std::map<std::string, std::string>, StringMapHash>& StringMapPool() {
  static auto* pool = new SharedPool<std::map<std::string, std::string>, StringMapHash>();
  return *pool;
}
SharedPool<LabelSet, LabelSetHash>& LabelSetPool() {
  static auto* pool = new SharedPool<LabelSet, LabelSetHash>();
  return *pool;
}
SharedPool<std::vector<Toleration>, TolerationsHash>& TolerationsPool() {
  static auto* pool = new SharedPool<std::vector<Toleration>, TolerationsHash>();
  return *pool;
}

constexpr std::string_view kPodScheduled = "PodScheduled";

TaintEffect ParseEffect(std::string_view e) {
  if (e == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (e == "NoExecute") return TaintEffect::kNoExecute;
  return TaintEffect::kNoSchedule;
}

// One matchExpressions entry. Node selectors also accept Gt and Lt; label selectors do not.
absl::StatusOr<NodeSelectorRequirement> ParseRequirement(const json::Value& e, bool node_selector) {
  using Op = NodeSelectorRequirement::Operator;
  NodeSelectorRequirement r;
  r.key = std::string(json::GetString(e, "key"));
  std::string_view op = json::GetString(e, "operator");
  if (op == "In") {
    r.op = Op::kIn;
  } else if (op == "NotIn") {
    r.op = Op::kNotIn;
  } else if (op == "Exists") {
    r.op = Op::kExists;
  } else if (op == "DoesNotExist") {
    r.op = Op::kDoesNotExist;
  } else if (node_selector && op == "Gt") {
    r.op = Op::kGt;
  } else if (node_selector && op == "Lt") {
    r.op = Op::kLt;
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "unknown {} operator \"{}\"", node_selector ? "node selector" : "label selector", op));
  }
  if (const json::Value* values = json::Find(e, "values"); values != nullptr && values->IsArray()) {
    for (const json::Value& s : values->GetArray()) r.values.emplace_back(json::AsView(s));
  }
  return r;
}

// Appends `parse(item)` for each item of the array `key` of `v` (none when it is absent or not
// an array); stops at the first error.
template <typename T, typename Parse>
absl::Status ParseEach(const json::Value& v, std::string_view key, std::vector<T>& out,
                       Parse&& parse) {
  const json::Value* items = json::Find(v, key);
  if (items == nullptr || !items->IsArray()) return absl::OkStatus();
  for (const json::Value& item : items->GetArray()) {
    BASALT_ASSIGN_OR_RETURN(T parsed, parse(item));
    out.push_back(std::move(parsed));
  }
  return absl::OkStatus();
}

absl::Status ParseRequirements(const json::Value& v, bool node_selector,
                               std::vector<NodeSelectorRequirement>& out) {
  return ParseEach(v, "matchExpressions", out,
                   [&](const json::Value& e) { return ParseRequirement(e, node_selector); });
}

absl::StatusOr<NodeSelectorTerm> ParseTerm(const json::Value& v) {
  NodeSelectorTerm term;
  BASALT_RETURN_IF_ERROR(ParseRequirements(v, /*node_selector=*/true, term.match_expressions));
  if (const json::Value* fields = json::Find(v, "matchFields");
      fields != nullptr && fields->IsArray()) {
    for (const json::Value& f : fields->GetArray()) {
      if (json::GetString(f, "key") != "metadata.name") continue;
      if (const json::Value* values = json::Find(f, "values");
          values != nullptr && values->IsArray()) {
        for (const json::Value& s : values->GetArray()) {
          term.match_node_names.emplace_back(json::AsView(s));
        }
      }
    }
  }
  return term;
}

absl::StatusOr<LabelSelector> ParseLabelSelector(const json::Value& v) {
  LabelSelector sel;
  if (const json::Value* labels = json::Find(v, "matchLabels");
      labels != nullptr && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      sel.match_labels.emplace_back(json::AsView(m.name), json::AsView(m.value));
    }
  }
  BASALT_RETURN_IF_ERROR(ParseRequirements(v, /*node_selector=*/false, sel.match_expressions));
  return sel;
}

absl::StatusOr<PodAffinityTerm> ParsePodAffinityTerm(const json::Value& v,
                                                     std::string_view pod_namespace) {
  PodAffinityTerm term;
  term.topology_key = std::string(json::GetString(v, "topologyKey"));
  if (const json::Value* sel = json::Find(v, "labelSelector"); sel != nullptr && sel->IsObject()) {
    BASALT_ASSIGN_OR_RETURN(term.selector, ParseLabelSelector(*sel));
  }
  if (const json::Value* ns = json::Find(v, "namespaces"); ns != nullptr && ns->IsArray()) {
    for (const json::Value& s : ns->GetArray()) term.namespaces.emplace_back(json::AsView(s));
  }
  if (const json::Value* sel = json::Find(v, "namespaceSelector");
      sel != nullptr && sel->IsObject()) {
    BASALT_ASSIGN_OR_RETURN(term.namespace_selector, ParseLabelSelector(*sel));
  }
  if (term.namespaces.empty() && !term.namespace_selector.has_value()) {
    term.namespaces.emplace_back(pod_namespace);
  }
  return term;
}

absl::Status ParsePodAffinityKind(const json::Value& kind, std::string_view pod_namespace,
                                  std::vector<PodAffinityTerm>& required,
                                  std::vector<WeightedPodAffinityTerm>& preferred) {
  BASALT_RETURN_IF_ERROR(
      ParseEach(kind, "requiredDuringSchedulingIgnoredDuringExecution", required,
                [&](const json::Value& t) { return ParsePodAffinityTerm(t, pod_namespace); }));
  if (const json::Value* terms =
          json::Find(kind, "preferredDuringSchedulingIgnoredDuringExecution");
      terms != nullptr && terms->IsArray()) {
    for (const json::Value& t : terms->GetArray()) {
      WeightedPodAffinityTerm w;
      w.weight = static_cast<int32_t>(json::GetInt(t, "weight"));
      const json::Value* inner = json::Find(t, "podAffinityTerm");
      if (inner == nullptr || w.weight == 0) continue;
      BASALT_ASSIGN_OR_RETURN(w.term, ParsePodAffinityTerm(*inner, pod_namespace));
      preferred.push_back(std::move(w));
    }
  }
  return absl::OkStatus();
}

void AddString(json::Value& obj, std::string_view key, std::string_view value, json::Allocator& a) {
  json::Set(obj, key, json::MakeString(value, a), a);
}

json::Value ResourceListJson(const resource::ResourceList& list, json::Allocator& a) {
  return list.ToJson(a);
}

}  // namespace

namespace {
// The typed view of a watched document; the document moves into it.
template <typename T>
absl::StatusOr<T> Decode(json::Document&& doc) {
  BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::FromDocument(std::move(doc)));
  return T::FromObject(std::move(obj));
}
}  // namespace

informer::Transform CachedPodTransform() {
  return informer::Transform::To<CachedPod>(
      "scheduler-pod",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const CachedPod>> {
        BASALT_ASSIGN_OR_RETURN(api::Pod pod, Decode<api::Pod>(std::move(doc)));
        auto out = std::make_shared<CachedPod>();
        out->pod = api::ToCompactPod(pod);
        if (out->vgpu = PodVgpuRequest(pod); out->vgpu != nullptr) {
          StripPerDeviceVgpuResources(out->pod.request);
          out->vgpu_assignment = PodVgpuAssignment(pod);
        }
        PrepareTaskInputs(*out);
        if (const api::Condition* c = pod.FindCondition(kPodScheduled);
            c != nullptr && c->status == "False") {
          out->scheduled_condition =
              PodScheduledCondition{c->reason, c->message, pod.status().nominated_node_name};
        }
        if (auto q = pod.annotation(api::kPodGroupQueueAnnotation); q.has_value()) {
          out->queue_annotation = std::string(*q);
        }
        out->has_min_member = pod.annotation(api::kGroupMinMemberAnnotation).has_value();
        if (auto v = pod.annotation(api::kPreemptableKey); v.has_value()) {
          out->preemptable_annotation = std::string(*v);
        }
        return std::shared_ptr<const CachedPod>(std::move(out));
      });
}

namespace {
template <typename T>
informer::Transform TypedTransform(std::string name) {
  return informer::Transform::To<T>(
      std::move(name), [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const T>> {
        BASALT_ASSIGN_OR_RETURN(T typed, Decode<T>(std::move(doc)));
        return std::make_shared<const T>(std::move(typed));
      });
}
}  // namespace

CachedPodGroup ToCachedPodGroup(const api::PodGroup& pg) {
  CachedPodGroup out;
  out.namespace_name = std::string(pg.namespace_name());
  out.name = std::string(pg.name());
  out.uid = std::string(pg.uid());
  out.resource_version = std::string(pg.resource_version());
  out.creation_timestamp = pg.creation_timestamp();
  out.controller = pg.controller_ref();
  out.spec = pg.spec();
  out.status = pg.status();
  std::optional<std::string_view> preemptable = pg.annotation(api::kPreemptableKey);
  if (!preemptable.has_value()) preemptable = pg.label(api::kPreemptableKey);
  if (preemptable.has_value()) out.preemptable = std::string(*preemptable);
  for (std::string_view key : {api::kTaskTopologyAffinityKey, api::kTaskTopologyAntiAffinityKey,
                               api::kTaskTopologyTaskOrderKey}) {
    if (auto v = pg.annotation(key); v.has_value()) {
      out.task_topology_annotations.emplace(std::string(key), std::string(*v));
    }
  }
  return out;
}

informer::Transform PodGroupTransform() {
  // The document is decoded and dropped here: only the compact record is stored.
  return informer::Transform::To<CachedPodGroup>(
      "scheduler-podgroup",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const CachedPodGroup>> {
        BASALT_ASSIGN_OR_RETURN(api::PodGroup pg, Decode<api::PodGroup>(std::move(doc)));
        return std::make_shared<const CachedPodGroup>(ToCachedPodGroup(pg));
      });
}
informer::Transform QueueTransform() { return TypedTransform<api::Queue>("queue-view"); }
informer::Transform PriorityClassTransform() {
  return TypedTransform<api::PriorityClass>("priorityclass-view");
}

bool IsSchedulableResourceName(std::string_view name) {
  if (name == resource::kCpu || name == resource::kMemory || name == resource::kEphemeralStorage) {
    return true;
  }
  if (name.rfind("hugepages-", 0) == 0) return true;
  // Quota-style keys (ResourceQuota pod-usage accounting, which the job controller puts in a
  // PodGroup's minResources as Volcano does) are not node resources: "requests.cpu",
  // "limits.memory", "count/pods", "requests.nvidia.com/gpu" (the plain "nvidia.com/gpu" is
  // stored next to it).
  if (name.rfind("requests.", 0) == 0 || name.rfind("limits.", 0) == 0 ||
      name.rfind("count/", 0) == 0) {
    return false;
  }
  // Extended resources are domain-qualified ("nvidia.com/gpu").
  return name.find('/') != std::string_view::npos;
}

Resource ToResource(const resource::ResourceList& list) {
  Resource r;
  for (const auto& [name, q] : list) {
    if (!IsSchedulableResourceName(name)) continue;
    int64_t v = name == resource::kMemory ? q.Value() : q.MilliValue();
    if (v == 0) continue;
    r.Set(name, v);
  }
  return r;
}

resource::ResourceList ToResourceList(const Resource& r) {
  resource::ResourceList out;
  out.Set(resource::kCpu, resource::Quantity::FromMilli(r.milli_cpu()));
  out.Set(resource::kMemory,
          resource::Quantity::FromInt(r.memory(), resource::Quantity::Format::kBinarySI));
  for (const auto& [name, milli] : r.scalars()) {
    out.Set(name, milli % 1000 == 0 ? resource::Quantity::FromInt(milli / 1000)
                                    : resource::Quantity::FromMilli(milli));
  }
  return out;
}

absl::StatusOr<NodeAffinity> ParseNodeAffinity(std::string_view affinity_json) {
  NodeAffinity out;
  if (affinity_json.empty()) return out;
  BASALT_ASSIGN_OR_RETURN(json::Document doc, json::Parse(affinity_json));
  const json::Value* na = json::Find(doc, "nodeAffinity");
  if (na == nullptr) return out;
  if (const json::Value* terms = json::FindPath(
          *na, {"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
      terms != nullptr && terms->IsArray()) {
    std::vector<NodeSelectorTerm> required;
    for (const json::Value& t : terms->GetArray()) {
      BASALT_ASSIGN_OR_RETURN(NodeSelectorTerm term, ParseTerm(t));
      required.push_back(std::move(term));
    }
    out.required = std::move(required);
  }
  if (const json::Value* prefs = json::Find(*na, "preferredDuringSchedulingIgnoredDuringExecution");
      prefs != nullptr && prefs->IsArray()) {
    for (const json::Value& p : prefs->GetArray()) {
      PreferredSchedulingTerm term;
      term.weight = static_cast<int32_t>(json::GetInt(p, "weight"));
      if (const json::Value* pref = json::Find(p, "preference"); pref != nullptr) {
        BASALT_ASSIGN_OR_RETURN(term.preference, ParseTerm(*pref));
      }
      out.preferred.push_back(std::move(term));
    }
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const PodAffinity>> ParsePodAffinity(
    std::string_view affinity_json, std::string_view pod_namespace) {
  // Most pods have no pod affinity: skip the parse for them.
  if (affinity_json.find("\"pod") == std::string_view::npos) return nullptr;
  BASALT_ASSIGN_OR_RETURN(json::Document doc, json::Parse(affinity_json));
  auto out = std::make_shared<PodAffinity>();
  if (const json::Value* pa = json::Find(doc, "podAffinity"); pa != nullptr && pa->IsObject()) {
    BASALT_RETURN_IF_ERROR(
        ParsePodAffinityKind(*pa, pod_namespace, out->required_affinity, out->preferred_affinity));
  }
  if (const json::Value* anti = json::Find(doc, "podAntiAffinity");
      anti != nullptr && anti->IsObject()) {
    BASALT_RETURN_IF_ERROR(ParsePodAffinityKind(*anti, pod_namespace, out->required_anti_affinity,
                                                out->preferred_anti_affinity));
  }
  if (out->Empty()) return nullptr;
  return std::shared_ptr<const PodAffinity>(std::move(out));
}

void PrepareTaskInputs(CachedPod& cached) {
  if (cached.task_inputs_prepared) return;
  api::CompactPod& p = cached.pod;
  cached.request = ToResource(p.request);
  // Empty inputs keep the process-wide empty value (most pods have no ports or affinity).
  // Equal label sets, node selectors and tolerations (pods of one template) share one value.
  if (!p.labels.empty()) {
    cached.labels = LabelSetPool().Intern(LabelSet(p.labels.begin(), p.labels.end()));
  }
  if (!p.node_selector.empty()) {
    cached.node_selector = StringMapPool().Intern(
        std::map<std::string, std::string>(p.node_selector.begin(), p.node_selector.end()));
  }
  if (absl::StatusOr<NodeAffinity> a = ParseNodeAffinity(p.affinity_json);
      a.ok() && !p.affinity_json.empty()) {
    cached.affinity = *std::move(a);
  }
  if (auto pa = ParsePodAffinity(p.affinity_json, p.namespace_name); pa.ok()) {
    cached.pod_affinity = *std::move(pa);
  }
  if (!p.host_ports.empty()) {
    std::vector<HostPort> ports;
    ports.reserve(p.host_ports.size());
    for (const api::HostPort& hp : p.host_ports) {
      ports.push_back(HostPort{hp.protocol.empty() ? "TCP" : hp.protocol,
                               hp.host_ip.empty() ? "0.0.0.0" : hp.host_ip, hp.host_port});
    }
    cached.host_ports = std::move(ports);
  }
  if (!p.tolerations.empty()) {
    std::vector<Toleration> tolerations;
    tolerations.reserve(p.tolerations.size());
    for (const api::Toleration& tol : p.tolerations) {
      Toleration out;
      out.key = tol.key;
      out.op = tol.op == "Exists" ? Toleration::Operator::kExists : Toleration::Operator::kEqual;
      out.value = tol.value;
      if (!tol.effect.empty()) out.effect = ParseEffect(tol.effect);
      tolerations.push_back(std::move(out));
    }
    cached.tolerations = TolerationsPool().Intern(std::move(tolerations));
  }
  // Released, not just cleared (clear() keeps a vector's buffer): the store keeps this object
  // for the pod's lifetime.
  p.request = resource::ResourceList();
  p.labels = decltype(p.labels)();
  p.node_selector = decltype(p.node_selector)();
  p.tolerations = decltype(p.tolerations)();
  p.host_ports = decltype(p.host_ports)();
  p.affinity_json = std::string();
  cached.task_inputs_prepared = true;
}

TaskInfo ToTaskInfo(const CachedPod& cached, std::string job_id) {
  if (!cached.task_inputs_prepared) {
    CachedPod prepared = cached;
    PrepareTaskInputs(prepared);
    return ToTaskInfo(prepared, std::move(job_id));
  }
  const api::CompactPod& p = cached.pod;
  TaskInfo t;
  t.uid = p.uid;
  t.name = p.name;
  t.namespace_name = p.namespace_name;
  t.job_id = std::move(job_id);
  t.role = p.task_spec;
  t.node_group = p.node_group;
  t.gpu_attributes = p.gpu_attributes;
  t.node_name = p.node_name;
  t.priority_class_name = p.priority_class_name;
  t.priority = p.priority != 0 ? p.priority : 1;
  t.preemptable = p.preemptable;
  t.preempt_never = p.preemption_policy == "Never";
  if (p.creation_timestamp.has_value()) t.creation_time = *p.creation_timestamp;
  switch (p.phase) {
    case api::PodPhase::kRunning:
      t.status = p.terminating ? TaskStatus::kReleasing : TaskStatus::kRunning;
      break;
    case api::PodPhase::kPending:
      if (p.terminating) {
        t.status = TaskStatus::kReleasing;
      } else {
        t.status = p.node_name.empty() ? TaskStatus::kPending : TaskStatus::kBound;
      }
      break;
    case api::PodPhase::kSucceeded:
      t.status = TaskStatus::kSucceeded;
      break;
    case api::PodPhase::kFailed:
      t.status = TaskStatus::kFailed;
      break;
    case api::PodPhase::kUnknown:
      t.status = TaskStatus::kUnknown;
      break;
  }
  if (IsCompletedStatus(t.status)) t.node_name.clear();
  t.resreq = cached.request;
  // The compact pod carries the effective request (init containers and overhead included).
  t.init_resreq = t.resreq;
  t.labels = cached.labels;
  t.node_selector = cached.node_selector;
  t.affinity = cached.affinity;
  t.pod_affinity = cached.pod_affinity;
  t.host_ports = cached.host_ports;
  t.tolerations = cached.tolerations;
  t.scheduled_condition = cached.scheduled_condition;
  // vGPU: the assignment counts on the node the pod is on (scheduler/cache/vgpu.h).
  t.vgpu = cached.vgpu;
  if (t.vgpu != nullptr && !t.node_name.empty() && !cached.vgpu_assignment.empty()) {
    t.vgpu_assignment = cached.vgpu_assignment;
    t.vgpu_node = t.node_name;
  }
  return t;
}

NodeInfo ToNodeInfo(const api::CompactNode& node) {
  int64_t max_pods =
      node.allocatable.Has(resource::kPods) ? node.allocatable.Get(resource::kPods).Value() : 110;
  NodeInfo n(node.name, ToResource(node.allocatable), max_pods);
  for (const auto& [k, v] : node.labels) n.labels().emplace(k, v);
  for (const api::Taint& t : node.taints) {
    n.taints().push_back(Taint{t.key, t.value, ParseEffect(t.effect)});
  }
  n.set_unschedulable(node.unschedulable);
  n.set_vgpus(NodeVgpuDevices(node.name, node.vgpu_register));
  return n;
}

PodGroupStatus ToPodGroupStatus(const api::PodGroupStatus& status) {
  PodGroupStatus out;
  if (status.phase == api::kPodGroupInqueue) {
    out.phase = PodGroupPhase::kInqueue;
  } else if (status.phase == api::kPodGroupRunning) {
    out.phase = PodGroupPhase::kRunning;
  } else if (status.phase == api::kPodGroupUnknown) {
    out.phase = PodGroupPhase::kUnknown;
  } else if (status.phase == api::kPodGroupCompleted) {
    out.phase = PodGroupPhase::kCompleted;
  } else {
    out.phase = PodGroupPhase::kPending;
  }
  out.running = status.running;
  out.succeeded = status.succeeded;
  out.failed = status.failed;
  for (const api::Condition& c : status.conditions) {
    PodGroupCondition pc;
    pc.type = c.type;
    pc.status = c.status;
    pc.transition_id = c.transition_id;
    pc.reason = c.reason;
    pc.message = c.message;
    if (c.last_transition_time.has_value()) pc.last_transition_time = *c.last_transition_time;
    out.conditions.push_back(std::move(pc));
  }
  return out;
}

std::string ShadowJobName(const CachedPod& cached) {
  const api::CompactPod& p = cached.pod;
  if (!p.owner_uid.empty() || cached.has_min_member || p.uid.empty()) return "";
  if (p.phase == api::PodPhase::kSucceeded || p.phase == api::PodPhase::kFailed) return "";
  std::string name = fmt::format("podgroup-{}", p.uid);
  if (!p.group_name.empty() && p.group_name != name) return "";
  return name;
}

JobInfo ToShadowJobInfo(const CachedPod& cached, std::string_view default_queue) {
  const api::CompactPod& p = cached.pod;
  JobInfo job{p.namespace_name, ShadowJobName(cached)};
  job.uid = fmt::format("{}/{}", job.namespace_name, job.name);
  job.queue =
      cached.queue_annotation.empty() ? std::string(default_queue) : cached.queue_annotation;
  job.min_available = 1;
  job.min_resources = cached.task_inputs_prepared ? cached.request : ToResource(p.request);
  job.priority_class_name = p.priority_class_name;
  if (const auto& v = cached.preemptable_annotation; v.has_value()) {
    job.preemptable = *v == "true";
    job.not_preemptable =
        *v == "false" || *v == "False" || *v == "FALSE" || *v == "f" || *v == "F" || *v == "0";
  }
  if (p.creation_timestamp.has_value()) job.creation_time = *p.creation_timestamp;
  job.pods_precede_group = true;
  job.shadow = true;
  job.podgroup_status.phase = PodGroupPhase::kPending;
  return job;
}

JobInfo ToJobInfo(const api::PodGroup& pg, std::string_view default_queue) {
  return ToJobInfo(ToCachedPodGroup(pg), default_queue);
}

JobInfo ToJobInfo(const CachedPodGroup& pg, std::string_view default_queue) {
  JobInfo job{pg.namespace_name, pg.name};
  job.uid = fmt::format("{}/{}", pg.namespace_name, pg.name);
  job.queue = pg.spec.queue.empty() ? std::string(default_queue) : pg.spec.queue;
  job.min_available = pg.spec.min_member;
  job.task_min_available = pg.spec.min_task_member;
  if (pg.spec.min_resources.has_value()) job.min_resources = ToResource(*pg.spec.min_resources);
  job.priority_class_name = pg.spec.priority_class_name;
  const std::optional<std::string>& preemptable = pg.preemptable;
  job.preemptable = preemptable.has_value() && *preemptable == "true";
  // Go's strconv.ParseBool spellings of false.
  job.not_preemptable =
      preemptable.has_value() &&
      (*preemptable == "false" || *preemptable == "False" || *preemptable == "FALSE" ||
       *preemptable == "f" || *preemptable == "F" || *preemptable == "0");
  if (pg.creation_timestamp.has_value()) job.creation_time = *pg.creation_timestamp;
  if (const std::optional<api::OwnerReference>& owner = pg.controller; owner.has_value()) {
    const std::string_view v = owner->api_version, k = owner->kind;
    job.pods_precede_group =
        (v == "v1" && k == "Pod") ||
        (v == "apps/v1" && (k == "ReplicaSet" || k == "StatefulSet" || k == "DaemonSet")) ||
        (v == "batch/v1" && k == "Job");
  }
  if (const auto& nt = pg.spec.network_topology; nt.has_value()) {
    job.network_topology = NetworkTopologyConstraint{.hard = nt->Hard(),
                                                     .highest_tier = nt->highest_tier_allowed,
                                                     .highest_tier_name = nt->highest_tier_name};
  }
  for (const api::SubGroupPolicy& p : pg.spec.sub_group_policy) {
    SubGroupPolicy info;
    info.name = p.name;
    info.sub_group_size = p.sub_group_size;
    info.min_sub_groups = p.min_sub_groups;
    info.match_label_keys = p.match_label_keys;
    if (!p.label_selector_json.empty()) {
      // An unparsable selector matches no pod (its pods stay in the job's own gang).
      absl::StatusOr<json::Document> doc = json::Parse(p.label_selector_json);
      absl::StatusOr<LabelSelector> sel =
          doc.ok() ? ParseLabelSelector(*doc) : absl::StatusOr<LabelSelector>(doc.status());
      if (sel.ok()) {
        info.selector = std::move(*sel);
      } else {
        LabelSelector none;  // "key In ()" holds for no label set
        none.match_expressions.push_back(
            NodeSelectorRequirement{.key = std::string(api::kTaskSpecKey),
                                    .op = NodeSelectorRequirement::Operator::kIn,
                                    .values = {}});
        info.selector = std::move(none);
      }
    }
    if (p.network_topology.has_value()) {
      info.network_topology =
          NetworkTopologyConstraint{.hard = p.network_topology->Hard(),
                                    .highest_tier = p.network_topology->highest_tier_allowed,
                                    .highest_tier_name = p.network_topology->highest_tier_name};
    }
    job.sub_group_policies.push_back(std::move(info));
  }
  job.task_topology_annotations = pg.task_topology_annotations;
  job.podgroup_status = ToPodGroupStatus(pg.status);
  return job;
}

HyperNodeInfo ToHyperNodeInfo(const api::HyperNode& hn) {
  HyperNodeInfo out;
  out.name = std::string(hn.name());
  out.tier = hn.spec().tier;
  out.tier_name = hn.spec().tier_name;
  for (const api::HyperNodeMember& m : hn.spec().members) {
    HyperNodeMemberInfo info;
    info.hypernode = m.type == api::MemberType::kHyperNode;
    info.exact_name = m.exact_name;
    info.regex_pattern = m.regex_pattern;
    info.by_labels = m.label_match;
    info.labels.insert(m.match_labels.begin(), m.match_labels.end());
    out.members.push_back(std::move(info));
  }
  return out;
}

informer::Transform HyperNodeTransform() {
  return TypedTransform<api::HyperNode>("hypernode-view");
}

QueueInfo ToQueueInfo(const api::Queue& queue) {
  QueueInfo q;
  q.name = std::string(queue.name());
  q.weight = queue.spec().weight;
  q.priority = queue.spec().priority.value_or(0);
  if (!queue.spec().capability.empty()) {
    q.capability = ToResource(queue.spec().capability);
    // An extended resource capped at 0 (nvidia.com/gpu: "0": no GPUs for this queue) is a
    // limit, not an absent dimension (which would mean unlimited).
    for (const auto& [name, quantity] : queue.spec().capability) {
      if (IsSchedulableResourceName(name) && name != resource::kCpu && name != resource::kMemory &&
          quantity.MilliValue() == 0) {
        q.capability->Set(name, 0);
      }
    }
  }
  if (!queue.spec().deserved.empty()) q.deserved = ToResource(queue.spec().deserved);
  q.guarantee = ToResource(queue.spec().guarantee);
  q.reclaimable = queue.spec().Reclaimable();
  q.node_group_affinity = {queue.spec().node_group_affinity.required,
                           queue.spec().node_group_affinity.preferred};
  q.node_group_anti_affinity = {queue.spec().node_group_anti_affinity.required,
                                queue.spec().node_group_anti_affinity.preferred};
  const std::string& state = queue.status().state;
  if (state == api::kQueueClosed) {
    q.state = QueueState::kClosed;
  } else if (state == api::kQueueClosing) {
    q.state = QueueState::kClosing;
  } else if (state == api::kQueueUnknown) {
    q.state = QueueState::kUnknown;
  }
  q.parent = queue.spec().parent;
  q.hierarchy = std::string(queue.annotation(api::kHierarchyAnnotation).value_or(""));
  q.hierarchy_weights =
      std::string(queue.annotation(api::kHierarchyWeightsAnnotation).value_or(""));
  if (auto t = queue.creation_timestamp(); t.has_value()) q.creation_time = *t;
  q.status_allocated = ToResource(queue.status().allocated);
  q.status_deserved = ToResource(queue.status().deserved);
  q.status_guarantee = ToResource(queue.status().guarantee);
  return q;
}

std::string PodGroupStatusPatch(const PodGroupStatus& status) {
  json::Document doc(rapidjson::kObjectType);
  json::Allocator& a = doc.GetAllocator();
  json::Value& st = json::EnsureObject(doc, "status", a);
  AddString(st, "phase", PodGroupPhaseName(status.phase), a);
  json::Set(st, "running", json::Value(status.running), a);
  json::Set(st, "succeeded", json::Value(status.succeeded), a);
  json::Set(st, "failed", json::Value(status.failed), a);
  json::Value conds(rapidjson::kArrayType);
  for (const PodGroupCondition& c : status.conditions) {
    json::Value v(rapidjson::kObjectType);
    AddString(v, "type", c.type, a);
    AddString(v, "status", c.status, a);
    if (!c.transition_id.empty()) AddString(v, "transitionID", c.transition_id, a);
    if (!c.reason.empty()) AddString(v, "reason", c.reason, a);
    if (!c.message.empty()) AddString(v, "message", c.message, a);
    Timestamp t = c.last_transition_time == Timestamp{} ? std::chrono::system_clock::now()
                                                        : c.last_transition_time;
    AddString(v, "lastTransitionTime", api::FormatRfc3339(t), a);
    conds.PushBack(v, a);
  }
  json::Set(st, "conditions", std::move(conds), a);
  return json::Serialize(doc);
}

std::string PodConditionPatch(const PodScheduledCondition& condition, Timestamp now) {
  json::Document doc(rapidjson::kObjectType);
  json::Allocator& a = doc.GetAllocator();
  json::Value& st = json::EnsureObject(doc, "status", a);
  json::Value c(rapidjson::kObjectType);
  AddString(c, "type", kPodScheduled, a);
  AddString(c, "status", "False", a);
  AddString(c, "reason", condition.reason, a);
  AddString(c, "message", condition.message, a);
  AddString(c, "lastTransitionTime", api::FormatRfc3339(now), a);
  json::Value conds(rapidjson::kArrayType);
  conds.PushBack(c, a);
  json::Set(st, "conditions", std::move(conds), a);
  if (!condition.nominated_node_name.empty()) {
    AddString(st, "nominatedNodeName", condition.nominated_node_name, a);
  }
  return json::Serialize(doc);
}

std::string DisruptionTargetPatch(std::string_view scheduler_name, Timestamp now) {
  json::Document doc(rapidjson::kObjectType);
  json::Allocator& a = doc.GetAllocator();
  json::Value& st = json::EnsureObject(doc, "status", a);
  json::Value c(rapidjson::kObjectType);
  AddString(c, "type", api::kDisruptionTargetCondition, a);
  AddString(c, "status", "True", a);
  AddString(c, "reason", api::kPreemptionBySchedulerReason, a);
  AddString(c, "message",
            fmt::format("{}: preempting to accommodate a higher priority pod", scheduler_name), a);
  AddString(c, "lastTransitionTime", api::FormatRfc3339(now), a);
  json::Value conds(rapidjson::kArrayType);
  conds.PushBack(c, a);
  json::Set(st, "conditions", std::move(conds), a);
  return json::Serialize(doc);
}

namespace {

// `now`, with the dimensions of `previous` it lacks as "0" (a merge patch keeps absent keys).
resource::ResourceList WithDroppedAsZero(const Resource& now, const Resource& previous) {
  resource::ResourceList list = ToResourceList(now);
  for (const std::string& name : previous.Names()) {
    if (!list.Has(name)) list.Set(name, resource::Quantity());
  }
  return list;
}

}  // namespace

std::string QueueAllocatedPatch(const Resource& allocated, const Resource& previous) {
  return QueueStatusPatch(QueueStatusUpdate{"", allocated}, previous, Resource(), Resource());
}

std::string QueueStatusPatch(const QueueStatusUpdate& update, const Resource& previous_allocated,
                             const Resource& previous_deserved,
                             const Resource& previous_guarantee) {
  json::Document doc(rapidjson::kObjectType);
  json::Allocator& a = doc.GetAllocator();
  json::Value& st = json::EnsureObject(doc, "status", a);
  json::Set(st, "allocated",
            ResourceListJson(WithDroppedAsZero(update.allocated, previous_allocated), a), a);
  if (update.deserved.has_value()) {
    json::Set(st, "deserved",
              ResourceListJson(WithDroppedAsZero(*update.deserved, previous_deserved), a), a);
  }
  if (update.guarantee.has_value()) {
    json::Set(st, "guarantee",
              ResourceListJson(WithDroppedAsZero(*update.guarantee, previous_guarantee), a), a);
  }
  return json::Serialize(doc);
}

}  // namespace basalt::sched::cache
