#pragma once
// FitErrors collects, for one task, why each node was rejected, and renders the
// kube-scheduler style aggregate that users read in events and PodGroup conditions:
//   0/8 nodes are unavailable: 4 Insufficient nvidia.com/gpu, 4 node(s) didn't match ...
//
// Recording is cheap because a predicate pass records a failure for most nodes of the cluster
// and the message is read at most once: each distinct reason string is stored once and a node
// keeps reason ids; the per-reason node counts are kept as nodes are recorded, so Error() costs
// the number of distinct reasons. Nodes recorded in name order (as a predicate pass visits
// them) are known to be distinct; after one out of order, the entries are sorted and merged the
// first time they are read, so recording a node twice still counts it once.
// Value type; not thread-safe.

#include <cstdint>
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
inline constexpr std::string_view kInsufficientPrefix = "Insufficient ";

// "Insufficient <resource>".
std::string InsufficientReason(std::string_view resource);

class FitErrors {
 public:
  // Records `reasons` for `node` (duplicates within a node count once).
  void SetNodeError(const std::string& node, const std::vector<std::string>& reasons);
  // Records "Insufficient <resource>" for `node`, without building the string again once it
  // was recorded for another node.
  void SetNodeInsufficient(const std::string& node, std::string_view resource);
  // Sets the prefix used instead of "0/<N> nodes are unavailable"; with no node errors,
  // Error() returns it alone (e.g. a queue limit that stopped the task before any node).
  void SetError(std::string err) { err_ = std::move(err); }
  bool Empty() const { return nodes_.empty() && err_.empty(); }
  // Each node with the set of its reasons (built on each call; for tests and diagnostics).
  std::map<std::string, std::set<std::string>> nodes() const;

  // "0/<N> nodes are unavailable: <count> <reason>, ...." where N is the number of nodes that
  // recorded an error, each reason counts once per node and the "<count> <reason>" strings are
  // sorted lexicographically (as Volcano does).
  std::string Error() const;

 private:
  struct NodeEntry {
    std::string name;
    uint32_t first = 0;  // into ids_
    uint32_t count = 0;
  };
  // The id of a reason `prefix` + `rest`, added if new.
  uint32_t Intern(std::string_view prefix, std::string_view rest);
  void AddNode(const std::string& node, const uint32_t* ids, size_t n);
  // Merges the entries of nodes recorded more than once and recounts (after SetNodeError on
  // a node already present).
  void Normalize() const;

  std::string err_;
  std::vector<std::string> reasons_;  // by id
  // Reason -> id once there are many distinct reasons (e.g. reasons naming the node).
  std::map<std::string, uint32_t, std::less<>> reason_index_;
  uint32_t last_id_ = 0;  // the id found last (consecutive nodes usually share a reason)
  // Mutable: merged lazily by Normalize().
  mutable std::vector<NodeEntry> nodes_;
  mutable std::vector<uint32_t> ids_;    // each node's distinct reason ids, contiguous
  mutable std::vector<int64_t> counts_;  // by reason id: nodes with that reason
  // Set when a node is recorded out of name order, so that it may already have an entry.
  mutable bool maybe_repeated_ = false;
};

// "task <ns>/<name> on node <node> fit failed: <reason>, <reason>".
std::string NodeFitErrorMessage(std::string_view task_key, std::string_view node,
                                const std::vector<std::string>& reasons);

}  // namespace basalt::sched
