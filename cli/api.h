#pragma once
// Api: the REST calls vcctl makes, over a client::Client's Transport, with the errors a user
// of a command-line tool expects. A refusal by the API server (or by an admission webhook)
// keeps the server's message verbatim, shaped as kubectl prints it:
//   Error from server (NotFound): jobs.batch.volcano.sh "nope" not found
//   Error from server: admission webhook "validatejob.volcano.sh" denied the request: ...
// The absl code follows common/client/errors.h (404 kNotFound, 409 kAlreadyExists, ...);
// transport failures ("cannot reach the API server") keep the transport's code.
//
// Thread-safe as the Client it wraps (the log follower and the waiter share one). Does not own
// the Client.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/client.h"
#include "common/client/resource.h"
#include "common/util/json.h"

namespace basalt::cli {

class Api {
 public:
  explicit Api(client::Client* client) : client_(client) {}

  absl::StatusOr<json::Document> Get(const client::ResourceRef& ref, std::string_view ns,
                                     std::string_view name);
  // Every item of the list (one request, no paging: vcctl lists what a person reads).
  absl::StatusOr<std::vector<json::Document>> List(const client::ResourceRef& ref,
                                                   std::string_view ns,
                                                   const client::ListOptions& options = {});
  absl::StatusOr<json::Document> Create(const client::ResourceRef& ref, std::string_view ns,
                                        std::string_view body);
  // A JSON merge patch (RFC 7386) of the object.
  absl::StatusOr<json::Document> MergePatch(const client::ResourceRef& ref, std::string_view ns,
                                            std::string_view name, std::string_view patch);
  absl::Status Delete(const client::ResourceRef& ref, std::string_view ns, std::string_view name);

  client::Client& client() { return *client_; }

 private:
  absl::StatusOr<json::Document> Call(client::Request request);

  client::Client* client_;
};

// The Status for a non-2xx answer: the code of errors.h and kubectl's wording with the
// server's message verbatim. Exposed for tests.
absl::Status ServerError(int http_status, std::string_view body);

}  // namespace basalt::cli
