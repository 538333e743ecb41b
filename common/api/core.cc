#include "common/api/core.h"

#include "common/api/codec.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {
namespace {

Container DecodeContainer(FieldReader& c, bool init) {
  Container out;
  out.name = c.String("name");
  FieldReader res = c.Child("resources");
  out.requests = res.Resources("requests");
  out.limits = res.Resources("limits");
  out.restartable = init && c.String("restartPolicy") == "Always";
  for (FieldReader& port : c.Elements("ports")) {
    const int32_t host_port = port.Int32("hostPort");
    if (host_port <= 0) continue;
    out.host_ports.push_back(HostPort{host_port, port.String("protocol"), port.String("hostIP")});
  }
  return out;
}

ContainerStatus DecodeContainerStatus(FieldReader& c) {
  ContainerStatus out;
  out.name = c.String("name");
  out.ready = c.Bool("ready");
  out.restart_count = c.Int32("restartCount");
  FieldReader state = c.Child("state");
  for (std::string_view s : {"waiting", "running", "terminated"}) {
    if (state.ObjectAt(s) != nullptr) {
      out.state = std::string(s);
      FieldReader detail = state.Child(s);
      out.reason = detail.String("reason");
      if (s == "terminated") out.exit_code = detail.OptInt32("exitCode");
    }
  }
  FieldReader last = c.Child("lastState").Child("terminated");
  out.last_exit_code = last.OptInt32("exitCode");
  return out;
}

}  // namespace

// --- Pod -------------------------------------------------------------------------------

absl::StatusOr<Pod> Pod::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Pod> Pod::FromObject(Object obj) {
  Pod pod(std::move(obj));
  BASALT_RETURN_IF_ERROR(pod.CheckKind("Pod"));
  absl::Status s = pod.Decode();
  if (!s.ok()) return Annotate(s, pod.Describe("Pod"));
  return pod;
}

absl::Status Pod::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.scheduler_name = spec.String("schedulerName");
  spec_.node_name = spec.String("nodeName");
  spec_.priority = spec.OptInt32("priority");
  spec_.priority_class_name = spec.String("priorityClassName");
  spec_.preemption_policy = spec.String("preemptionPolicy");
  spec_.restart_policy = spec.String("restartPolicy");
  spec_.node_selector = spec.StringMapAt("nodeSelector");
  for (FieldReader& t : spec.Elements("tolerations")) {
    spec_.tolerations.push_back(Toleration{t.String("key"), t.String("operator"), t.String("value"),
                                           t.String("effect"), t.OptInt("tolerationSeconds")});
  }
  spec.ObjectAt("affinity");
  spec_.affinity_json = spec.Raw("affinity");
  for (FieldReader& c : spec.Elements("containers")) {
    spec_.containers.push_back(DecodeContainer(c, false));
  }
  for (FieldReader& c : spec.Elements("initContainers")) {
    spec_.init_containers.push_back(DecodeContainer(c, true));
  }
  spec_.overhead = spec.Resources("overhead");

  FieldReader status = root.Child("status");
  status_.phase = status.String("phase");
  status_.reason = status.String("reason");
  status_.message = status.String("message");
  status_.nominated_node_name = status.String("nominatedNodeName");
  status_.start_time = status.OptTime("startTime");
  status_.conditions = status.Conditions("conditions");
  for (FieldReader& c : status.Elements("containerStatuses")) {
    status_.container_statuses.push_back(DecodeContainerStatus(c));
  }
  for (FieldReader& c : status.Elements("initContainerStatuses")) {
    status_.init_container_statuses.push_back(DecodeContainerStatus(c));
  }
  return root.status();
}

resource::ResourceList Pod::EffectiveRequest() const {
  std::vector<resource::ResourceList> containers;
  containers.reserve(spec_.containers.size());
  for (const Container& c : spec_.containers) {
    containers.push_back(resource::RequestsOrLimits(c.requests, c.limits));
  }
  std::vector<resource::InitContainerRequests> inits;
  inits.reserve(spec_.init_containers.size());
  for (const Container& c : spec_.init_containers) {
    inits.push_back({resource::RequestsOrLimits(c.requests, c.limits), c.restartable});
  }
  return resource::PodEffectiveRequest(containers, inits, spec_.overhead);
}

