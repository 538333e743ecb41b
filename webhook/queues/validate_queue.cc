#include "webhook/queues/validate_queue.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "webhook/queues/mutate_queue.h"

namespace basalt::webhook {
namespace {

// The handlers read the Queue through api::FieldReader and ignore its type errors: a member
// of the wrong type reads as absent, and the checks below report what they refuse in their
// own (Volcano's) wording. The API server's schema refuses wrong types before admission.
using api::FieldReader;

using ResourceMap = std::map<std::string, resource::Quantity>;

constexpr int64_t kMaxQueueWeight = 65535;

std::string Plural(size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

void ValidateResources(FieldReader& spec, ErrorList& errors) {
  const FieldPath spec_path("spec");
  ResourceMap capability =
      ReadResourceList(spec.Member("capability"), spec_path.Child("capability"), errors);
  ResourceMap deserved =
      ReadResourceList(spec.Member("deserved"), spec_path.Child("deserved"), errors);
  FieldPath guarantee_path = spec_path.Child("guarantee").Child("resource");
  ResourceMap guarantee =
      ReadResourceList(spec.Child("guarantee").Member("resource"), guarantee_path, errors);

  for (const auto& [name, g] : guarantee) {
    if (!deserved.empty()) {
      auto d = deserved.find(name);
      if (d == deserved.end()) {
        errors.Invalid(spec_path.Child("deserved").Key(name),
                       fmt::format("deserved[{}] must be >= guarantee[{}]={} (deserved[{}] is not "
                                   "set)",
                                   name, name, g.String(), name));
      } else if (d->second < g) {
        errors.Invalid(spec_path.Child("deserved").Key(name),
                       fmt::format("deserved[{}]={} must be >= guarantee[{}]={}", name,
                                   d->second.String(), name, g.String()));
      }
    }
    auto c = capability.find(name);
    if (c != capability.end() && g > c->second) {
      errors.Invalid(guarantee_path.Key(name),
                     fmt::format("guarantee[{}]={} must be <= capability[{}]={}", name, g.String(),
                                 name, c->second.String()));
    }
  }
  for (const auto& [name, d] : deserved) {
    auto c = capability.find(name);
    if (c != capability.end() && d > c->second) {
      errors.Invalid(spec_path.Child("deserved").Key(name),
                     fmt::format("deserved[{}]={} must be <= capability[{}]={}", name, d.String(),
                                 name, c->second.String()));
    }
  }
}

void ValidateState(FieldReader* old_queue, FieldReader& queue, ErrorList& errors) {
  std::string_view state = queue.Child("status").View("state");
  if (state.empty() || state == api::kQueueOpen || state == api::kQueueClosed) return;
  if (old_queue != nullptr && old_queue->Child("status").View("state") == state) return;
  errors.Invalid(FieldPath("status").Child("state"),
                 fmt::format("queue state must be in [Open Closed], got \"{}\"", state));
}

void ValidateHierarchyAnnotations(FieldReader& metadata, ErrorList& errors) {
  FieldReader annotations = metadata.Child("annotations");
  std::string_view hierarchy = annotations.View(api::kHierarchyAnnotation);
  std::string_view weights = annotations.View(api::kHierarchyWeightsAnnotation);
  if (hierarchy.empty() && weights.empty()) return;
  FieldPath path = FieldPath("metadata").Child("annotations");
  auto segments = Split(hierarchy, '/');
  auto weight_segments = Split(weights, '/');
  if (hierarchy.empty() || weights.empty() || segments.size() != weight_segments.size()) {
    errors.Invalid(path.Key(api::kHierarchyWeightsAnnotation),
                   fmt::format("{} \"{}\" and {} \"{}\" must have the same number of segments",
                               api::kHierarchyAnnotation, hierarchy,
                               api::kHierarchyWeightsAnnotation, weights));
    return;
  }
  for (std::string_view w : weight_segments) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), value);
    if (w.empty() || ec != std::errc() || ptr != w.data() + w.size() || !(value > 0)) {
      errors.Invalid(path.Key(api::kHierarchyWeightsAnnotation),
                     fmt::format("weight \"{}\" in {} must be a positive number", w,
                                 api::kHierarchyWeightsAnnotation));
    }
  }
}

