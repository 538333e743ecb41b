#pragma once
// Typed views of the Kubernetes built-in kinds Basalt reads or writes: Pod, Node,
// PriorityClass, Namespace (core/v1, scheduling.k8s.io/v1), Lease (coordination.k8s.io/v1)
// and Event (core/v1).
//
// Each view is an Object (the raw JSON document, kept whole) plus structs decoded at parse
// time for the fields Basalt uses. Parsing fails with kInvalidArgument naming the object and
// the field path when a used field has the wrong type ("Pod ns/p: spec.containers[0].resources
// .requests: resource \"cpu\": invalid quantity ..."); fields Basalt ignores are never checked.
// The decoded structs reflect the document as parsed; only the Set* methods of a view keep
// both in sync. Copies are deep. Thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/api/vocabulary.h"
#include "common/resource/resource_list.h"

namespace basalt::api {

// --- Pod -------------------------------------------------------------------------------

struct Toleration {
  std::string key;
  std::string op;  // "Exists" or "Equal" (empty means Equal)
  std::string value;
  std::string effect;  // empty matches all effects
  std::optional<int64_t> toleration_seconds;

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// A container port that binds a port on the node (spec.containers[].ports[] with hostPort > 0);
// ports without a hostPort are not decoded, nothing in Basalt needs them.
struct HostPort {
  int32_t host_port = 0;
  std::string protocol;  // as written ("" when absent; the API server defaults it to TCP)
  std::string host_ip;   // as written ("" when absent: every address)

  friend bool operator==(const HostPort&, const HostPort&) = default;
};

struct Container {
  std::string name;
  resource::ResourceList requests;
  resource::ResourceList limits;
  bool restartable = false;  // init containers with restartPolicy: Always (sidecars)
  std::vector<HostPort> host_ports;
};

struct PodSpec {
  std::string scheduler_name;  // defaulted to "default-scheduler" by the API server
  std::string node_name;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string preemption_policy;
  std::string restart_policy;
  StringMap node_selector;
  std::vector<Toleration> tolerations;
  std::string affinity_json;  // spec.affinity as compact JSON ("" if absent)
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  resource::ResourceList overhead;
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  int32_t restart_count = 0;
  std::string state;                      // "waiting", "running", "terminated" or "" (unknown)
  std::string reason;                     // of the waiting/terminated state
  std::optional<int32_t> exit_code;       // state.terminated.exitCode
  std::optional<int32_t> last_exit_code;  // lastState.terminated.exitCode
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::string reason;
  std::string message;
  std::string nominated_node_name;
  std::optional<Time> start_time;
  std::vector<Condition> conditions;
  std::vector<ContainerStatus> container_statuses;
  std::vector<ContainerStatus> init_container_statuses;
};

class Pod : public Object {
 public:
  static absl::StatusOr<Pod> Parse(std::string_view json_text);
  static absl::StatusOr<Pod> FromObject(Object obj);

  const PodSpec& spec() const { return spec_; }
  const PodStatus& status() const { return status_; }

  // The scheduling request: containers summed, raised to each init container, plus overhead;
  // a resource with a limit but no request counts its limit (Kubernetes defaulting), so this
  // also works for pod templates that the API server has not defaulted.
  resource::ResourceList EffectiveRequest() const;
  // PodGroup name from annotation scheduling.k8s.io/group-name (Volcano's key), falling back
  // to scheduling.volcano.sh/group-name; "" if neither is set.
  std::string_view GroupName() const;
  // Phase Succeeded or Failed.
  bool IsTerminated() const;
  // The status condition of `type`, if present.
  const Condition* FindCondition(std::string_view type) const;

 private:
  explicit Pod(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  PodSpec spec_;
  PodStatus status_;
};

// --- Node ------------------------------------------------------------------------------

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  std::optional<Time> time_added;

  friend bool operator==(const Taint&, const Taint&) = default;
};

class Node : public Object {
 public:
  static absl::StatusOr<Node> Parse(std::string_view json_text);
  static absl::StatusOr<Node> FromObject(Object obj);

