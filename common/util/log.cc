#include "common/util/log.h"

#include <sys/time.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace basalt::log {
namespace {
std::atomic<int> g_verbosity{0};
std::mutex g_write_mu;
}  // namespace

int Verbosity() { return g_verbosity.load(std::memory_order_relaxed); }
void SetVerbosity(int v) { g_verbosity.store(v, std::memory_order_relaxed); }

void Write(Severity severity, std::string_view msg, std::string_view kv) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm t;
  gmtime_r(&tv.tv_sec, &t);
  char level = severity == Severity::kInfo ? 'I' : severity == Severity::kWarning ? 'W' : 'E';
  std::string line = fmt::format("{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {}{}\n", level, t.tm_mon + 1,
                                 t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, tv.tv_usec, msg, kv);
  std::lock_guard<std::mutex> l(g_write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace basalt::log
