#pragma once
// The `default` queue every Volcano cluster has: Jobs and PodGroups without spec.queue are put
// there, so it must exist before the first Job is admitted. Whichever Basalt component starts
// first creates it (the webhook, the controller manager and the scheduler all try); creating
// it is idempotent, so they can race.

#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/client/client.h"
#include "common/util/clock.h"

namespace basalt::ctrlkit {

inline constexpr std::string_view kDefaultQueueName = "default";

// The Queue created: weight 1, reclaimable true.
std::string DefaultQueueJson(std::string_view name = kDefaultQueueName);

// Creates the queue `name` if it does not exist, then sets its status.state to Open through
// the status subresource when permitted (otherwise the queue controller does; admission treats
// a queue without status.state as Open). An existing queue, or one created concurrently
// (AlreadyExists), is success and left as it is. Other errors are returned.
absl::Status EnsureDefaultQueue(client::Client& client, std::string_view name = kDefaultQueueName);

// EnsureDefaultQueue until it succeeds or `stop` is requested: right after start-up the API
// server may not reach the webhook yet (it admits the create), so failures are expected for a
// few seconds. Backs off from 500 ms to 5 s; logs the first failure and every tenth. Returns
// true once the queue exists, false if stopped first. The back-off waits on `clock`
// (Clock::Real() when null).
bool EnsureDefaultQueueWithRetry(const std::stop_token& stop, client::Client& client,
                                 std::string_view name = kDefaultQueueName, Clock* clock = nullptr);

}  // namespace basalt::ctrlkit
