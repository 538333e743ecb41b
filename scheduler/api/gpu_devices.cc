#include "scheduler/api/gpu_devices.h"

#include <algorithm>
#include <numeric>

namespace basalt::sched {

bool GpuRequest::AllowsModel(std::string_view model) const {
  if (models.empty()) return true;
  return std::find(models.begin(), models.end(), model) != models.end();
}

std::vector<std::string> ParseGpuModels(std::string_view spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    if (bar == std::string_view::npos) bar = spec.size();
    std::string_view item = spec.substr(start, bar - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = bar + 1;
  }
  return out;
}

GpuDevices::GpuDevices(std::string model, int32_t count)
    : model_(std::move(model)), free_(static_cast<size_t>(std::max(count, 0)), kWholeGpu) {}

int64_t GpuDevices::TotalFreeMilli() const {
  return std::accumulate(free_.begin(), free_.end(), int64_t{0});
}

bool GpuDevices::Fits(const GpuRequest& req) const {
  if (req.Empty()) return true;
  if (!req.AllowsModel(model_)) return false;
  int32_t n = 0;
  for (int32_t f : free_) {
    if (f >= req.milli && ++n >= req.count) return true;
  }
  return false;
}

std::vector<int32_t> GpuDevices::Choose(const GpuRequest& req, const HostLeft& left) const {
  std::vector<int32_t> out;
  if (req.Empty() || !Fits(req)) return out;
  std::vector<int32_t> order(free_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [this](int32_t a, int32_t b) { return free_[a] < free_[b]; });
  if (cost_ != nullptr && req.count == 1 && req.milli < kWholeGpu) {
    // GPUs with the same free share give the same state: one cost per distinct share.
    int32_t best = -1;
    double best_cost = 0;
    std::vector<int32_t> after = free_;
    for (size_t k = 0; k < order.size(); ++k) {
      const int32_t i = order[k];
      if (free_[i] < req.milli || (k > 0 && free_[order[k - 1]] == free_[i])) continue;
      after[i] -= req.milli;
      const double c = (*cost_)(after, left);
      after[i] += req.milli;
      if (best < 0 || c < best_cost) {
        best = i;
        best_cost = c;
      }
    }
    return {best};
  }
  for (int32_t i : order) {
    if (free_[i] >= req.milli) out.push_back(i);
    if (static_cast<int32_t>(out.size()) == req.count) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> GpuDevices::ChooseOrMostFree(const GpuRequest& req,
                                                  const HostLeft& left) const {
  std::vector<int32_t> out = Choose(req, left);
  if (!out.empty() || req.Empty() || free_.empty()) return out;
  std::vector<int32_t> order(free_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [this](int32_t a, int32_t b) { return free_[a] > free_[b]; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(req.count)));
  std::sort(order.begin(), order.end());
  return order;
}

void GpuDevices::Account(const std::vector<int32_t>& ids, int32_t milli, int sign) {
  for (int32_t i : ids) {
    if (i < 0 || i >= size()) continue;
    free_[static_cast<size_t>(i)] -= sign * milli;
  }
}

}  // namespace basalt::sched
