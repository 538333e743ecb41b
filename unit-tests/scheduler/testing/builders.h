#pragma once
// Builders for scheduler test objects:
//   MakeTask("t1").Job("ns/pg").Request("nvidia.com/gpu", 1).Request("cpu", "500m")
//   MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 4).Label("zone", "a")
//   MakeJob("ns", "pg").Queue("q1").MinAvailable(4).MinResources("nvidia.com/gpu", 4)
//   MakeQueue("q1").Weight(3).Capability("nvidia.com/gpu", 8)
//   MakeTask("w").Label("app", "web").PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web"))
// Quantities: cpu "500m"/"2", memory "2Gi"/"512Mi"/bytes, scalars in whole units or "500m".

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/api/cluster_info.h"
#include "scheduler/conf/arguments.h"

namespace basalt::sched::testing {

// Parses a test quantity into the scheduler's units (milli for cpu and scalars, bytes for memory).
inline int64_t ParseTestQuantity(std::string_view name, std::string_view q) {
  std::string s(q);
  int64_t mult = 1;
  auto ends = [&](std::string_view suf) { return s.size() > suf.size() && s.ends_with(suf); };
  bool milli = false;
  if (ends("Ki"))
    mult = int64_t{1} << 10;
  else if (ends("Mi"))
    mult = int64_t{1} << 20;
  else if (ends("Gi"))
    mult = int64_t{1} << 30;
  else if (ends("Ti"))
    mult = int64_t{1} << 40;
  else if (ends("m"))
    milli = true;
  if (mult != 1) s.resize(s.size() - 2);
  if (milli) s.resize(s.size() - 1);
  const int64_t v = std::stoll(s);
  if (name == kMemory) return v * mult;
  return milli ? v : v * 1000;
}

inline Timestamp T(int seconds) { return Timestamp{} + std::chrono::seconds(seconds); }

inline constexpr const char* kHostname = "kubernetes.io/hostname";
inline constexpr const char* kZone = "topology.kubernetes.io/zone";

// A pod (anti-)affinity term; by default an empty label selector (every pod) in namespace "ns",
// the builders' default namespace (as the parser fills in the pod's own namespace).
class MakeTerm {
 public:
  explicit MakeTerm(std::string topology_key) {
    t_.topology_key = std::move(topology_key);
    t_.selector = LabelSelector{};
    t_.namespaces = {"ns"};
  }
  MakeTerm& MatchLabel(std::string k, std::string v) {
    t_.selector->match_labels.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  MakeTerm& MatchExpression(std::string k, NodeSelectorRequirement::Operator op,
                            std::vector<std::string> values = {}) {
    t_.selector->match_expressions.push_back({std::move(k), op, std::move(values)});
    return *this;
  }
  MakeTerm& NoSelector() {
    t_.selector.reset();
    return *this;
  }
  MakeTerm& Namespaces(std::vector<std::string> ns) {
    t_.namespaces = std::move(ns);
    return *this;
  }
  MakeTerm& NamespaceSelector(LabelSelector sel) {
    t_.namespaces.clear();
    t_.namespace_selector = std::move(sel);
    return *this;
  }
  operator PodAffinityTerm() const { return t_; }  // NOLINT: builder

 private:
  PodAffinityTerm t_;
};

class MakeTask {
 public:
  explicit MakeTask(std::string name) {
    t_.name = name;
    t_.uid = "uid-" + name;
    t_.namespace_name = "ns";
  }
  MakeTask& Namespace(std::string ns) {
    t_.namespace_name = std::move(ns);
    return *this;
  }
  MakeTask& Uid(std::string uid) {
    t_.uid = std::move(uid);
    return *this;
  }
  MakeTask& Job(std::string job_id) {
    t_.job_id = std::move(job_id);
    return *this;
  }
  MakeTask& Role(std::string role) {
    t_.role = std::move(role);
    return *this;
  }
  MakeTask& Request(std::string_view name, std::string_view q) {
    t_.resreq.Set(name, ParseTestQuantity(name, q));
    t_.init_resreq = t_.resreq;
    return *this;
  }
  MakeTask& Request(std::string_view name, int64_t units) {
    return Request(name, std::string_view(std::to_string(units)));
  }
  MakeTask& Node(std::string node) {
    t_.node_name = std::move(node);
    return *this;
  }
  MakeTask& Status(TaskStatus s) {
    t_.status = s;
    return *this;
  }
  MakeTask& Priority(int32_t p) {
    t_.priority = p;
    return *this;
  }
  MakeTask& PriorityClass(std::string pc) {
    t_.priority_class_name = std::move(pc);
    return *this;
  }
  MakeTask& Created(int seconds) {
    t_.creation_time = T(seconds);
    return *this;
  }
  MakeTask& Preemptable(bool p) {
    t_.preemptable = p;
    return *this;
  }
  MakeTask& PreemptNever() {
    t_.preempt_never = true;
    return *this;
  }
  MakeTask& NodeSelector(std::string k, std::string v) {
    t_.node_selector.Update([&](auto& m) { m[std::move(k)] = std::move(v); });
    return *this;
  }
  MakeTask& RequiredAffinity(std::vector<NodeSelectorTerm> terms) {
    t_.affinity.Update([&](basalt::sched::NodeAffinity& a) { a.required = std::move(terms); });
    return *this;
  }
  MakeTask& PreferredAffinity(int32_t weight, NodeSelectorTerm term) {
    t_.affinity.Update([&](basalt::sched::NodeAffinity& a) {
      a.preferred.push_back({weight, std::move(term)});
    });
    return *this;
  }
  MakeTask& Tolerate(basalt::sched::Toleration tol) {
    t_.tolerations.Update([&](auto& v) { v.push_back(std::move(tol)); });
    return *this;
  }
  MakeTask& HostPort(int32_t port, std::string ip = "", std::string protocol = "TCP") {
    t_.host_ports.Update([&](auto& v) {
      v.push_back(basalt::sched::HostPort{std::move(protocol), std::move(ip), port});
    });
    return *this;
  }
  MakeTask& Label(std::string k, std::string v) {
    t_.labels.Update([&](auto& m) { m.Set(k, v); });
    return *this;
  }
  MakeTask& PodAffinity(PodAffinityTerm term) {
    pod_affinity_.required_affinity.push_back(std::move(term));
    return *this;
  }
  MakeTask& PodAntiAffinity(PodAffinityTerm term) {
    pod_affinity_.required_anti_affinity.push_back(std::move(term));
    return *this;
  }
  MakeTask& PreferredPodAffinity(int32_t weight, PodAffinityTerm term) {
    pod_affinity_.preferred_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  MakeTask& PreferredPodAntiAffinity(int32_t weight, PodAffinityTerm term) {
    pod_affinity_.preferred_anti_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  operator TaskInfo() const { return Build(); }  // NOLINT: builder
  TaskInfo Build() const {
    TaskInfo t = t_;
    if (!pod_affinity_.Empty()) {
      t.pod_affinity = std::make_shared<const basalt::sched::PodAffinity>(pod_affinity_);
    }
    return t;
  }

 private:
  TaskInfo t_;
  basalt::sched::PodAffinity pod_affinity_;
};

class MakeNode {
 public:
  explicit MakeNode(std::string name) : name_(std::move(name)) {}
  MakeNode& Allocatable(std::string_view name, std::string_view q) {
    alloc_.Set(name, ParseTestQuantity(name, q));
    return *this;
  }
  MakeNode& Allocatable(std::string_view name, int64_t units) {
    return Allocatable(name, std::string_view(std::to_string(units)));
  }
  MakeNode& MaxPods(int64_t n) {
    max_pods_ = n;
    return *this;
  }
  MakeNode& Label(std::string k, std::string v) {
    labels_[std::move(k)] = std::move(v);
    return *this;
  }
  MakeNode& WithTaint(std::string k, std::string v, TaintEffect e) {
    taints_.push_back(Taint{std::move(k), std::move(v), e});
    return *this;
  }
  MakeNode& Unschedulable() {
    unschedulable_ = true;
    return *this;
  }
  NodeInfo Build() const {
    NodeInfo n(name_, alloc_, max_pods_);
    n.labels() = labels_;
    n.taints() = taints_;
    n.set_unschedulable(unschedulable_);
    return n;
  }
  operator NodeInfo() const { return Build(); }  // NOLINT: builder

 private:
  std::string name_;
  Resource alloc_;
  int64_t max_pods_ = 110;
  std::map<std::string, std::string> labels_;
  std::vector<Taint> taints_;
  bool unschedulable_ = false;
};

class MakeJob {
 public:
  MakeJob(std::string ns, std::string name) : ns_(std::move(ns)), name_(std::move(name)) {}
  MakeJob& Queue(std::string q) {
    queue_ = std::move(q);
    return *this;
  }
  MakeJob& MinAvailable(int32_t n) {
    min_available_ = n;
    return *this;
  }
  MakeJob& MinTaskMember(std::string role, int32_t n) {
    task_min_[std::move(role)] = n;
    return *this;
  }
  MakeJob& MinResources(std::string_view name, std::string_view q) {
    if (!min_res_) min_res_ = Resource();
    min_res_->Set(name, ParseTestQuantity(name, q));
    return *this;
  }
  MakeJob& MinResources(std::string_view name, int64_t units) {
    return MinResources(name, std::string_view(std::to_string(units)));
  }
  MakeJob& Phase(PodGroupPhase p) {
    phase_ = p;
    return *this;
  }
  MakeJob& Priority(int32_t p) {
    priority_ = p;
    return *this;
  }
  MakeJob& Created(int seconds) {
    created_ = T(seconds);
    return *this;
  }
  MakeJob& NotPreemptable() {
    not_preemptable_ = true;
    return *this;
  }
  // A PodGroup made for pods that exist before it (a bare pod's; JobInfo::pods_precede_group).
  MakeJob& PodsPrecedeGroup() {
    pods_precede_group_ = true;
    return *this;
  }
  JobInfo Build() const {
    JobInfo j(ns_, name_);
    j.queue = queue_;
    j.min_available = min_available_;
    j.task_min_available = task_min_;
    j.min_resources = min_res_;
    j.priority = priority_;
    j.creation_time = created_;
    j.not_preemptable = not_preemptable_;
    j.pods_precede_group = pods_precede_group_;
    j.podgroup_status.phase = phase_;
    return j;
  }
  operator JobInfo() const { return Build(); }  // NOLINT: builder

 private:
  std::string ns_, name_, queue_ = "default";
  int32_t min_available_ = 1;
  std::map<std::string, int32_t> task_min_;
  std::optional<Resource> min_res_;
  PodGroupPhase phase_ = PodGroupPhase::kInqueue;
  int32_t priority_ = 0;
  Timestamp created_{};
  bool not_preemptable_ = false;
  bool pods_precede_group_ = false;
};

class MakeQueue {
 public:
  explicit MakeQueue(std::string name) { q_.name = std::move(name); }
  MakeQueue& Weight(int32_t w) {
    q_.weight = w;
    return *this;
  }
  MakeQueue& Priority(int32_t p) {
    q_.priority = p;
    return *this;
  }
  MakeQueue& Capability(std::string_view name, std::string_view q) {
    if (!q_.capability) q_.capability = Resource();
    q_.capability->Set(name, ParseTestQuantity(name, q));
    return *this;
  }
  MakeQueue& Capability(std::string_view name, int64_t units) {
    return Capability(name, std::string_view(std::to_string(units)));
  }
  MakeQueue& Guarantee(std::string_view name, std::string_view q) {
    q_.guarantee.Set(name, ParseTestQuantity(name, q));
    return *this;
  }
  MakeQueue& Deserved(std::string_view name, std::string_view q) {
    if (!q_.deserved) q_.deserved = Resource();
    q_.deserved->Set(name, ParseTestQuantity(name, q));
    return *this;
  }
  MakeQueue& Deserved(std::string_view name, int64_t units) {
    return Deserved(name, std::string_view(std::to_string(units)));
  }
  MakeQueue& Parent(std::string parent) {
    q_.parent = std::move(parent);
    return *this;
  }
  // The volcano.sh/hierarchy and volcano.sh/hierarchy-weights annotations.
  MakeQueue& Hierarchy(std::string path, std::string weights) {
    q_.hierarchy = std::move(path);
    q_.hierarchy_weights = std::move(weights);
    return *this;
  }
  MakeQueue& Reclaimable(bool r) {
    q_.reclaimable = r;
    return *this;
  }
  MakeQueue& State(QueueState s) {
    q_.state = s;
    return *this;
  }
  MakeQueue& Created(int seconds) {
    q_.creation_time = T(seconds);
    return *this;
  }
  operator QueueInfo() const { return q_; }  // NOLINT: builder
  QueueInfo Build() const { return q_; }

 private:
  QueueInfo q_;
};

// Plugin arguments literal: Args({{"binpack.weight", "0.1"}}).
inline Arguments Args(std::initializer_list<std::pair<const std::string, std::string>> kv) {
  return Arguments(std::map<std::string, std::string, std::less<>>(kv));
}

// Resource literal: Res({{"cpu", "2"}, {"nvidia.com/gpu", "1"}}).
inline Resource Res(std::initializer_list<std::pair<std::string_view, std::string_view>> dims) {
  Resource r;
  for (const auto& [name, q] : dims) r.Set(name, ParseTestQuantity(name, q));
  return r;
}

}  // namespace basalt::sched::testing
