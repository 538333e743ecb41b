#pragma once
// Outcome is what a plugin extension point (a predicate, a pre-predicate) returns about one
// task/node pair, mirroring kube-scheduler's framework.Status: a code, the plugin that decided
// and human-readable reasons. It is not an absl::Status: "unschedulable" is a normal answer,
// not an error. Value type.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basalt::sched {

enum class Code {
  kSuccess,
  kError,
  kUnschedulable,
  // Rescheduling elsewhere or evicting pods on this node would not help (e.g. node affinity).
  kUnschedulableAndUnresolvable,
  kWait,
  kSkip,
};

std::string_view CodeName(Code c);

class Outcome {
 public:
  Outcome() = default;
  Outcome(Code code, std::string plugin, std::vector<std::string> reasons)
      : code_(code), plugin_(std::move(plugin)), reasons_(std::move(reasons)) {}

  static Outcome Success() { return Outcome(); }
  static Outcome Unschedulable(std::string plugin, std::string reason) {
    return Outcome(Code::kUnschedulable, std::move(plugin), {std::move(reason)});
  }
  static Outcome Unresolvable(std::string plugin, std::string reason) {
    return Outcome(Code::kUnschedulableAndUnresolvable, std::move(plugin), {std::move(reason)});
  }
  static Outcome Error(std::string plugin, std::string reason) {
    return Outcome(Code::kError, std::move(plugin), {std::move(reason)});
  }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kSuccess; }
  const std::string& plugin() const { return plugin_; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  // Reasons joined with ", ".
  std::string Message() const;

 private:
  Code code_ = Code::kSuccess;
  std::string plugin_;
  std::vector<std::string> reasons_;
};

}  // namespace basalt::sched
