#include "controllers/app/controller.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace basalt::controllers {

absl::StatusOr<std::vector<std::string>> ResolveControllers(
    const std::vector<std::string>& requested, const std::vector<std::string>& known) {
  std::set<std::string> out;
  for (const std::string& raw : requested) {
    if (raw.empty()) continue;
    if (raw == "*") {
      out.insert(known.begin(), known.end());
      continue;
    }
    if (std::find(known.begin(), known.end(), raw) == known.end()) {
      return absl::InvalidArgumentError(
          fmt::format("unknown controller \"{}\" (known: {})", raw, fmt::join(known, ",")));
    }
    out.insert(raw);
  }
  if (out.empty()) out.insert(known.begin(), known.end());
  return std::vector<std::string>(out.begin(), out.end());
}

std::string LeaseNameFor(const std::vector<std::string>& controllers) {
  std::vector<std::string> sorted = controllers;
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("vc-controller-manager-{}", fmt::join(sorted, "-"));
}

void ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  concurrency = std::max<size_t>(1, std::min(concurrency, n));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::jthread> threads;
  threads.reserve(concurrency - 1);
  for (size_t t = 1; t < concurrency; ++t) threads.emplace_back(work);
  work();
}

}  // namespace basalt::controllers
