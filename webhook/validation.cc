#include "webhook/validation.h"

#include <limits>
#include <utility>

#include "common/api/field_reader.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// The name part of a qualified name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A value as Kubernetes prints it in "Invalid value: ..." (Go's %q), shortened: the value may
// be as long as the object allows.
std::string Quoted(std::string_view value) {
  constexpr size_t kMaxShown = 80;
  std::string out = "\"";
  for (char c : value.substr(0, kMaxShown)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += value.size() > kMaxShown ? "\"..." : "\"";
  return out;
}

}  // namespace

FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p;
  p.path_ = path_.empty() ? std::string(name) : fmt::format("{}.{}", path_, name);
  return p;
}

FieldPath FieldPath::Index(size_t i) const {
  FieldPath p;
  p.path_ = fmt::format("{}[{}]", path_, i);
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p;
  p.path_ = fmt::format("{}[{}]", path_, key);
  return p;
}

std::string FieldError::ToString() const {
  return path.empty() ? message : fmt::format("{}: {}", path, message);
}

void ErrorList::Invalid(const FieldPath& path, std::string message) {
  errors_.push_back({path.str(), std::move(message), ErrorKind::kInvalid});
}

void ErrorList::Forbidden(const FieldPath& path, std::string message) {
  errors_.push_back({path.str(), std::move(message), ErrorKind::kForbidden});
}

void ErrorList::Internal(const FieldPath& path, std::string message) {
  errors_.push_back({path.str(), std::move(message), ErrorKind::kInternal});
}

std::string ErrorList::Message() const {
  std::string out;
  for (const auto& e : errors_) {
    if (!out.empty()) out += "; ";
    out += e.ToString();
  }
  return out;
}

AdmissionResponse ErrorList::ToResponse() const {
  if (errors_.empty()) return AdmissionResponse::Allow();
  bool forbidden = false;
  for (const auto& e : errors_) {
    if (e.kind == ErrorKind::kInternal) {
      return AdmissionResponse::Deny(500, "InternalError", Message());
    }
    forbidden = forbidden || e.kind == ErrorKind::kForbidden;
  }
  return forbidden ? AdmissionResponse::Deny(403, "Forbidden", Message())
                   : AdmissionResponse::Deny(422, "Invalid", Message());
}

bool IsDns1123Label(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!IsLowerAlnum(name.front()) || !IsLowerAlnum(name.back())) return false;
  for (char c : name) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    std::string_view label =
        name.substr(start, dot == std::string_view::npos ? name.npos : dot - start);
    // Each dot-separated part follows the label character rules (length is bounded overall).
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::vector<std::string> QualifiedNameErrors(std::string_view name) {
  std::vector<std::string> errs;
  std::string_view part = name;
  size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = name.substr(0, slash);
    part = name.substr(slash + 1);
    if (prefix.empty()) {
      errs.emplace_back("prefix part must be non-empty");
    } else if (!IsDns1123Subdomain(prefix)) {
      errs.emplace_back("prefix part must be a lowercase RFC 1123 subdomain");
    }
    if (part.find('/') != std::string_view::npos) {
      errs.emplace_back(
          "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
          "start and end with an alphanumeric character, with an optional DNS subdomain prefix "
          "and '/'");
      return errs;
    }
  }
  if (part.empty()) {
    errs.emplace_back("name part must be non-empty");
    return errs;
  }
  if (part.size() > 63) errs.emplace_back("name part must be no more than 63 characters");
  if (!IsQualifiedNamePart(part)) {
    errs.emplace_back(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character");
  }
  return errs;
}

bool IsQualifiedName(std::string_view name) { return QualifiedNameErrors(name).empty(); }

std::vector<std::string> LabelValueErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.emplace_back("must be no more than 63 characters");
  if (!value.empty() && !IsQualifiedNamePart(value)) {
    errs.emplace_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character");
  }
  return errs;
}

