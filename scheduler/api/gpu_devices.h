#pragma once
// Per-physical-GPU accounting of one node, and what a task asks of those GPUs.
//
// A GpuRequest is `count` GPUs with `milli` thousandths of each (1000 = a whole GPU; a shared
// task asks for one GPU with milli < 1000), optionally restricted to some GPU models. GpuDevices
// is the node's list of GPUs (one model per node) with the free milli-GPU of each. The node's
// `nvidia.com/gpu` scalar in Resource stays the total; GpuDevices adds which GPU has room, so a
// task of 0.6 GPU does not fit on a node whose two GPUs have 0.5 free each.
//
// Value types; not thread-safe for concurrent mutation.

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace basalt::sched {

struct GpuRequest {
  int32_t count = 0;                // GPUs wanted
  int32_t milli = 0;                // of each GPU, 1..1000
  std::vector<std::string> models;  // allowed GPU models; empty: any model
  bool Empty() const { return count <= 0 || milli <= 0; }
  // count * milli: the request's total in milli-GPU.
  int64_t TotalMilli() const { return Empty() ? 0 : int64_t{count} * milli; }
  bool AllowsModel(std::string_view model) const;
};

// Parses a gpu_spec list "V100M16|V100M32" (empty: any model).
std::vector<std::string> ParseGpuModels(std::string_view spec);

// What a placement leaves of its node's CPU and memory, for a GPU choice cost.
struct HostLeft {
  int64_t milli_cpu = std::numeric_limits<int64_t>::max();
  int64_t memory = std::numeric_limits<int64_t>::max();
};

// The GPU choice hook: a scoring plugin (fgd) may set on a node's GPUs the cost of the node's
// state after a shared task (one GPU, less than whole) takes a candidate GPU: the free shares
// after and what is left of CPU and memory. Choose then takes the GPU of least cost (ties: best
// fit). Unset: best fit. Copied with the devices (a snapshot's copy keeps it).
using GpuChoiceCost =
    std::function<double(const std::vector<int32_t>& free_after, const HostLeft& left)>;

class GpuDevices {
 public:
  static constexpr int32_t kWholeGpu = 1000;

  GpuDevices() = default;
  // `count` GPUs of `model`, all free.
  GpuDevices(std::string model, int32_t count);

  const std::string& model() const { return model_; }
  int32_t size() const { return static_cast<int32_t>(free_.size()); }
  bool empty() const { return free_.empty(); }
  // Free milli-GPU of each GPU, by index.
  const std::vector<int32_t>& free_milli() const { return free_; }
  int64_t TotalFreeMilli() const;
  int64_t CapacityMilli() const { return int64_t{kWholeGpu} * size(); }

  // True if the model is allowed and at least `count` GPUs have `milli` free each.
  bool Fits(const GpuRequest& req) const;
  // The GPUs a request would use: for each wanted GPU the one with the least free capacity that
  // still fits (best fit; lowest index on ties), so shared tasks fill partly used GPUs first and
  // whole GPUs stay whole. Empty if the request does not fit.
  // With a choice cost set, a shared task goes to the GPU of least cost instead.
  std::vector<int32_t> Choose(const GpuRequest& req, const HostLeft& left = {}) const;
  // Like Choose, but when the request does not fit, the `count` GPUs with the most free
  // capacity (for pods the kubelet already runs, which are accounted even if over capacity).
  std::vector<int32_t> ChooseOrMostFree(const GpuRequest& req, const HostLeft& left = {}) const;
  void set_choice_cost(std::shared_ptr<const GpuChoiceCost> cost) { cost_ = std::move(cost); }
  // Subtracts (sign > 0) or gives back (sign < 0) `milli` on each of `ids`.
  void Account(const std::vector<int32_t>& ids, int32_t milli, int sign);

 private:
  std::string model_;
  std::vector<int32_t> free_;
  std::shared_ptr<const GpuChoiceCost> cost_;
};

}  // namespace basalt::sched
