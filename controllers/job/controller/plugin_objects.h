#pragma once
// PluginObjects writes the objects job plugins own (ConfigMaps, Services, Secrets,
// NetworkPolicies...) to the API server: the resource of each object comes from its apiVersion
// and kind (client::ResourceForKind). It knows nothing of plugins or of the reconciler: it
// takes the objects the plugins built.
//
// Thread-safe (the client is).

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/client/client.h"
#include "common/util/json.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

// What the reconciler asks of plugin-object I/O (PluginObjects does it against the API server;
// tests fake it).
class PluginObjectsInterface {
 public:
  virtual ~PluginObjectsInterface() = default;
  virtual absl::Status Create(std::string_view ns, const std::vector<json::Document>& objects) = 0;
  virtual absl::Status Apply(std::string_view ns, std::vector<json::Document> objects) = 0;
  virtual absl::Status Delete(const std::vector<ObjectRef>& refs) = 0;
};

class PluginObjects : public PluginObjectsInterface {
 public:
  // Borrows `client`.
  explicit PluginObjects(client::Client* client) : client_(client) {}

  // Creates each of `objects` in `ns`; one that already exists is left as it is. Stops at the
  // first error.
  absl::Status Create(std::string_view ns, const std::vector<json::Document>& objects) override;

  // Makes each of `objects` exist in `ns` as given: created when missing, replaced (PUT at the
  // current resourceVersion) when a member other than metadata and status differs. Fields the
  // API server defaulted in the existing object are no difference (only the members of the
  // desired object are compared). Stops at the first error.
  absl::Status Apply(std::string_view ns, std::vector<json::Document> objects) override;

  // Deletes the objects named by `refs`; one already gone is no error. Stops at the first error.
  absl::Status Delete(const std::vector<ObjectRef>& refs) override;

 private:
  client::Client* const client_;
};

// Whether every member of `want` is present and equal in `have` (objects compared member by
// member, other values by equality).
bool IsJsonSubset(const json::Value& want, const json::Value& have);

}  // namespace basalt::controllers
