#pragma once
// The `default` queue every Volcano cluster has (Jobs without spec.queue go there). Volcano's
// scheduler creates it; Basalt's controller manager does at start-up (and the webhook too),
// whichever runs first: creation is idempotent.

#include "absl/status/status.h"
#include "common/client/client.h"

namespace basalt::controllers {

// Creates Queue `default` (weight 1, reclaimable) unless it exists; AlreadyExists is success.
absl::Status EnsureDefaultQueue(client::Client& client);

}  // namespace basalt::controllers
