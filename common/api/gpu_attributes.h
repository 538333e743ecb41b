#pragma once
// GPU attributes a task asks for (Basalt extension, docs/scheduler.md "Heterogeneous GPUs"):
// annotations under gpu.basalt.dev/ on a Pod or a Job task's pod template, matched against the
// node labels NVIDIA GPU feature discovery (GFD) publishes:
//
//   gpu.basalt.dev/min-memory: 16Gi        nvidia.com/gpu.memory (MiB) >= 16Gi
//   gpu.basalt.dev/max-memory: 40Gi        nvidia.com/gpu.memory (MiB) <= 40Gi
//   gpu.basalt.dev/products: NVIDIA-A10,NVIDIA-A30      nvidia.com/gpu.product is one of them
//   gpu.basalt.dev/families: ampere,hopper              nvidia.com/gpu.family is one of them
//   gpu.basalt.dev/preferred-products: NVIDIA-A30       scored higher among the nodes that fit
//
// Memories are Kubernetes quantities with a unit (16Gi, 40G); a bare number is refused because
// it would read as bytes. The structs are plain values; ParseGpuAttributes is pure and
// thread-safe. The header is self-contained (no link dependency) so that the scheduler's
// TaskInfo can carry the parsed form.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basalt::api {

inline constexpr std::string_view kGpuAttributePrefix = "gpu.basalt.dev/";
inline constexpr std::string_view kGpuMinMemoryKey = "gpu.basalt.dev/min-memory";
inline constexpr std::string_view kGpuMaxMemoryKey = "gpu.basalt.dev/max-memory";
inline constexpr std::string_view kGpuProductsKey = "gpu.basalt.dev/products";
inline constexpr std::string_view kGpuFamiliesKey = "gpu.basalt.dev/families";
inline constexpr std::string_view kGpuPreferredProductsKey = "gpu.basalt.dev/preferred-products";

// Node labels of NVIDIA GPU feature discovery.
inline constexpr std::string_view kGfdProductLabel = "nvidia.com/gpu.product";
inline constexpr std::string_view kGfdMemoryLabel = "nvidia.com/gpu.memory";  // MiB per GPU
inline constexpr std::string_view kGfdFamilyLabel = "nvidia.com/gpu.family";
inline constexpr std::string_view kGfdCountLabel = "nvidia.com/gpu.count";

struct GpuAttributes {
  // MiB per GPU; 0 = no bound. min is rounded up, max down, from the quantity written.
  int64_t min_memory_mib = 0;
  int64_t max_memory_mib = 0;
  std::string min_memory;  // as written ("16Gi"), for messages
  std::string max_memory;
  std::vector<std::string> products;
  std::vector<std::string> families;
  std::vector<std::string> preferred_products;
  // The first invalid annotation as "<key>: <why>", "" if none. Set only for pods that reached
  // the scheduler without the webhook: the scheduler then places them nowhere and says this.
  std::string invalid;

  bool Empty() const {
    return min_memory_mib == 0 && max_memory_mib == 0 && products.empty() && families.empty() &&
           preferred_products.empty() && invalid.empty();
  }
  // True when something restricts the nodes (preferred products only score).
  bool Filters() const {
    return min_memory_mib != 0 || max_memory_mib != 0 || !products.empty() || !families.empty() ||
           !invalid.empty();
  }
};

struct GpuAttributeError {
  std::string key;  // the annotation
  std::string message;
};

struct ParsedGpuAttributes {
  GpuAttributes attributes;
  std::vector<GpuAttributeError> errors;  // in key order
};

// Reads the gpu.basalt.dev/ entries of `annotations` (others are ignored). An unknown key under
// the prefix is an error too, so that a misspelt requirement is never silently dropped.
ParsedGpuAttributes ParseGpuAttributes(
    const std::vector<std::pair<std::string, std::string>>& annotations);

}  // namespace basalt::api
