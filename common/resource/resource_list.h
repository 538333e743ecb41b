#pragma once
// ResourceList maps resource names ("cpu", "memory", "pods", "ephemeral-storage",
// "nvidia.com/gpu", any extended resource) to exact Quantities, like core/v1 ResourceList.
// Every name is first class: arithmetic and fit checks treat a missing name as zero.
//
// Value type; copy freely. Thread-compatible.

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/resource/quantity.h"
#include "fmt/format.h"
#include "rapidjson/document.h"

namespace basalt::resource {

inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kPods = "pods";
inline constexpr std::string_view kEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";

class ResourceList {
 public:
  using Map = std::map<std::string, Quantity, std::less<>>;
  using const_iterator = Map::const_iterator;

  ResourceList() = default;
  ResourceList(std::initializer_list<std::pair<const std::string, Quantity>> items)
      : items_(items) {}

  // Decodes a JSON object {"cpu":"500m","memory":"1Gi","nvidia.com/gpu":1}. Null decodes to
  // an empty list. Errors name the offending resource ("resource \"cpu\": invalid quantity ...").
  static absl::StatusOr<ResourceList> FromJson(const rapidjson::Value& v);
  // Parses JSON text, as FromJson.
  static absl::StatusOr<ResourceList> Parse(std::string_view json_text);
  // Builds from name -> quantity strings; for tests and literals. Errors as Quantity::Parse.
  static absl::StatusOr<ResourceList> FromStrings(
      std::initializer_list<std::pair<std::string_view, std::string_view>> items);

  // Encodes as a JSON object of canonical quantity strings (names in sorted order).
  rapidjson::Value ToJson(rapidjson::Document::AllocatorType& alloc) const;
  std::string ToJsonString() const;

  // The quantity for `name`, zero if absent.
  Quantity Get(std::string_view name) const;
  bool Has(std::string_view name) const { return items_.find(name) != items_.end(); }
  void Set(std::string_view name, Quantity q);
  void Remove(std::string_view name);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const Map& items() const { return items_; }

  // Per-name sum / difference (names of either side; results may be negative).
  ResourceList& Add(const ResourceList& other);
  ResourceList& Sub(const ResourceList& other);
  friend ResourceList operator+(ResourceList a, const ResourceList& b) { return a.Add(b); }
  friend ResourceList operator-(ResourceList a, const ResourceList& b) { return a.Sub(b); }
  // Multiplies every quantity by n (replicas * per-pod request).
  ResourceList& MulInt(int64_t n);

  // True if every quantity here is <= the same name in `other` (missing names are zero):
  // "this request fits into that capacity". An empty list fits anywhere.
  bool LessEqual(const ResourceList& other) const;
  // Names whose quantity here exceeds `available` (sorted). Empty iff LessEqual(available).
  std::vector<std::string> Exceeding(const ResourceList& available) const;

  // True if every quantity is zero (an empty list is zero).
  bool IsZero() const;
  // Drops entries whose quantity is zero.
  void RemoveZeros();

  // Human-readable, sorted by name: "cpu 500m, memory 1Gi, nvidia.com/gpu 1"; "<none>" if
  // empty. For messages and logs.
  std::string String() const;

  // Equality compares quantities numerically, treating a missing name as zero.
  friend bool operator==(const ResourceList& a, const ResourceList& b);

 private:
  Map items_;
};

// Per-name maximum of a and b (missing names are zero).
ResourceList Max(const ResourceList& a, const ResourceList& b);
// Per-name minimum of a and b, over the names present in both.
ResourceList Min(const ResourceList& a, const ResourceList& b);

// A container's requests with Kubernetes' defaulting applied: a resource that has a limit but
// no request requests its limit. (The API server does this for stored Pods; pod templates
// inside Jobs are not defaulted, so computations over templates need it.)
ResourceList RequestsOrLimits(const ResourceList& requests, const ResourceList& limits);

// One init container's requests; restartable ones are sidecars (restartPolicy: Always).
struct InitContainerRequests {
  ResourceList requests;
  bool restartable = false;
};

// The effective request of a pod, as Kubernetes computes it for scheduling and quota:
// the sum of the app containers, raised per resource to each init container's request
// (a regular init container runs alone next to the sidecars started before it), sidecars
// adding to the steady state, plus the pod overhead.
ResourceList PodEffectiveRequest(std::span<const ResourceList> containers,
                                 std::span<const InitContainerRequests> init_containers,
                                 const ResourceList& overhead = {});

}  // namespace basalt::resource

// fmt::format("{}", list) prints list.String().
template <>
struct fmt::formatter<basalt::resource::ResourceList> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const basalt::resource::ResourceList& r, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(r.String(), ctx);
  }
};
