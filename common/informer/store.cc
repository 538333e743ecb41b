#include "common/informer/store.h"

#include <algorithm>

#include "fmt/format.h"

namespace basalt::informer {

IndexFunc NamespaceIndexFunc() {
  return [](const Object& obj) -> std::vector<std::string> {
    std::string_view ns = obj.namespace_name();
    if (ns.empty()) return {};
    return {std::string(ns)};
  };
}

IndexFunc LabelIndexFunc() {
  return [](const Object& obj) -> std::vector<std::string> {
    std::vector<std::string> out;
    const json::Document* doc = obj.TryAs<json::Document>();
    if (doc == nullptr) return out;
    const json::Value* labels = json::FindPath(*doc, {"metadata", "labels"});
    if (labels == nullptr || !labels->IsObject()) return out;
    for (const auto& m : labels->GetObject()) {
      if (!m.value.IsString()) continue;
      out.push_back(fmt::format("{}={}", json::AsView(m.name), json::AsView(m.value)));
    }
    return out;
  };
}

Store::Store(Indexers indexers) {
  indexers.emplace(kNamespaceIndex, NamespaceIndexFunc());
  std::lock_guard<std::shared_mutex> l(mu_);
  for (auto& [name, fn] : indexers) indices_[name].fn = std::move(fn);
}

absl::Status Store::AddIndexers(Indexers indexers) {
  std::lock_guard<std::shared_mutex> l(mu_);
  for (const auto& [name, fn] : indexers) {
    if (indices_.count(name) > 0) {
      return absl::AlreadyExistsError(fmt::format("informer store: index {} exists", name));
    }
  }
  for (auto& [name, fn] : indexers) {
    Index& index = indices_[name];
    index.fn = std::move(fn);
    for (const auto& [key, obj] : items_) IndexInto(index, obj);
  }
  return absl::OkStatus();
}

void Store::IndexInto(Index& index, const Object& obj) {
  for (std::string& v : index.fn(obj)) index.values[std::move(v)].insert(obj.key());
}

void Store::UnindexFrom(Index& index, const Object& obj) {
  for (const std::string& v : index.fn(obj)) {
    auto it = index.values.find(v);
    if (it == index.values.end()) continue;
    it->second.erase(obj.key());
    if (it->second.empty()) index.values.erase(it);
  }
}

void Store::IndexLocked(const Object& obj) {
  for (auto& [name, index] : indices_) IndexInto(index, obj);
}

void Store::UnindexLocked(const Object& obj) {
  for (auto& [name, index] : indices_) UnindexFrom(index, obj);
}

Object Store::Upsert(Object obj) {
  std::lock_guard<std::shared_mutex> l(mu_);
  auto it = items_.find(obj.key());
  Object old;
  if (it != items_.end()) {
    old = std::move(it->second);
    UnindexLocked(old);
    it->second = obj;
  } else {
    items_.emplace(obj.key(), obj);
  }
  IndexLocked(obj);
  return old;
}

Object Store::Delete(std::string_view key) {
  std::lock_guard<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return Object();
  Object old = std::move(it->second);
  items_.erase(it);
  UnindexLocked(old);
  return old;
}

std::vector<StoreChange> Store::Replace(std::vector<Object> objects, std::string resource_version) {
  // Sorted by key; of duplicate keys (not expected from a LIST) the last one wins.
  std::stable_sort(objects.begin(), objects.end(),
                   [](const Object& a, const Object& b) { return a.key() < b.key(); });
  std::vector<Object> unique;
  unique.reserve(objects.size());
  for (Object& obj : objects) {
    if (!unique.empty() && unique.back().key() == obj.key()) {
      unique.back() = std::move(obj);
    } else {
      unique.push_back(std::move(obj));
    }
  }
  objects = std::move(unique);
  std::unordered_set<std::string_view> listed;
  listed.reserve(objects.size());
  for (const Object& obj : objects) listed.insert(obj.key());

  std::vector<StoreChange> changes;
  changes.reserve(objects.size());
  std::lock_guard<std::shared_mutex> l(mu_);
  // Vanished objects first (in key order), then adds and updates in key order.
  std::vector<std::string> vanished;
  for (const auto& [key, obj] : items_) {
    if (listed.count(key) == 0) vanished.push_back(key);
  }
  std::sort(vanished.begin(), vanished.end());
  for (const std::string& key : vanished) {
    auto it = items_.find(key);
    Object old = std::move(it->second);
    items_.erase(it);
    UnindexLocked(old);
    changes.push_back(StoreChange{std::move(old), Object()});
  }
  for (Object& obj : objects) {
    auto it = items_.find(obj.key());
    Object old;
    if (it != items_.end()) {
      old = std::move(it->second);
      UnindexLocked(old);
      it->second = obj;
    } else {
      items_.emplace(obj.key(), obj);
    }
    IndexLocked(obj);
    changes.push_back(StoreChange{std::move(old), std::move(obj)});
  }
  resource_version_ = std::move(resource_version);
  return changes;
}

Object Store::Get(std::string_view key) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? Object() : it->second;
}

std::vector<Object> Store::List() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<Object> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

std::vector<std::string> Store::Keys() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

absl::StatusOr<const Store::KeySet*> Store::FindKeysLocked(std::string_view index_name,
                                                           std::string_view value) const {
  auto index = indices_.find(index_name);
  if (index == indices_.end()) {
    return absl::NotFoundError(fmt::format("informer store: no index {}", index_name));
  }
  auto it = index->second.values.find(value);
  static const KeySet* const kEmpty = new KeySet();
  return it == index->second.values.end() ? kEmpty : &it->second;
}

absl::StatusOr<std::vector<Object>> Store::ByIndex(std::string_view index_name,
                                                   std::string_view value) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  absl::StatusOr<const KeySet*> keys = FindKeysLocked(index_name, value);
  if (!keys.ok()) return keys.status();
  std::vector<Object> out;
  out.reserve((*keys)->size());
  for (const std::string& key : **keys) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Store::IndexKeys(std::string_view index_name,
                                                          std::string_view value) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  absl::StatusOr<const KeySet*> keys = FindKeysLocked(index_name, value);
  if (!keys.ok()) return keys.status();
  std::vector<std::string> out((*keys)->begin(), (*keys)->end());
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> Store::IndexValues(std::string_view index_name) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto index = indices_.find(index_name);
  if (index == indices_.end()) {
    return absl::NotFoundError(fmt::format("informer store: no index {}", index_name));
  }
  std::vector<std::string> out;
  out.reserve(index->second.values.size());
  for (const auto& [value, keys] : index->second.values) out.push_back(value);
  std::sort(out.begin(), out.end());
  return out;
}

size_t Store::size() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return items_.size();
}

std::string Store::resource_version() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return resource_version_;
}

void Store::SetResourceVersion(std::string resource_version) {
  std::lock_guard<std::shared_mutex> l(mu_);
  resource_version_ = std::move(resource_version);
}

}  // namespace basalt::informer
