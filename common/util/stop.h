#pragma once
// Interruptible waits for threads that run until a std::stop_token fires.

#include <chrono>
#include <stop_token>

namespace basalt {

// Sleeps until `d` has passed or `stop` is requested, whichever comes first (checking every
// 100 ms at most). Returns true if the full duration passed, false if stopped.
bool SleepFor(const std::stop_token& stop, std::chrono::milliseconds d);

}  // namespace basalt
