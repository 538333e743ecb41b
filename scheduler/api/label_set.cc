#include "scheduler/api/label_set.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace basalt::sched {
namespace {

// Process-wide interned label keys. A node-based set: the strings never move, so views of them
// stay valid for the life of the process. Leaked on purpose (no destruction-order hazard).
struct KeyTable {
  std::mutex mu;
  std::unordered_set<std::string> keys;  // guarded by mu
};

KeyTable& Keys() {
  static auto* table = new KeyTable();
  return *table;
}

// The interned copy of `key`, or an empty view when the table is full and `key` is not in it.
std::string_view InternKey(std::string_view key) {
  KeyTable& t = Keys();
  std::lock_guard<std::mutex> l(t.mu);
  // Heterogeneous lookup needs C++20 unordered transparent hashing, which this libstdc++ lacks.
  std::string probe(key);
  if (auto it = t.keys.find(probe); it != t.keys.end()) return *it;
  if (t.keys.size() >= LabelSet::kMaxInternedKeys) return {};
  return *t.keys.insert(std::move(probe)).first;
}

}  // namespace

LabelSet::LabelSet(const std::map<std::string, std::string>& labels)
    : LabelSet(labels.begin(), labels.end()) {}

LabelSet::LabelSet(std::initializer_list<std::pair<std::string_view, std::string_view>> labels)
    : LabelSet(labels.begin(), labels.end()) {}

void LabelSet::Assign(std::vector<Entry> in) {
  std::stable_sort(in.begin(), in.end(),
                   [](const Entry& a, const Entry& b) { return a.first < b.first; });
  // Of a run of equal keys keep the last (stable sort kept their input order).
  std::vector<Entry> unique;
  unique.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (i + 1 < in.size() && in[i + 1].first == in[i].first) continue;
    unique.push_back(in[i]);
  }
  size_t bytes = 0;
  std::vector<std::string_view> interned(unique.size());
  for (size_t i = 0; i < unique.size(); ++i) {
    interned[i] = InternKey(unique[i].first);
    if (interned[i].data() == nullptr) bytes += unique[i].first.size();
    bytes += unique[i].second.size();
  }
  std::unique_ptr<char[]> block = bytes == 0 ? nullptr : std::make_unique<char[]>(bytes);
  std::vector<Entry> out;
  out.reserve(unique.size());
  char* at = block.get();
  auto copy = [&at](std::string_view s) {
    if (s.empty()) return std::string_view();
    std::memcpy(at, s.data(), s.size());
    std::string_view view(at, s.size());
    at += s.size();
    return view;
  };
  for (size_t i = 0; i < unique.size(); ++i) {
    std::string_view key = interned[i].data() != nullptr ? interned[i] : copy(unique[i].first);
    out.emplace_back(key, copy(unique[i].second));
  }
  // Only now drop the old block: `in` may have viewed it.
  entries_ = std::move(out);
  values_ = std::move(block);
}

LabelSet::const_iterator LabelSet::find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.first < k; });
  return it != entries_.end() && it->first == key ? it : entries_.end();
}

std::string_view LabelSet::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) {
    std::fprintf(stderr, "LabelSet::at: no label %.*s\n", static_cast<int>(key.size()), key.data());
    std::abort();
  }
  return it->second;
}

void LabelSet::Set(std::string_view key, std::string_view value) {
  // Copied first: key and value may view this set's block, which Assign replaces.
  const std::string k(key), v(value);
  std::vector<Entry> in = entries_;
  in.emplace_back(k, v);
  Assign(std::move(in));
}

size_t LabelSet::InternedKeyCount() {
  KeyTable& t = Keys();
  std::lock_guard<std::mutex> l(t.mu);
  return t.keys.size();
}

}  // namespace basalt::sched
