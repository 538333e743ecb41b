#include "common/resource/resource_list.h"

#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::resource {

absl::StatusOr<ResourceList> ResourceList::FromJson(const rapidjson::Value& v) {
  ResourceList out;
  if (v.IsNull()) return out;
  if (!v.IsObject()) {
    return absl::InvalidArgumentError("resource list must be a JSON object of name: quantity");
  }
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string_view name = json::AsView(it->name);
    auto q = Quantity::FromJson(it->value);
    if (!q.ok()) return Annotate(q.status(), fmt::format("resource \"{}\"", name));
    out.items_.insert_or_assign(std::string(name), *q);
  }
  return out;
}

absl::StatusOr<ResourceList> ResourceList::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(json::Document doc, json::Parse(json_text));
  return FromJson(doc);
}

absl::StatusOr<ResourceList> ResourceList::FromStrings(
    std::initializer_list<std::pair<std::string_view, std::string_view>> items) {
  ResourceList out;
  for (const auto& [name, text] : items) {
    auto q = Quantity::Parse(text);
    if (!q.ok()) return Annotate(q.status(), fmt::format("resource \"{}\"", name));
    out.Set(name, *q);
  }
  return out;
}

rapidjson::Value ResourceList::ToJson(rapidjson::Document::AllocatorType& alloc) const {
  rapidjson::Value obj(rapidjson::kObjectType);
  for (const auto& [name, q] : items_) {
    obj.AddMember(json::MakeString(name, alloc), json::MakeString(q.String(), alloc), alloc);
  }
  return obj;
}

std::string ResourceList::ToJsonString() const {
  rapidjson::Document doc;
  rapidjson::Value v = ToJson(doc.GetAllocator());
  return json::Serialize(v);
}

Quantity ResourceList::Get(std::string_view name) const {
  auto it = items_.find(name);
  return it == items_.end() ? Quantity() : it->second;
}

void ResourceList::Set(std::string_view name, Quantity q) {
  auto it = items_.find(name);
  if (it != items_.end()) {
    it->second = q;
  } else {
    items_.emplace(std::string(name), q);
  }
}

void ResourceList::Remove(std::string_view name) {
  auto it = items_.find(name);
  if (it != items_.end()) items_.erase(it);
}

ResourceList& ResourceList::Add(const ResourceList& other) {
  for (const auto& [name, q] : other.items_) {
    auto it = items_.find(name);
    if (it == items_.end()) {
      items_.emplace(name, q);
    } else {
      it->second += q;
    }
  }
  return *this;
}

ResourceList& ResourceList::Sub(const ResourceList& other) {
  for (const auto& [name, q] : other.items_) {
    auto it = items_.find(name);
    if (it == items_.end()) {
      items_.emplace(name, q.Neg());
    } else {
      it->second -= q;
    }
  }
  return *this;
}

ResourceList& ResourceList::MulInt(int64_t n) {
  for (auto& [name, q] : items_) q = q.MulInt(n);
  return *this;
}

bool ResourceList::LessEqual(const ResourceList& other) const {
  for (const auto& [name, q] : items_) {
    if (q > other.Get(name)) return false;
  }
  return true;
}

std::vector<std::string> ResourceList::Exceeding(const ResourceList& available) const {
  std::vector<std::string> out;
  for (const auto& [name, q] : items_) {
    if (q > available.Get(name)) out.push_back(name);
  }
  return out;
}

bool ResourceList::IsZero() const {
  for (const auto& [name, q] : items_) {
    if (!q.IsZero()) return false;
  }
  return true;
}

void ResourceList::RemoveZeros() {
  std::erase_if(items_, [](const auto& item) { return item.second.IsZero(); });
}

std::string ResourceList::String() const {
  if (items_.empty()) return "<none>";
  std::string out;
  for (const auto& [name, q] : items_) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, q.String());
  }
  return out;
}

bool operator==(const ResourceList& a, const ResourceList& b) {
  for (const auto& [name, q] : a.items_) {
    if (q != b.Get(name)) return false;
  }
  for (const auto& [name, q] : b.items_) {
    if (!a.Has(name) && !q.IsZero()) return false;
  }
  return true;
}

ResourceList Max(const ResourceList& a, const ResourceList& b) {
  ResourceList out;
  for (const auto& [name, q] : a) out.Set(name, std::max(q, b.Get(name)));
  for (const auto& [name, q] : b) {
    if (!a.Has(name)) out.Set(name, std::max(q, Quantity()));
  }
  return out;
}

ResourceList Min(const ResourceList& a, const ResourceList& b) {
  ResourceList out;
  for (const auto& [name, q] : a) {
    if (b.Has(name)) out.Set(name, std::min(q, b.Get(name)));
  }
  return out;
}

ResourceList RequestsOrLimits(const ResourceList& requests, const ResourceList& limits) {
  ResourceList out = requests;
  for (const auto& [name, q] : limits) {
    if (!out.Has(name)) out.Set(name, q);
  }
  return out;
}

ResourceList PodEffectiveRequest(std::span<const ResourceList> containers,
                                 std::span<const InitContainerRequests> init_containers,
                                 const ResourceList& overhead) {
  ResourceList steady;
  for (const ResourceList& c : containers) steady.Add(c);
  ResourceList sidecars;   // sidecars started so far keep running next to later containers
  ResourceList init_peak;  // the largest footprint seen during initialisation
  for (const InitContainerRequests& init : init_containers) {
    if (init.restartable) {
      steady.Add(init.requests);
      sidecars.Add(init.requests);
      init_peak = Max(init_peak, sidecars);
    } else {
      init_peak = Max(init_peak, sidecars + init.requests);
    }
  }
  ResourceList out = Max(steady, init_peak);
  out.Add(overhead);
  return out;
}

}  // namespace basalt::resource
