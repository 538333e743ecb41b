#pragma once
// Interruptible waits for threads that run until a std::stop_token fires.

#include <chrono>
#include <stop_token>

namespace basalt {

class Clock;

// Waits on `clock` (Clock::Real() when null) until `d` has passed or `stop` is requested,
// whichever comes first; a stop request wakes the waiter at once (see SleepUntil in
// clock.h). Returns true if the full duration passed, false if stopped.
bool SleepFor(const std::stop_token& stop, std::chrono::milliseconds d, Clock* clock = nullptr);

}  // namespace basalt
