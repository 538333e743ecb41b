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

#include <memory>
#include <utility>

namespace basalt::sched {

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
  static const std::shared_ptr<const T>& Empty() {
    static const std::shared_ptr<const T> empty = std::make_shared<const T>();
    return empty;
  }

  std::shared_ptr<const T> p_;
};

}  // namespace basalt::sched