  const resource::ResourceList& capacity() const { return capacity_; }
  // status.allocatable, or capacity when allocatable is absent (as the scheduler does).
  const resource::ResourceList& allocatable() const { return allocatable_; }
  const std::vector<Taint>& taints() const { return taints_; }
  bool unschedulable() const { return unschedulable_; }
  const std::vector<Condition>& conditions() const { return conditions_; }
  // True iff the Ready condition is "True".
  bool Ready() const;

 private:
  explicit Node(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  resource::ResourceList capacity_;
  resource::ResourceList allocatable_;
  std::vector<Taint> taints_;
  bool unschedulable_ = false;
  std::vector<Condition> conditions_;
};

// --- PriorityClass (scheduling.k8s.io/v1) -----------------------------------------------

class PriorityClass : public Object {
 public:
  static absl::StatusOr<PriorityClass> Parse(std::string_view json_text);
  static absl::StatusOr<PriorityClass> FromObject(Object obj);

  int32_t value() const { return value_; }
  bool global_default() const { return global_default_; }
  // "PreemptLowerPriority" (the default when absent) or "Never".
  const std::string& preemption_policy() const { return preemption_policy_; }
  const std::string& description() const { return description_; }

 private:
  explicit PriorityClass(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  int32_t value_ = 0;
  bool global_default_ = false;
  std::string preemption_policy_;
  std::string description_;
};

// --- Namespace -------------------------------------------------------------------------

class Namespace : public Object {
 public:
  static absl::StatusOr<Namespace> Parse(std::string_view json_text);
  static absl::StatusOr<Namespace> FromObject(Object obj);

  // status.phase: "Active" or "Terminating".
  const std::string& phase() const { return phase_; }

 private:
  explicit Namespace(Object obj) : Object(std::move(obj)) {}
  std::string phase_;
};

// --- Lease (coordination.k8s.io/v1) ----------------------------------------------------

struct LeaseSpec {
  std::string holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<Time> acquire_time;  // MicroTime on the wire
  std::optional<Time> renew_time;    // MicroTime on the wire
  std::optional<int32_t> lease_transitions;

  friend bool operator==(const LeaseSpec&, const LeaseSpec&) = default;
};

class Lease : public Object {
 public:
  // A new Lease object (apiVersion/kind/metadata set, empty spec).
  static Lease Make(std::string_view ns, std::string_view name);
  static absl::StatusOr<Lease> Parse(std::string_view json_text);
  static absl::StatusOr<Lease> FromObject(Object obj);

  const LeaseSpec& spec() const { return spec_; }
  // Replaces the known spec fields (times written as RFC 3339 with microseconds).
  void SetSpec(const LeaseSpec& spec);

 private:
  explicit Lease(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  LeaseSpec spec_;
};

// --- Event (core/v1) -------------------------------------------------------------------

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;

  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

// A reference to `obj` for involvedObject.
ObjectReference ReferenceTo(const Object& obj);

struct EventFields {
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  std::string type;  // "Normal" or "Warning"
  std::string source_component;
  std::string source_host;
  std::string reporting_component;
  std::string reporting_instance;
  std::string action;
  int32_t count = 1;
  std::optional<Time> first_timestamp;
  std::optional<Time> last_timestamp;
};

class Event : public Object {
 public:
  // A new core/v1 Event in the involved object's namespace ("default" if cluster-scoped),
  // named "<object name>.<suffix>" as client-go's recorder does (suffix: a unique hex id).
  static Event Make(const EventFields& fields, std::string_view name_suffix);
  static absl::StatusOr<Event> Parse(std::string_view json_text);
  static absl::StatusOr<Event> FromObject(Object obj);

  const EventFields& fields() const { return fields_; }
  // Updates count and lastTimestamp (for a repeated event).
  void SetCount(int32_t count, Time last_timestamp);

 private:
  explicit Event(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  EventFields fields_;
};

}  // namespace basalt::api