std::string_view Pod::GroupName() const {
  if (auto g = annotation(kGroupNameAnnotation); g.has_value() && !g->empty()) return *g;
  return annotation(kVolcanoGroupNameAnnotation).value_or(std::string_view());
}

bool Pod::IsTerminated() const { return status_.phase == "Succeeded" || status_.phase == "Failed"; }

const Condition* Pod::FindCondition(std::string_view type) const {
  for (const Condition& c : status_.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// --- Node ------------------------------------------------------------------------------

absl::StatusOr<Node> Node::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Node> Node::FromObject(Object obj) {
  Node node(std::move(obj));
  BASALT_RETURN_IF_ERROR(node.CheckKind("Node"));
  absl::Status s = node.Decode();
  if (!s.ok()) return Annotate(s, node.Describe("Node"));
  return node;
}

absl::Status Node::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  unschedulable_ = spec.Bool("unschedulable");
  for (FieldReader& t : spec.Elements("taints")) {
    taints_.push_back(
        Taint{t.String("key"), t.String("value"), t.String("effect"), t.OptTime("timeAdded")});
  }
  FieldReader status = root.Child("status");
  capacity_ = status.Resources("capacity");
  allocatable_ = status.OptResources("allocatable").value_or(capacity_);
  conditions_ = status.Conditions("conditions");
  return root.status();
}

bool Node::Ready() const {
  for (const Condition& c : conditions_) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

// --- PriorityClass ---------------------------------------------------------------------

absl::StatusOr<PriorityClass> PriorityClass::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<PriorityClass> PriorityClass::FromObject(Object obj) {
  PriorityClass pc(std::move(obj));
  BASALT_RETURN_IF_ERROR(pc.CheckKind("PriorityClass"));
  absl::Status s = pc.Decode();
  if (!s.ok()) return Annotate(s, pc.Describe("PriorityClass"));
  return pc;
}

absl::Status PriorityClass::Decode() {
  FieldReader root(&doc(), "");
  value_ = root.Int32("value");
  global_default_ = root.Bool("globalDefault");
  preemption_policy_ = root.OptString("preemptionPolicy").value_or("PreemptLowerPriority");
  description_ = root.String("description");
  return root.status();
}

// --- Namespace -------------------------------------------------------------------------

absl::StatusOr<Namespace> Namespace::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Namespace> Namespace::FromObject(Object obj) {
  Namespace ns(std::move(obj));
  BASALT_RETURN_IF_ERROR(ns.CheckKind("Namespace"));
  FieldReader root(&ns.doc(), "");
  ns.phase_ = root.Child("status").String("phase");
  if (!root.ok()) return Annotate(root.status(), ns.Describe("Namespace"));
  return ns;
}

// --- Lease -----------------------------------------------------------------------------

Lease Lease::Make(std::string_view ns, std::string_view name) {
  Lease lease{Object()};
  lease.SetApiVersionKind("coordination.k8s.io/v1", "Lease");
  lease.SetName(name);
  lease.SetNamespace(ns);
  lease.EnsurePath({"spec"});
  return lease;
}

absl::StatusOr<Lease> Lease::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Lease> Lease::FromObject(Object obj) {
  Lease lease(std::move(obj));
  BASALT_RETURN_IF_ERROR(lease.CheckKind("Lease"));
  absl::Status s = lease.Decode();
  if (!s.ok()) return Annotate(s, lease.Describe("Lease"));
  return lease;
}

absl::Status Lease::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.holder_identity = spec.String("holderIdentity");
  spec_.lease_duration_seconds = spec.OptInt32("leaseDurationSeconds");
  spec_.acquire_time = spec.OptTime("acquireTime");
  spec_.renew_time = spec.OptTime("renewTime");
  spec_.lease_transitions = spec.OptInt32("leaseTransitions");
  return root.status();
}

void Lease::SetSpec(const LeaseSpec& spec) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"spec"});
  WriteOptString(s, "holderIdentity", spec.holder_identity, a);
  WriteOptInt(s, "leaseDurationSeconds", spec.lease_duration_seconds, a);
  if (spec.acquire_time.has_value()) {
    WriteMicroTime(s, "acquireTime", *spec.acquire_time, a);
  } else {
    EraseMember(s, "acquireTime");
  }
  if (spec.renew_time.has_value()) {
    WriteMicroTime(s, "renewTime", *spec.renew_time, a);
  } else {
    EraseMember(s, "renewTime");
  }
  WriteOptInt(s, "leaseTransitions", spec.lease_transitions, a);
  spec_ = spec;
  // Keep the struct equal to what a re-parse would give (microsecond precision).
  for (std::optional<Time>* t : {&spec_.acquire_time, &spec_.renew_time}) {
    if (t->has_value()) **t = FloorToMicros(**t);
  }
}

