#include "webhook/jobs/policies.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "fmt/format.h"

namespace basalt::webhook {
namespace {

bool Contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string ValidListsSuffix() {
  return fmt::format("valid events are {}, valid actions are {}", BracketList(ValidPolicyEvents()),
                     BracketList(ValidPolicyActions()));
}

}  // namespace

const std::vector<std::string>& ValidPolicyEvents() {
  static const auto* events = [] {
    auto* names = new std::vector<std::string>;
    for (api::JobEvent e : api::kPolicyEvents) names->emplace_back(api::EventName(e));
    return names;
  }();
  return *events;
}

const std::vector<std::string>& ValidPolicyActions() {
  static const auto* actions = [] {
    auto* names = new std::vector<std::string>;
    for (api::Action a : api::kPolicyActions) names->emplace_back(api::ActionName(a));
    return names;
  }();
  return *actions;
}

void ValidatePolicies(const json::Value* policies, const FieldPath& path, ErrorList& errors) {
  if (policies == nullptr || policies->IsNull()) return;
  if (!policies->IsArray()) {
    errors.Invalid(path, "policies must be a list");
    return;
  }
  std::set<std::string, std::less<>> seen_events;
  std::set<int64_t> seen_exit_codes;
  bool has_wildcard = false;
  bool wildcard_reported = false;
  for (rapidjson::SizeType i = 0; i < policies->Size(); ++i) {
    const json::Value& policy_value = (*policies)[i];
    FieldPath p = path.Index(i);
    if (!policy_value.IsObject()) {
      errors.Invalid(p, "policy must be an object");
      continue;
    }
    // Members of the wrong type read as absent; the reader's own error is not used.
    api::FieldReader policy(&policy_value, "");
    // The events of this policy: `event` and `events[]`, de-duplicated.
    std::vector<std::pair<std::string, FieldPath>> events;
    auto add_event = [&](std::string_view e, const FieldPath& at) {
      for (const auto& [name, unused] : events) {
        if (name == e) return;
      }
      events.emplace_back(std::string(e), at);
    };
    if (auto e = policy.OptView("event"); e && !e->empty()) {
      add_event(*e, p.Child("event"));
    }
    policy.ForEachString("events", [&](std::optional<std::string_view> e, size_t j) {
      if (e) add_event(*e, p.Child("events").Index(j));
    });
    const bool has_exit_code = policy.Has("exitCode");  // false when absent or JSON null

    if (!events.empty() && has_exit_code) {
      errors.Invalid(p, "must not specify event and exitCode simultaneously");
      continue;
    }
    if (events.empty() && !has_exit_code) {
      errors.Invalid(p, "either event and exitCode should be specified");
      continue;
    }
    for (const auto& [event, at] : events) {
      if (!Contains(ValidPolicyEvents(), event)) {
        errors.Invalid(at,
                       fmt::format("invalid policy event \"{}\", {}", event, ValidListsSuffix()));
        continue;
      }
      if (event == api::EventName(api::JobEvent::kAny)) has_wildcard = true;
      if (!seen_events.insert(event).second) {
        errors.Invalid(at, fmt::format("duplicate event {} across different policy", event));
      }
    }
    if (has_exit_code) {
      const std::optional<int64_t> exit_code = policy.OptInt("exitCode");
      if (!exit_code) {
        errors.Invalid(p.Child("exitCode"), "exitCode must be an integer");
      } else if (*exit_code == 0) {
        errors.Invalid(p.Child("exitCode"), "0 is not a valid error code");
      } else if (!seen_exit_codes.insert(*exit_code).second) {
        errors.Invalid(p.Child("exitCode"), fmt::format("duplicate exitCode {}", *exit_code));
      }
    }
    std::string_view action = policy.View("action");
    if (!Contains(ValidPolicyActions(), action)) {
      errors.Invalid(p.Child("action"),
                     fmt::format("invalid policy action \"{}\", {}", action, ValidListsSuffix()));
    }
    if (has_wildcard && seen_events.size() > 1 && !wildcard_reported) {
      errors.Invalid(p, "if there's * here, no other policy should be here");
      wildcard_reported = true;
    }
  }
}

}  // namespace basalt::webhook
