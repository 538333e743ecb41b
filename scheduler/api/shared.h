#pragma once
// Shared<T> holds an immutable T that copies of its owner share instead of copying: a TaskInfo's
// labels, node selector, tolerations, affinity and host ports are read for every placement but
// never change while the pod does not, and each scheduling snapshot copies every task, so the
// cache and every snapshot point at one copy (issue 17: memory per pod). Changing the value
// replaces it (assignment, or Update, which edits a private copy and then swaps it in): a
// value other holders see never changes under them.
//
// Reads see a const T (implicit conversion, operator*, operator->, and begin/end/empty/size for
// containers). A default-constructed Shared holds a default T, shared process-wide.
// Thread-safety: as for the T it holds, immutable: any number of threads may read copies
// concurrently; a Shared object itself is thread-compatible.

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace basalt::sched {

template <typename T, typename Hash>
class SharedPool;

template <typename T>
class Shared {
 public:
  Shared() : p_(Empty()) {}
  // Implicit, so a T (or anything a T is made from) can be assigned as before.
  Shared(T value) : p_(std::make_shared<const T>(std::move(value))) {}  // NOLINT

  const T& get() const { return *p_; }
  operator const T&() const { return *p_; }  // NOLINT
  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_.get(); }

  // Container reads, so `for (const auto& x : task.labels)` reads as before.
  auto begin() const { return p_->begin(); }
  auto end() const { return p_->end(); }
  bool empty() const { return p_->empty(); }
  auto size() const { return p_->size(); }

  // Copies the value, applies `edit` to the copy and holds the result: other holders keep the
  // old value. For builders and the few writers; O(size of T).
  template <typename Edit>
  void Update(Edit&& edit) {
    T copy = *p_;
    std::forward<Edit>(edit)(copy);
    p_ = std::make_shared<const T>(std::move(copy));
  }

  // True when both hold the very same value object (a copy of one another, not re-made).
  bool SharesWith(const Shared& other) const { return p_ == other.p_; }

  friend bool operator==(const Shared& a, const Shared& b) { return a.p_ == b.p_ || *a == *b; }
  friend bool operator==(const Shared& a, const T& b) { return *a == b; }

 private:
  template <typename, typename>
  friend class SharedPool;
  explicit Shared(std::shared_ptr<const T> p) : p_(std::move(p)) {}

  static const std::shared_ptr<const T>& Empty() {
    static const std::shared_ptr<const T> empty = std::make_shared<const T>();
    return empty;
  }

  std::shared_ptr<const T> p_;
};

// SharedOptional<T> is an optional immutable T that copies of its owner share, for values most
// tasks lack and none edits in place (a pod's PodScheduled condition, a task's last discarded
// transaction): 16 bytes where std::optional<T> would hold the whole T inline in every task of
// the cache and of each snapshot (issue 17: memory per pod). Reads as std::optional does
// (has_value, explicit bool, *, ->); assigning a T or std::nullopt replaces the value, never
// changing one that other holders see. Thread-safety: as Shared.
template <typename T>
class SharedOptional {
 public:
  SharedOptional() = default;
  SharedOptional(std::nullopt_t) {}                                             // NOLINT
  SharedOptional(T value) : p_(std::make_shared<const T>(std::move(value))) {}  // NOLINT
  SharedOptional(const std::optional<T>& value) {                               // NOLINT
    if (value.has_value()) p_ = std::make_shared<const T>(*value);
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  // Require has_value().
  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_.get(); }
  // The value, or nullptr.
  const T* get() const { return p_.get(); }
  void reset() { p_.reset(); }

  // Equal when both are empty or both hold equal values (the very same one or not).
  friend bool operator==(const SharedOptional& a, const SharedOptional& b) {
    if (a.p_ == b.p_) return true;
    return a.p_ != nullptr && b.p_ != nullptr && *a.p_ == *b.p_;
  }
  friend bool operator==(const SharedOptional& a, const T& b) {
    return a.p_ != nullptr && *a.p_ == b;
  }

 private:
  std::shared_ptr<const T> p_;
};

// SharedPool interns Shared values: Intern(v) returns a Shared holding the very value an
// earlier Intern of an equal value returned while any holder still has it, else a new one.
// Pods made from one template (a Deployment's replicas, a job's tasks) carry equal
// tolerations and node selectors, so the cache and its snapshots hold each once (issue 17).
// An empty value is the process-wide empty one of Shared(). The pool holds weak references
// only: a value goes when its last holder drops it, and its entry is swept once expired
// entries could make up half the table. `Hash` hashes a T; T needs operator==.
// Thread-safe.
template <typename T, typename Hash>
class SharedPool {
 public:
  Shared<T> Intern(T value) {
    if (value.empty()) return Shared<T>();
    const size_t hash = Hash{}(value);
    std::lock_guard<std::mutex> l(mu_);
    auto [first, last] = entries_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (std::shared_ptr<const T> held = it->second.lock(); held != nullptr && *held == value) {
        return Shared<T>(std::move(held));
      }
    }
    // Not make_shared: a weak reference would keep a combined block (and the value's memory)
    // alive after the last holder let go.
    std::shared_ptr<const T> made(new T(std::move(value)));
    entries_.emplace(hash, made);
    if (entries_.size() >= 2 * live_after_sweep_ + 64) {
      std::erase_if(entries_, [](const auto& e) { return e.second.expired(); });
      live_after_sweep_ = entries_.size();
    }
    return Shared<T>(std::move(made));
  }

  // Entries in the table, expired ones not yet swept included (for tests).
  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return entries_.size();
  }

 private:
  mutable std::mutex mu_;
  std::unordered_multimap<size_t, std::weak_ptr<const T>> entries_;  // guarded by mu_
  size_t live_after_sweep_ = 0;                                      // guarded by mu_
};

}  // namespace basalt::sched