// --- Event -----------------------------------------------------------------------------

ObjectReference ReferenceTo(const Object& obj) {
  return ObjectReference{std::string(obj.api_version()),
                         std::string(obj.kind()),
                         std::string(obj.namespace_name()),
                         std::string(obj.name()),
                         std::string(obj.uid()),
                         std::string(obj.resource_version()),
                         ""};
}

Event Event::Make(const EventFields& f, std::string_view name_suffix) {
  Event ev{Object()};
  ev.SetApiVersionKind("v1", "Event");
  ev.SetName(fmt::format("{}.{}", f.involved_object.name, name_suffix));
  ev.SetNamespace(f.involved_object.namespace_name.empty() ? "default"
                                                           : f.involved_object.namespace_name);
  json::Allocator& a = ev.allocator();
  json::Value& root = ev.mutable_doc();
  json::Value& ref = ev.EnsurePath({"involvedObject"});
  WriteOptString(ref, "apiVersion", f.involved_object.api_version, a);
  WriteOptString(ref, "kind", f.involved_object.kind, a);
  WriteOptString(ref, "namespace", f.involved_object.namespace_name, a);
  WriteOptString(ref, "name", f.involved_object.name, a);
  WriteOptString(ref, "uid", f.involved_object.uid, a);
  WriteOptString(ref, "resourceVersion", f.involved_object.resource_version, a);
  WriteOptString(ref, "fieldPath", f.involved_object.field_path, a);
  WriteOptString(root, "reason", f.reason, a);
  WriteOptString(root, "message", f.message, a);
  WriteOptString(root, "type", f.type, a);
  json::Value& source = ev.EnsurePath({"source"});
  WriteOptString(source, "component", f.source_component, a);
  WriteOptString(source, "host", f.source_host, a);
  WriteOptString(root, "reportingComponent", f.reporting_component, a);
  WriteOptString(root, "reportingInstance", f.reporting_instance, a);
  WriteOptString(root, "action", f.action, a);
  WriteInt(root, "count", f.count, a);
  WriteOptTime(root, "firstTimestamp", f.first_timestamp, a);
  WriteOptTime(root, "lastTimestamp", f.last_timestamp, a);
  ev.fields_ = f;
  return ev;
}

absl::StatusOr<Event> Event::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Event> Event::FromObject(Object obj) {
  Event ev(std::move(obj));
  BASALT_RETURN_IF_ERROR(ev.CheckKind("Event"));
  absl::Status s = ev.Decode();
  if (!s.ok()) return Annotate(s, ev.Describe("Event"));
  return ev;
}

absl::Status Event::Decode() {
  FieldReader root(&doc(), "");
  FieldReader ref = root.Child("involvedObject");
  fields_.involved_object =
      ObjectReference{ref.String("apiVersion"), ref.String("kind"), ref.String("namespace"),
                      ref.String("name"),       ref.String("uid"),  ref.String("resourceVersion"),
                      ref.String("fieldPath")};
  fields_.reason = root.String("reason");
  fields_.message = root.String("message");
  fields_.type = root.String("type");
  FieldReader source = root.Child("source");
  fields_.source_component = source.String("component");
  fields_.source_host = source.String("host");
  fields_.reporting_component = root.String("reportingComponent");
  fields_.reporting_instance = root.String("reportingInstance");
  fields_.action = root.String("action");
  fields_.count = root.Int32("count", 1);
  fields_.first_timestamp = root.OptTime("firstTimestamp");
  fields_.last_timestamp = root.OptTime("lastTimestamp");
  return root.status();
}

void Event::SetCount(int32_t count, Time last_timestamp) {
  WriteInt(mutable_doc(), "count", count, allocator());
  WriteTime(mutable_doc(), "lastTimestamp", last_timestamp, allocator());
  fields_.count = count;
  fields_.last_timestamp = FloorToSeconds(last_timestamp);
}

}  // namespace basalt::api
