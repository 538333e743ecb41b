#include "common/api/scheduling.h"

#include "common/api/codec.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {
namespace {

void WriteOptCounter(json::Value& obj, std::string_view key, int32_t v, json::Allocator& a) {
  if (v != 0) {
    WriteInt(obj, key, v, a);
  } else {
    EraseMember(obj, key);
  }
}

void TruncateToSeconds(std::optional<Time>& t) {
  if (t.has_value()) {
    *t = FloorToSeconds(*t);
  }
}

}  // namespace

// --- Queue -----------------------------------------------------------------------------

Queue Queue::Make(std::string_view name) {
  Queue q{Object()};
  q.SetApiVersionKind(kSchedulingApiVersion, "Queue");
  q.SetName(name);
  q.EnsurePath({"spec"});
  return q;
}

absl::StatusOr<Queue> Queue::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Queue> Queue::FromObject(Object obj) {
  Queue q(std::move(obj));
  BASALT_RETURN_IF_ERROR(q.CheckKind("Queue"));
  absl::Status s = q.Decode();
  if (!s.ok()) return Annotate(s, q.Describe("Queue"));
  return q;
}

absl::Status Queue::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.weight = spec.Int32("weight", 1);
  spec_.capability = spec.Resources("capability");
  spec_.deserved = spec.Resources("deserved");
  spec_.guarantee = spec.Child("guarantee").Resources("resource");
  spec_.reclaimable = spec.OptBool("reclaimable");
  spec_.parent = spec.String("parent");
  spec_.priority = spec.OptInt32("priority");
  spec_.type = spec.String("type");
  spec_.dequeue_strategy = spec.String("dequeueStrategy");
  spec.ObjectAt("affinity");
  spec_.affinity_json = spec.Raw("affinity");
  FieldReader affinity = spec.Child("affinity");
  for (auto [key, terms] : {std::pair{"nodeGroupAffinity", &spec_.node_group_affinity},
                            std::pair{"nodeGroupAntiAffinity", &spec_.node_group_anti_affinity}}) {
    FieldReader r = affinity.Child(key);
    terms->required = r.StringList("requiredDuringSchedulingIgnoredDuringExecution");
    terms->preferred = r.StringList("preferredDuringSchedulingIgnoredDuringExecution");
  }
  FieldReader status = root.Child("status");
  status_.state = status.String("state");
  status_.unknown = status.Int32("unknown");
  status_.pending = status.Int32("pending");
  status_.running = status.Int32("running");
  status_.inqueue = status.Int32("inqueue");
  status_.completed = status.Int32("completed");
  status_.allocated = status.Resources("allocated");
  status_.deserved = status.Resources("deserved");
  status_.guarantee = status.Resources("guarantee");
  return root.status();
}

void Queue::SetStatus(const QueueStatus& st) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"status"});
  WriteOptString(s, "state", st.state, a);
  WriteOptCounter(s, "unknown", st.unknown, a);
  WriteOptCounter(s, "pending", st.pending, a);
  WriteOptCounter(s, "running", st.running, a);
  WriteOptCounter(s, "inqueue", st.inqueue, a);
  WriteOptCounter(s, "completed", st.completed, a);
  WriteResources(s, "allocated", st.allocated, a);
  status_ = st;
}

// --- PodGroup --------------------------------------------------------------------------

PodGroup PodGroup::Make(std::string_view ns, std::string_view name) {
  PodGroup pg{Object()};
  pg.SetApiVersionKind(kSchedulingApiVersion, "PodGroup");
  pg.SetName(name);
  pg.SetNamespace(ns);
  pg.EnsurePath({"spec"});
  return pg;
}

absl::StatusOr<PodGroup> PodGroup::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<PodGroup> PodGroup::FromObject(Object obj) {
  PodGroup pg(std::move(obj));
  BASALT_RETURN_IF_ERROR(pg.CheckKind("PodGroup"));
  absl::Status s = pg.Decode();
  if (!s.ok()) return Annotate(s, pg.Describe("PodGroup"));
  return pg;
}

