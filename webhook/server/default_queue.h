#pragma once
// The `default` queue every Volcano cluster has: Jobs without spec.queue are put there by the
// Job mutator, so it must exist before the first Job is admitted. (Volcano's scheduler
// creates it; Basalt's webhook does, because the webhook is what sends Jobs there and
// refuses its deletion.)

#include <stop_token>

#include "absl/status/status.h"
#include "common/client/client.h"

namespace basalt::webhook::server {

// The Queue created: weight 1, reclaimable true. Its status.state is then set to Open
// through the status subresource when permitted (else by the queue controller; admission
// treats a queue without status.state as Open).
std::string DefaultQueueJson();

// Creates the `default` queue if it does not exist. Idempotent: an existing queue (or one
// created concurrently: AlreadyExists) is success and left as it is.
absl::Status EnsureDefaultQueue(client::Client& client);

}  // namespace basalt::webhook::server
