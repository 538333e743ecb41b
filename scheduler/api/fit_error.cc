#include "scheduler/api/fit_error.h"

#include <algorithm>

#include "fmt/format.h"

namespace basalt::sched {

std::string InsufficientReason(std::string_view resource) {
  return fmt::format("Insufficient {}", resource);
}

void FitErrors::SetNodeError(const std::string& node, const std::vector<std::string>& reasons) {
  auto& set = nodes_[node];
  set.insert(reasons.begin(), reasons.end());
}

std::string FitErrors::Error() const {
  if (nodes_.empty() && !err_.empty()) return err_;
  std::string prefix =
      err_.empty() ? fmt::format("0/{} nodes are unavailable", nodes_.size()) : err_;
  std::map<std::string, int> histogram;
  for (const auto& [node, reasons] : nodes_) {
    for (const auto& r : reasons) ++histogram[r];
  }
  std::vector<std::string> parts;
  parts.reserve(histogram.size());
  for (const auto& [reason, count] : histogram)
    parts.push_back(fmt::format("{} {}", count, reason));
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const auto& p : parts) {
    if (!joined.empty()) joined += ", ";
    joined += p;
  }
  return fmt::format("{}: {}.", prefix, joined);
}

std::string NodeFitErrorMessage(std::string_view task_key, std::string_view node,
                                const std::vector<std::string>& reasons) {
  std::string joined;
  for (const auto& r : reasons) {
    if (!joined.empty()) joined += ", ";
    joined += r;
  }
  return fmt::format("task {} on node {} fit failed: {}", task_key, node, joined);
}

}  // namespace basalt::sched
