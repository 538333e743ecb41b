#pragma once
// VolumeControl makes a Job's volumes exist: claims to generate get their name written back
// into the Job's spec (as Volcano does, so users and pods see it), then each claim is found
// or created from the volume's volumeClaim (owned by the Job). A claim checked once is
// recorded in status.controlledResources["volume-pvc-<name>"] and not checked again.
//
// Errors the user should see come with `problem` set (the message for status.state and the
// PVCError event). Thread-safe (the client is); knows nothing of the reconciler.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/client/client.h"
#include "common/util/json.h"

namespace basalt::controllers {

// What the reconciler asks of volume I/O (VolumeControl does it against the API server; tests
// fake it).
class VolumeControlInterface {
 public:
  virtual ~VolumeControlInterface() = default;
  virtual absl::StatusOr<std::optional<json::Document>> NameClaims(const api::Job& job,
                                                                   std::string* problem) = 0;
  virtual absl::Status EnsureClaims(const api::Job& job,
                                    std::map<std::string, std::string>& controlled,
                                    std::string* problem) = 0;
};

class VolumeControl : public VolumeControlInterface {
 public:
  // Borrows `client`.
  explicit VolumeControl(client::Client* client) : client_(client) {}

  // Writes the generated claim names of `job`'s volumes into its spec (a JSON patch tested
  // against the Job's UID). Returns the patched Job document, or nullopt when every volume
  // already names its claim.
  absl::StatusOr<std::optional<json::Document>> NameClaims(const api::Job& job,
                                                           std::string* problem) override;

  // Finds or creates each claim the volumes of `job` name, recording checked claims in
  // `controlled`. A claim without volumeClaim that does not exist is kFailedPrecondition.
  absl::Status EnsureClaims(const api::Job& job, std::map<std::string, std::string>& controlled,
                            std::string* problem) override;

 private:
  client::Client* const client_;
};

}  // namespace basalt::controllers
