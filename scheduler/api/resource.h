#pragma once
// Resource is the scheduler's exact resource vector: milli-CPU, memory in bytes, and a small
// sorted map of scalar (extended) resources such as nvidia.com/gpu, stored in milli-units
// (1 GPU = 1000). All arithmetic is on int64, so fit checks are exact; there is no epsilon.
// The `pods` count is not part of a Resource; NodeInfo tracks it separately.
//
// Arithmetic saturates at the int64 range (kSaturated = 2^63-1) instead of wrapping: a request
// read as 2^63-1 (the API's "9223372036854775807" clamped by Quantity) plus anything stays
// 2^63-1, so a sum is never smaller than one of its terms and a huge request can never turn
// into a negative demand. Below saturation every operation is exact. Once a sum has saturated,
// subtracting a term from it is no longer exact (the result is a lower bound of the true sum);
// that only happens when the true sum exceeds 2^63-1 milli-units, which no real cluster holds.
//
// A value type; not thread-safe for concurrent mutation.

#include <cstdint>
#include <map>  // not used here; kept for includers that relied on it
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basalt::sched {

inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kGpu = "nvidia.com/gpu";

// Saturating int64 arithmetic: the exact result clamped to [INT64_MIN, INT64_MAX].
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? INT64_MAX : INT64_MIN;
  return out;
}
inline int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) return b < 0 ? INT64_MAX : INT64_MIN;
  return out;
}
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return (a < 0) == (b < 0) ? INT64_MAX : INT64_MIN;
  return out;
}

// A Resource's scalar dimensions (name -> milli-units), sorted by name. A flat vector: most
// requests have none or one (nvidia.com/gpu), and a cache of 50k tasks holds four Resources
// each, so one small block beats a std::map node per dimension (issue 17: memory per pod).
// Iterates as pairs, like the map it replaces. Value type.
class ScalarMap {
 public:
  using value_type = std::pair<std::string, int64_t>;
  using const_iterator = std::vector<value_type>::const_iterator;

  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  // The entry for `name`, or end().
  const_iterator find(std::string_view name) const;
  // The value for `name`, inserted as 0 if absent. The reference lasts until the next insertion.
  int64_t& operator[](std::string_view name);

 private:
  std::vector<value_type> items_;
};

// How a dimension that is absent from the right-hand side of a comparison is treated.
enum class MissingAs { kZero, kInfinity };

class Resource {
 public:
  // Large enough to mean "unbounded" and small enough that adding a few never overflows.
  static constexpr int64_t kUnbounded = INT64_MAX / 8;
  // Where sums and products saturate (and what Quantity clamps huge values to).
  static constexpr int64_t kSaturated = INT64_MAX;

  Resource() = default;
  Resource(int64_t milli_cpu, int64_t memory) : milli_cpu_(milli_cpu), memory_(memory) {}

  // A resource with cpu and memory unbounded and no scalars; with MissingAs::kInfinity it
  // behaves as +infinity in every dimension.
  static Resource Unbounded() { return Resource(kUnbounded, kUnbounded); }

  int64_t milli_cpu() const { return milli_cpu_; }
  int64_t memory() const { return memory_; }
  const ScalarMap& scalars() const { return scalars_; }

  Resource& SetMilliCpu(int64_t v) {
    milli_cpu_ = v;
    return *this;
  }
  Resource& SetMemory(int64_t v) {
    memory_ = v;
    return *this;
  }
  // Sets a dimension by name: "cpu" (milli-cpu), "memory" (bytes) or a scalar (milli-units).
  Resource& Set(std::string_view name, int64_t value);
  // Sets a scalar resource from whole units (e.g. 2 GPUs -> 2000 milli-units), saturating.
  Resource& SetUnits(std::string_view name, int64_t units) {
    return Set(name, SaturatingMul(units, 1000));
  }
  // Value of a dimension by name; 0 if absent.
  int64_t Get(std::string_view name) const;
  // True if the dimension is cpu, memory, or a scalar present in the map.
  bool Has(std::string_view name) const;
  // Names of the non-zero dimensions, in the order cpu, memory, then scalars sorted by name.
  std::vector<std::string> Names() const;

  // True if every dimension is zero (a BestEffort request).
  bool IsEmpty() const;
  // True if the named dimension is zero or absent.
  bool IsZero(std::string_view name) const { return Get(name) == 0; }

  // Per-dimension saturating sum.
  Resource& operator+=(const Resource& r);
  // Per-dimension saturating difference; dimensions may go negative (callers keep the
  // invariant).
  Resource& operator-=(const Resource& r);
  friend Resource operator+(Resource a, const Resource& b) { return a += b; }
  friend Resource operator-(Resource a, const Resource& b) { return a -= b; }
  friend bool operator==(const Resource& a, const Resource& b);

  // Per-dimension max(this - r, 0).
  Resource SubFloorZero(const Resource& r) const;
  // Per-dimension multiplication by num/den (integer, rounded toward zero, saturating).
  Resource Scale(int64_t num, int64_t den) const;
  // True if any dimension is at the saturation bound (+/-kSaturated).
  bool IsSaturated() const;

  // True if this <= rhs in every dimension of either side. A scalar absent from `rhs` counts as
  // 0 or as +infinity per `missing`; a scalar absent from this counts as 0.
  bool LessEqual(const Resource& rhs, MissingAs missing = MissingAs::kZero) const;
  // Like LessEqual, but only over the dimensions in which `dims` is non-zero.
  bool LessEqualOn(const Resource& rhs, const Resource& dims,
                   MissingAs missing = MissingAs::kZero) const;
  // Per-dimension min / max. For min, a scalar absent from `r` is treated per `missing`
  // (kInfinity keeps this value, kZero yields 0). For max, absent values count as 0.
  Resource Min(const Resource& r, MissingAs missing) const;
  Resource Max(const Resource& r) const;

  // The first dimension (cpu, memory, then scalars by name) in which this exceeds `avail`,
  // or nullopt if this <= avail everywhere. Used for the "Insufficient <name>" reason.
  std::optional<std::string> FirstInsufficient(const Resource& avail) const;
  // The same without a copy: the name is a constant or a key of this resource's scalars, valid
  // while this resource is unchanged.
  std::optional<std::string_view> FirstInsufficientName(const Resource& avail) const;

  // "cpu 1500m, memory 2Gi, nvidia.com/gpu 1". Zero dimensions are omitted, except that an
  // empty resource prints as "cpu 0, memory 0".
  std::string ToString() const;

 private:
  int64_t milli_cpu_ = 0;
  int64_t memory_ = 0;
  ScalarMap scalars_;
};

// True for resources that only come in whole units: extended resources such as nvidia.com/gpu
// (Kubernetes refuses fractional requests of them). False for cpu, memory, ephemeral-storage,
// hugepages-* and attachable-volumes-*.
bool IsWholeUnitResource(std::string_view name);

// Formats one dimension's value readably: cpu as cores or millicores ("2", "1500m"), memory
// with binary suffixes when exact ("2Gi"), scalars as units ("4", "1500m"). kUnbounded (and more,
// short of saturation) prints "unlimited"; a saturated value prints with " or more" appended,
// since the true quantity may have been larger.
std::string FormatQuantity(std::string_view name, int64_t value);

}  // namespace basalt::sched
