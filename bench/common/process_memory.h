#pragma once
// The benchmarks' view of their own memory use (Linux).

#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace basalt::bench {

// Resident set size now (VmRSS of /proc/self/status), in KiB; -1 if unreadable.
inline long CurrentRssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// Peak resident set size of the process so far (getrusage ru_maxrss), in KiB.
inline long PeakRssKiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

}  // namespace basalt::bench