void ValidateLabelsAndAnnotations(api::FieldReader& md, const FieldPath& path,
                                  int64_t annotation_limit, std::string_view limit_note,
                                  ErrorList& errors) {
  if (md.value() == nullptr) return;
  // labels or annotations that are not objects are skipped (the API server refuses them first).
  // Paths are built only for an error: this runs for every object and pod template.
  md.ForEachEntry("labels", [&](std::string_view key, std::optional<std::string_view> value) {
    for (const std::string& msg : QualifiedNameErrors(key)) {
      errors.Invalid(path.Child("labels"), fmt::format("Invalid value: {}: {}", Quoted(key), msg));
    }
    if (!value) return;
    for (const std::string& msg : LabelValueErrors(*value)) {
      errors.Invalid(path.Child("labels"),
                     fmt::format("Invalid value: {}: {}", Quoted(*value), msg));
    }
  });
  bool has_annotations = false;
  int64_t total = 0;
  md.ForEachEntry("annotations", [&](std::string_view key, std::optional<std::string_view> value) {
    has_annotations = true;
    // Annotation keys are qualified names, but case does not matter (Kubernetes lowercases
    // them before checking).
    for (const std::string& msg : QualifiedNameErrors(ToLower(key))) {
      errors.Invalid(path.Child("annotations"),
                     fmt::format("Invalid value: {}: {}", Quoted(key), msg));
    }
    total += static_cast<int64_t>(key.size());
    if (value) total += static_cast<int64_t>(value->size());
  });
  if (!has_annotations) return;
  if (total > annotation_limit) {
    errors.Invalid(path.Child("annotations"),
                   limit_note.empty()
                       ? fmt::format("Too long: must have at most {} bytes", annotation_limit)
                       : fmt::format("Too long: must have at most {} bytes ({})", annotation_limit,
                                     limit_note));
  }
}

void ValidateLabelsAndAnnotations(const json::Value* metadata, const FieldPath& path,
                                  int64_t annotation_limit, std::string_view limit_note,
                                  ErrorList& errors) {
  api::FieldReader md(metadata, "");
  ValidateLabelsAndAnnotations(md, path, annotation_limit, limit_note, errors);
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}

std::map<std::string, resource::Quantity> ReadResourceList(const json::Value* list,
                                                           const FieldPath& path,
                                                           ErrorList& errors) {
  std::map<std::string, resource::Quantity> out;
  if (list == nullptr || list->IsNull()) return out;
  if (!list->IsObject()) {
    errors.Invalid(path, "must be a map of resource name to quantity");
    return out;
  }
  for (const auto& member : list->GetObject()) {
    std::string name(json::AsView(member.name));
    FieldPath at = path.Key(name);
    auto q = resource::Quantity::FromJson(member.value);
    if (!q.ok()) {
      errors.Invalid(at, std::string(MessageOf(q.status())));
      continue;
    }
    if (q->Sign() < 0) {
      errors.Invalid(at, "must be greater than or equal to 0");
      continue;
    }
    out.emplace(std::move(name), *q);
  }
  return out;
}

bool NetworkTopologyConflicts(const json::Value* network_topology) {
  // Raw reads: called for every sub-group of a PodGroup, where a reader of its own would cost
  // more than the check.
  if (network_topology == nullptr || !network_topology->IsObject()) return false;
  const json::Value* allowed = json::Find(*network_topology, "highestTierAllowed");
  const json::Value* name = json::Find(*network_topology, "highestTierName");
  bool has_allowed = allowed != nullptr && !allowed->IsNull();
  bool has_name = name != nullptr && !name->IsNull() && !json::AsView(*name).empty();
  return has_allowed && has_name;
}

void ValidateNetworkTopology(const json::Value* network_topology, const FieldPath& path,
                             ErrorList& errors) {
  if (NetworkTopologyConflicts(network_topology)) {
    errors.Invalid(path,
                   "must not specify 'highestTierAllowed' and 'highestTierName' in "
                   "networkTopology simultaneously");
  }
}

std::string BracketList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    out += items[i];
  }
  out += ']';
  return out;
}

std::optional<QueueInfo> LookUpQueue(std::string_view queue_name, std::string_view what,
                                     const FieldPath& path, const ClusterLister& lister,
                                     ErrorList& errors) {
  absl::StatusOr<QueueInfo> queue = lister.GetQueue(queue_name);
  if (queue.ok()) return *std::move(queue);
  if (absl::IsNotFound(queue.status())) {
    errors.Forbidden(
        path, fmt::format("unable to find {}: queues.scheduling.volcano.sh \"{}\" not found", what,
                          queue_name));
  } else {
    errors.Internal(path, fmt::format("unable to look up {} \"{}\": {}", what, queue_name,
                                      MessageOf(queue.status())));
  }
  return std::nullopt;
}

}  // namespace basalt::webhook
