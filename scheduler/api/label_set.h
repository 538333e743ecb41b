#pragma once
// LabelSet is a pod's labels as the scheduler keeps them: one sorted flat vector of (key, value)
// views instead of a std::map with a node and a heap key per label (issue 17: memory per pod).
// Keys repeat across all pods (volcano.sh/job-name, app, ...), so they are interned process-wide
// and each entry's key views the one interned copy; the values are stored back to back in one
// block the set owns. Reads look like a const std::map<std::string, std::string> whose entries
// are std::string_view pairs: find / count / contains / at, ordered iteration, size, ==.
//
// Interned keys are never released; to bound that, at most kMaxInternedKeys distinct keys are
// interned per process and any further key is stored in the set's own block like a value.
// Thread-safety: a LabelSet is immutable once made except for Set(), so const reads are safe
// from any number of threads; interning is thread-safe.

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basalt::sched {

class LabelSet {
 public:
  using Entry = std::pair<std::string_view, std::string_view>;  // key, value
  using const_iterator = std::vector<Entry>::const_iterator;
  using value_type = Entry;

  // Past this many distinct interned keys, new keys are stored per set (see above).
  static constexpr size_t kMaxInternedKeys = 4096;

  LabelSet() = default;
  // Implicit, so a map or a braced list assigns as it did when labels were a std::map.
  LabelSet(const std::map<std::string, std::string>& labels);                             // NOLINT
  LabelSet(std::initializer_list<std::pair<std::string_view, std::string_view>> labels);  // NOLINT
  // From (key, value) pairs in any order; a repeated key keeps its last value.
  template <typename It>
  LabelSet(It first, It last) {
    std::vector<Entry> in;
    for (; first != last; ++first) in.emplace_back(first->first, first->second);
    Assign(std::move(in));
  }

  LabelSet(const LabelSet& other) { Assign(other.entries_); }
  LabelSet& operator=(const LabelSet& other) {
    if (this != &other) Assign(std::vector<Entry>(other.entries_));
    return *this;
  }
  LabelSet(LabelSet&&) noexcept = default;  // views into values_ stay valid: the block moves
  LabelSet& operator=(LabelSet&&) noexcept = default;

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // The entry with `key`, or end().
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`; requires contains(key) (crashes otherwise, as std::map::at throws).
  std::string_view at(std::string_view key) const;

  // Sets `key` to `value` (adds or replaces); O(size). For builders and tests.
  void Set(std::string_view key, std::string_view value);

  friend bool operator==(const LabelSet& a, const LabelSet& b) { return a.entries_ == b.entries_; }

  // Distinct keys interned so far (for tests).
  static size_t InternedKeyCount();

 private:
  // Sorts `in` by key (last value of a repeated key wins), interns the keys and copies the
  // values (and keys not interned) into a new block. `in` may view this set's old block.
  void Assign(std::vector<Entry> in);

  std::vector<Entry> entries_;      // sorted by key, keys unique
  std::unique_ptr<char[]> values_;  // the values (and any keys not interned), back to back
};

}  // namespace basalt::sched