absl::Status PodGroup::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.min_member = spec.Int32("minMember");
  if (const json::Value* mtm = spec.ObjectAt("minTaskMember")) {
    FieldReader r(mtm, "spec.minTaskMember");
    for (auto it = mtm->MemberBegin(); it != mtm->MemberEnd(); ++it) {
      std::string_view task = json::AsView(it->name);
      spec_.min_task_member[std::string(task)] = r.Int32(task);
    }
    if (!r.ok()) return r.status();
  }
  spec_.min_resources = spec.OptResources("minResources");
  spec_.queue = spec.String("queue");
  spec_.priority_class_name = spec.String("priorityClassName");
  spec_.network_topology = DecodeNetworkTopology(spec);
  spec_.network_topology_json = spec.Raw("networkTopology");
  for (FieldReader g : spec.Elements("subGroupPolicy")) {
    SubGroupPolicy p;
    p.name = g.String("name");
    p.sub_group_size = g.OptInt32("subGroupSize").value_or(1);
    p.min_sub_groups = g.Int32("minSubGroups");
    if (g.ObjectAt("labelSelector") != nullptr) p.label_selector_json = g.Raw("labelSelector");
    p.match_label_keys = g.StringList("matchLabelKeys");
    p.network_topology = DecodeNetworkTopology(g);
    spec_.sub_group_policy.push_back(std::move(p));
  }
  FieldReader status = root.Child("status");
  status_.phase = status.String("phase");
  status_.conditions = status.Conditions("conditions");
  status_.running = status.Int32("running");
  status_.succeeded = status.Int32("succeeded");
  status_.failed = status.Int32("failed");
  return root.status();
}

const Condition* PodGroup::FindCondition(std::string_view type) const {
  for (const Condition& c : status_.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void PodGroup::SetSpec(const PodGroupSpec& sp) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"spec"});
  WriteInt(s, "minMember", sp.min_member, a);
  if (sp.min_task_member.empty()) {
    EraseMember(s, "minTaskMember");
  } else {
    json::Value m(rapidjson::kObjectType);
    for (const auto& [task, n] : sp.min_task_member) {
      m.AddMember(json::MakeString(task, a), json::Value(n), a);
    }
    json::Set(s, "minTaskMember", std::move(m), a);
  }
  if (sp.min_resources.has_value()) {
    WriteResources(s, "minResources", *sp.min_resources, a);
  } else {
    EraseMember(s, "minResources");
  }
  WriteOptString(s, "queue", sp.queue, a);
  WriteOptString(s, "priorityClassName", sp.priority_class_name, a);
  if (sp.network_topology_json.empty() && sp.network_topology.has_value()) {
    json::Set(s, "networkTopology", EncodeNetworkTopology(*sp.network_topology, a), a);
  } else {
    // An unparsable networkTopology cannot come from Decode; ignore it rather than fail.
    (void)WriteRaw(s, "networkTopology", sp.network_topology_json, a);
  }
  // subGroupPolicy is not written: the decoded list stays what the document holds.
  std::vector<SubGroupPolicy> sub_groups = std::move(spec_.sub_group_policy);
  spec_ = sp;
  spec_.sub_group_policy = std::move(sub_groups);
}

void PodGroup::SetSubGroupPolicy(const std::vector<SubGroupPolicy>& policies) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"spec"});
  if (policies.empty()) {
    EraseMember(s, "subGroupPolicy");
    spec_.sub_group_policy.clear();
    return;
  }
  json::Value list(rapidjson::kArrayType);
  for (const SubGroupPolicy& p : policies) {
    json::Value g(rapidjson::kObjectType);
    WriteString(g, "name", p.name, a);
    WriteInt(g, "subGroupSize", p.sub_group_size, a);
    WriteInt(g, "minSubGroups", p.min_sub_groups, a);
    // An unparsable selector cannot come from Decode or MatchLabelsSelectorJson; skip it.
    (void)WriteRaw(g, "labelSelector", p.label_selector_json, a);
    if (!p.match_label_keys.empty()) WriteStringList(g, "matchLabelKeys", p.match_label_keys, a);
    if (p.network_topology) {
      json::Set(g, "networkTopology", EncodeNetworkTopology(*p.network_topology, a), a);
    }
    list.PushBack(std::move(g), a);
  }
  json::Set(s, "subGroupPolicy", std::move(list), a);
  spec_.sub_group_policy = policies;
}

std::string MatchLabelsSelectorJson(const StringMap& match_labels) {
  json::Document d;
  d.SetObject();
  WriteStringMap(d, "matchLabels", match_labels, d.GetAllocator());
  return json::Serialize(d);
}

void PodGroup::SetStatus(const PodGroupStatus& st) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"status"});
  WriteOptString(s, "phase", st.phase, a);
  if (st.conditions.empty()) {
    EraseMember(s, "conditions");
  } else {
    WriteConditions(s, "conditions", st.conditions, a);
  }
  WriteOptCounter(s, "running", st.running, a);
  WriteOptCounter(s, "succeeded", st.succeeded, a);
  WriteOptCounter(s, "failed", st.failed, a);
  status_ = st;
  for (Condition& c : status_.conditions) {
    TruncateToSeconds(c.last_transition_time);
    TruncateToSeconds(c.last_probe_time);
  }
}

}  // namespace basalt::api
