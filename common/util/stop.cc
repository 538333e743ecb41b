#include "common/util/stop.h"

#include "common/util/clock.h"

namespace basalt {

bool SleepFor(const std::stop_token& stop, std::chrono::milliseconds d, Clock* clock) {
  Clock& c = clock != nullptr ? *clock : *Clock::Real();
  const Clock::TimePoint now = c.Now();
  // A very long sleep (the webhook's "until stopped") waits for the stop request alone.
  const Clock::TimePoint deadline = d >= Clock::TimePoint::max() - now
                                        ? Clock::TimePoint::max()
                                        : now + std::chrono::duration_cast<Clock::Duration>(d);
  return SleepUntil(c, stop, deadline);
}

}  // namespace basalt
