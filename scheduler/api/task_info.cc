#include "scheduler/api/task_info.h"

#include <algorithm>
#include <charconv>

namespace basalt::sched {

std::string_view TaskStatusName(TaskStatus s) {
  switch (s) {
    case TaskStatus::kPending:
      return "Pending";
    case TaskStatus::kAllocated:
      return "Allocated";
    case TaskStatus::kPipelined:
      return "Pipelined";
    case TaskStatus::kBinding:
      return "Binding";
    case TaskStatus::kBound:
      return "Bound";
    case TaskStatus::kRunning:
      return "Running";
    case TaskStatus::kReleasing:
      return "Releasing";
    case TaskStatus::kSucceeded:
      return "Succeeded";
    case TaskStatus::kFailed:
      return "Failed";
    case TaskStatus::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

bool IsAllocatedStatus(TaskStatus s) {
  return s == TaskStatus::kAllocated || s == TaskStatus::kBinding || s == TaskStatus::kBound ||
         s == TaskStatus::kRunning;
}

bool IsScheduledStatus(TaskStatus s) {
  return s == TaskStatus::kRunning || s == TaskStatus::kBound || s == TaskStatus::kFailed ||
         s == TaskStatus::kSucceeded;
}

bool IsCompletedStatus(TaskStatus s) {
  return s == TaskStatus::kFailed || s == TaskStatus::kSucceeded;
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect.has_value() && *effect != taint.effect) return false;
  if (key.empty()) return op == Operator::kExists;
  if (key != taint.key) return false;
  return op == Operator::kExists || value == taint.value;
}

namespace {
std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Requirement and selector matching over node labels (std::map) and pod labels (LabelSet):
// both have find / end and entries whose second compares with a std::string.
template <typename Labels>
bool RequirementMatches(const NodeSelectorRequirement& r, const Labels& labels) {
  using Operator = NodeSelectorRequirement::Operator;
  const std::string& key = r.key;
  const Operator op = r.op;
  const std::vector<std::string>& values = r.values;
  auto it = labels.find(key);
  const bool present = it != labels.end();
  auto in_values = [&] {
    return present && std::find(values.begin(), values.end(), it->second) != values.end();
  };
  switch (op) {
    case Operator::kIn:
      return in_values();
    case Operator::kNotIn:
      return !in_values();
    case Operator::kExists:
      return present;
    case Operator::kDoesNotExist:
      return !present;
    case Operator::kGt:
    case Operator::kLt: {
      if (!present || values.size() != 1) return false;
      auto label = ParseInt(it->second);
      auto bound = ParseInt(values[0]);
      if (!label || !bound) return false;
      return op == Operator::kGt ? *label > *bound : *label < *bound;
    }
  }
  return false;
}

template <typename Labels>
bool SelectorMatches(const LabelSelector& s, const Labels& labels) {
  for (const auto& [key, value] : s.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const auto& req : s.match_expressions) {
    if (!RequirementMatches(req, labels)) return false;
  }
  return true;
}
}  // namespace

bool NodeSelectorRequirement::Matches(const std::map<std::string, std::string>& labels) const {
  return RequirementMatches(*this, labels);
}
bool NodeSelectorRequirement::Matches(const LabelSet& labels) const {
  return RequirementMatches(*this, labels);
}

bool NodeSelectorTerm::Matches(std::string_view node_name,
                               const std::map<std::string, std::string>& labels) const {
  if (match_expressions.empty() && match_node_names.empty()) return false;
  for (const auto& req : match_expressions) {
    if (!req.Matches(labels)) return false;
  }
  if (!match_node_names.empty() && std::find(match_node_names.begin(), match_node_names.end(),
                                             node_name) == match_node_names.end()) {
    return false;
  }
  return true;
}

bool HostPort::ConflictsWith(const HostPort& other) const {
  if (port != other.port || protocol != other.protocol) return false;
  auto every_address = [](const std::string& ip) { return ip.empty() || ip == "0.0.0.0"; };
  return every_address(host_ip) || every_address(other.host_ip) || host_ip == other.host_ip;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  return SelectorMatches(*this, labels);
}
bool LabelSelector::Matches(const LabelSet& labels) const { return SelectorMatches(*this, labels); }

bool PodAffinityTerm::MatchesPod(const std::string& pod_namespace,
                                 const LabelSet& pod_labels) const {
  if (!selector.has_value()) return false;
  bool in_namespace =
      std::find(namespaces.begin(), namespaces.end(), pod_namespace) != namespaces.end();
  if (!in_namespace && namespace_selector.has_value()) {
    if (namespace_selector->match_labels.empty() && namespace_selector->match_expressions.empty()) {
      in_namespace = true;
    } else {
      in_namespace =
          namespace_selector->Matches(LabelSet{{"kubernetes.io/metadata.name", pod_namespace}});
    }
  }
  return in_namespace && selector->Matches(pod_labels);
}

int64_t PodNameIndex(std::string_view name) {
  if (std::count(name.begin(), name.end(), '-') < 2) return -1;
  auto pos = name.rfind('-');
  auto v = ParseInt(name.substr(pos + 1));
  return v.value_or(-1);
}

}  // namespace basalt::sched
