#include "common/util/stop.h"

#include <algorithm>
#include <thread>

namespace basalt {

bool SleepFor(const std::stop_token& stop, std::chrono::milliseconds d) {
  const auto deadline = std::chrono::steady_clock::now() + d;
  while (!stop.stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        deadline - now, std::chrono::milliseconds(100)));
  }
  return false;
}

}  // namespace basalt