// Parent existence, depth and capability against ancestors.
void ValidateParent(std::string_view name, FieldReader& spec, const ClusterLister& lister,
                    const AdmissionOptions& options, ErrorList& errors) {
  const FieldPath parent_path = FieldPath("spec").Child("parent");
  std::string_view parent = spec.View("parent");
  if (parent.empty() || parent == "root") return;
  if (parent == name) {
    errors.Invalid(parent_path, "queue can not be its own parent");
    return;
  }
  // Walk up from the parent; depth counts root as 1 and this queue as the last level.
  std::vector<QueueInfo> ancestors;
  std::string next(parent);
  std::set<std::string> seen = {std::string(name)};
  while (!next.empty() && next != "root") {
    if (!seen.insert(next).second) {
      errors.Invalid(parent_path, fmt::format("queue hierarchy through `{}` forms a cycle", next));
      return;
    }
    auto q = lister.GetQueue(next);
    if (!q.ok()) {
      if (absl::IsNotFound(q.status())) {
        errors.Forbidden(parent_path, fmt::format("unable to find parent queue: "
                                                  "queues.scheduling.volcano.sh \"{}\" not found",
                                                  next));
      } else {
        errors.Internal(parent_path, fmt::format("unable to look up queue \"{}\": {}", next,
                                                 MessageOf(q.status())));
      }
      return;
    }
    next = q->parent;
    ancestors.push_back(*std::move(q));
  }
  size_t depth = ancestors.size() + 2;
  if (options.max_queue_depth > 0 && depth > static_cast<size_t>(options.max_queue_depth)) {
    errors.Invalid(parent_path,
                   fmt::format("queue depth {} exceeds the maximum of {} (root is depth 1)", depth,
                               options.max_queue_depth));
  }
  ErrorList ignored;  // own quantities are reported by ValidateResources
  ResourceMap capability =
      ReadResourceList(spec.Member("capability"), FieldPath("spec").Child("capability"), ignored);
  for (const auto& [resource_name, own] : capability) {
    for (const QueueInfo& ancestor : ancestors) {
      auto it = ancestor.capability.find(resource_name);
      if (it == ancestor.capability.end()) continue;
      auto limit = resource::Quantity::Parse(it->second);
      if (limit.ok() && own > *limit) {
        errors.Invalid(FieldPath("spec").Child("capability").Key(resource_name),
                       fmt::format("capability[{}]={} must be <= capability[{}]={} of ancestor "
                                   "queue `{}`",
                                   resource_name, own.String(), resource_name, limit->String(),
                                   ancestor.name));
      }
      break;  // only the nearest ancestor that limits this resource
    }
  }
}

ResourceMap ParseQuantities(const std::map<std::string, std::string>& text) {
  ResourceMap out;
  for (const auto& [resource_name, value] : text) {
    auto q = resource::Quantity::Parse(value);
    if (q.ok()) out.emplace(resource_name, *q);
  }
  return out;
}

const std::map<std::string, std::string>& Field(const QueueInfo& q, std::string_view field) {
  return field == "deserved" ? q.deserved : q.guarantee;
}

