#pragma once
// FitErrors collects, for one task, why each node was rejected, and renders the
// kube-scheduler style aggregate that users read in events and PodGroup conditions:
//   0/8 nodes are unavailable: 4 Insufficient nvidia.com/gpu, 4 node(s) didn't match ...
// Value type; not thread-safe.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace basalt::sched {

// Reason strings shared by the actions and predicates (upstream kube-scheduler wording).
inline constexpr std::string_view kReasonNodeAffinity =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kReasonUnschedulableNode = "node(s) were unschedulable";
inline constexpr std::string_view kReasonPodCountExceeded = "node(s) pod number exceeded";
inline constexpr std::string_view kReasonHostPorts =
    "node(s) didn't have free ports for the requested pod ports";
inline constexpr std::string_view kReasonPodAffinity = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kReasonPodAntiAffinity =
    "node(s) didn't match pod anti-affinity rules";
inline constexpr std::string_view kReasonExistingPodsAntiAffinity =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kReasonUntoleratedTaint = "node(s) had untolerated taint";
inline constexpr std::string_view kAllNodesUnavailable = "all nodes are unavailable";

// "Insufficient <resource>".
std::string InsufficientReason(std::string_view resource);

class FitErrors {
 public:
  // Records `reasons` for `node` (duplicates within a node count once).
  void SetNodeError(const std::string& node, const std::vector<std::string>& reasons);
  // Sets the prefix used instead of "0/<N> nodes are unavailable"; with no node errors,
  // Error() returns it alone (e.g. a queue limit that stopped the task before any node).
  void SetError(std::string err) { err_ = std::move(err); }
  bool Empty() const { return nodes_.empty() && err_.empty(); }
  const std::map<std::string, std::set<std::string>>& nodes() const { return nodes_; }

  // "0/<N> nodes are unavailable: <count> <reason>, ...." where N is the number of nodes that
  // recorded an error, each reason counts once per node and the "<count> <reason>" strings are
  // sorted lexicographically (as Volcano does).
  std::string Error() const;

 private:
  std::string err_;
  std::map<std::string, std::set<std::string>> nodes_;
};

// "task <ns>/<name> on node <node> fit failed: <reason>, <reason>".
std::string NodeFitErrorMessage(std::string_view task_key, std::string_view node,
                                const std::vector<std::string>& reasons);

}  // namespace basalt::sched