// Volcano's hierarchy quota rules, per resource dimension: the guarantees (and deserved) of a
// parent's children add up to at most the parent's own, and no child's capability is above its
// parent's. Checked both ways: this queue against its parent and siblings, and this queue's
// children against it. A dimension the parent does not set is not limited (Basalt's choice:
// Volcano treats an unset dimension the same way for deserved and capability).
void ValidateTreeQuotas(std::string_view name, FieldReader& spec, const ClusterLister& lister,
                        ErrorList& errors) {
  ErrorList ignored;  // own quantities are reported by ValidateResources
  const FieldPath spec_path("spec");
  struct Dimension {
    std::string_view field;
    FieldPath path;
    ResourceMap own;
  };
  std::vector<Dimension> dims;
  dims.push_back({"guarantee", spec_path.Child("guarantee").Child("resource"),
                  ReadResourceList(spec.Child("guarantee").Member("resource"),
                                   spec_path.Child("guarantee").Child("resource"), ignored)});
  dims.push_back({"deserved", spec_path.Child("deserved"),
                  ReadResourceList(spec.Member("deserved"), spec_path.Child("deserved"), ignored)});

  const std::string_view parent = spec.View("parent");
  if (!parent.empty() && parent != api::kRootQueue && parent != name) {
    auto parent_info = lister.GetQueue(parent);
    if (parent_info.ok()) {
      std::vector<QueueInfo> siblings;
      for (const std::string& sibling : lister.ChildQueues(parent)) {
        if (sibling == name) continue;
        auto q = lister.GetQueue(sibling);
        if (q.ok()) siblings.push_back(*std::move(q));
      }
      for (const Dimension& d : dims) {
        const ResourceMap limit = ParseQuantities(Field(*parent_info, d.field));
        for (const auto& [resource_name, own] : d.own) {
          auto l = limit.find(resource_name);
          if (l == limit.end()) continue;
          resource::Quantity others;
          for (const QueueInfo& s : siblings) {
            const ResourceMap theirs = ParseQuantities(Field(s, d.field));
            auto t = theirs.find(resource_name);
            if (t != theirs.end()) others += t->second;
          }
          if (own + others > l->second) {
            errors.Invalid(
                d.path.Key(resource_name),
                fmt::format("the children of queue `{}` may together have at most its {}[{}]={}; "
                            "this queue's {} plus its siblings' {} is {}",
                            parent, d.field, resource_name, l->second.String(), own.String(),
                            others.String(), (own + others).String()));
          }
        }
      }
    }
  }

  std::vector<QueueInfo> children;
  for (const std::string& child : lister.ChildQueues(name)) {
    auto q = lister.GetQueue(child);
    if (q.ok()) children.push_back(*std::move(q));
  }
  if (children.empty()) return;
  for (const Dimension& d : dims) {
    for (const auto& [resource_name, own] : d.own) {
      resource::Quantity sum;
      for (const QueueInfo& c : children) {
        const ResourceMap theirs = ParseQuantities(Field(c, d.field));
        auto t = theirs.find(resource_name);
        if (t != theirs.end()) sum += t->second;
      }
      if (sum > own) {
        errors.Invalid(
            d.path.Key(resource_name),
            fmt::format("{}[{}]={} must be >= the sum of its child queues' {}[{}]={}", d.field,
                        resource_name, own.String(), d.field, resource_name, sum.String()));
      }
    }
  }
  const ResourceMap capability =
      ReadResourceList(spec.Member("capability"), spec_path.Child("capability"), ignored);
  for (const auto& [resource_name, own] : capability) {
    for (const QueueInfo& c : children) {
      const ResourceMap theirs = ParseQuantities(c.capability);
      auto t = theirs.find(resource_name);
      if (t != theirs.end() && t->second > own) {
        errors.Invalid(
            spec_path.Child("capability").Key(resource_name),
            fmt::format("capability[{}]={} must be >= capability[{}]={} of child queue "
                        "`{}`",
                        resource_name, own.String(), resource_name, t->second.String(), c.name));
      }
    }
  }
}

// Whether member `key` is the same in both (absent and null are the same).
bool SameMember(const FieldReader& a, const FieldReader& b, std::string_view key) {
  const json::Value* x = a.Member(key);
  const json::Value* y = b.Member(key);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

}  // namespace

ErrorList ValidateQueueCreateOrUpdate(const json::Value* old_queue, const json::Value& queue,
                                      const ClusterLister& lister,
                                      const AdmissionOptions& options) {
  ErrorList errors;
  FieldReader reader(&queue, "");
  FieldReader metadata = reader.Child("metadata");
  std::string_view name = metadata.View("name");
  FieldReader spec = reader.Child("spec");
  const bool has_spec = spec.value() != nullptr;
  std::optional<FieldReader> old_reader;
  if (old_queue != nullptr) old_reader.emplace(old_queue, "");
  FieldReader old_spec = old_reader ? old_reader->Child("spec") : FieldReader(nullptr, "");

  ValidateResources(spec, errors);
  if (has_spec) {
    if (auto weight = spec.OptInt("weight")) {
      if (*weight < 1) {
        errors.Invalid(FieldPath("spec").Child("weight"),
                       "queue weight must be a positive integer");
      } else if (*weight > kMaxQueueWeight) {
        errors.Invalid(FieldPath("spec").Child("weight"),
                       fmt::format("queue weight must be <= {}", kMaxQueueWeight));
      }
    }
  }
  ValidateState(old_reader ? &*old_reader : nullptr, reader, errors);
  ValidateHierarchyAnnotations(metadata, errors);

  bool parent_changed = old_queue == nullptr || !SameMember(old_spec, spec, "parent");
  bool capability_changed = old_queue == nullptr || !SameMember(old_spec, spec, "capability");
  const size_t before_parent = errors.size();
  if (has_spec && name != "root" && (parent_changed || capability_changed)) {
    ValidateParent(name, spec, lister, options, errors);
  }
  const bool parent_ok = errors.size() == before_parent;  // no quota sums across a broken tree
  const bool quotas_changed = capability_changed || !SameMember(old_spec, spec, "deserved") ||
                              !SameMember(old_spec, spec, "guarantee");
  if (has_spec && name != "root" && parent_ok && (parent_changed || quotas_changed)) {
    ValidateTreeQuotas(name, spec, lister, errors);
  }
  if (old_queue != nullptr && name == "root" && options.root_queue_protection) {
    for (std::string_view field : {"capability", "deserved", "guarantee"}) {
      if (!SameMember(old_spec, spec, field)) {
        errors.Forbidden(FieldPath("spec").Child(field),
                         fmt::format("`root` queue {} can not be changed", field));
      }
    }
  }
  return errors;
}

ErrorList ValidateQueueDelete(std::string_view name, const ClusterLister& lister) {
  ErrorList errors;
  if (name == api::kDefaultQueue || name == api::kRootQueue) {
    errors.Forbidden(FieldPath(), fmt::format("`{}` queue can not be deleted", name));
    return errors;
  }
  std::vector<std::string> children = lister.ChildQueues(name);
  if (!children.empty()) {
    std::string list;
    for (const auto& c : children) list += (list.empty() ? "" : ", ") + c;
    errors.Forbidden(FieldPath(), fmt::format("queue {} can not be deleted because it has {}: {}",
                                              name, Plural(children.size(), "child queue"), list));
  }
  int podgroups = lister.CountPodGroupsInQueue(name);
  int jobs = lister.CountJobsInQueue(name);
  if (podgroups > 0 || jobs > 0) {
    errors.Forbidden(FieldPath(),
                     fmt::format("queue `{}` can not be deleted because it still has {} and {}; "
                                 "delete them or move them to another queue first",
                                 name, Plural(static_cast<size_t>(podgroups), "PodGroup"),
                                 Plural(static_cast<size_t>(jobs), "Job")));
  }
  return errors;
}

AdmissionResponse QueueValidator::Handle(const AdmissionRequest& request) const {
  switch (request.operation) {
    case Operation::kCreate:
    case Operation::kUpdate:
      if (request.object == nullptr) break;
      return ValidateQueueCreateOrUpdate(
                 request.operation == Operation::kUpdate ? request.old_object : nullptr,
                 *request.object, lister_, options_)
          .ToResponse();
    case Operation::kDelete: {
      std::string name = request.name;
      if (name.empty() && request.old_object != nullptr) {
        name = FieldReader(request.old_object, "").Child("metadata").String("name");
      }
      return ValidateQueueDelete(name, lister_).ToResponse();
    }
    default:
      break;
  }
  return AdmissionResponse::Allow();
}

}  // namespace basalt::webhook
