#pragma once
// Client: the Kubernetes REST verbs over a Transport, on raw JSON. Objects go in as JSON text
// and come back as one rapidjson Document each (cpp-style-notes §4.4: one Document per
// object). Errors follow errors.h (404 kNotFound, 409 kAborted / kAlreadyExists, 410
// kOutOfRange, ...), with "VERB path" and the API server's message and reason in the message.
//
//   BASALT_ASSIGN_OR_RETURN(auto client, Client::FromOptions(options));
//   BASALT_ASSIGN_OR_RETURN(json::Document pod, client->Get(Pods(), "ns", "p1"));
//
// Thread-safe: one Client is shared by every controller worker of a process. Owns its
// Transport.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/config.h"
#include "common/client/errors.h"
#include "common/client/flags.h"
#include "common/client/resource.h"
#include "common/client/transport.h"
#include "common/util/clock.h"
#include "common/util/json.h"

namespace basalt::client {

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJsonPatch,       // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
};
std::string_view PatchContentType(PatchType type);

struct DeleteOptions {
  std::optional<std::string> propagation_policy;  // "Orphan", "Background", "Foreground"
  std::optional<int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;  // delete only this incarnation
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;

  // The DeleteOptions JSON ({"kind":"DeleteOptions",...}).
  std::string ToJson() const;
};

struct ObjectList {
  // Each item as its own Document, with apiVersion and kind filled in (LIST responses omit
  // them on items).
  std::vector<json::Document> items;
  std::string resource_version;  // of the list: start a watch from here
  std::string continue_token;    // non-empty when more pages remain
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };
std::string_view WatchEventTypeName(WatchEventType type);

struct WatchEvent {
  WatchEventType type;
  // The object (for kBookmark only apiVersion, kind and metadata.resourceVersion are set).
  json::Document object;
};

// Receives watch events in order. A non-OK return stops the watch; Watch() returns it.
using WatchHandler = std::function<absl::Status(WatchEvent&& event)>;

// Parses one line of a watch stream. An ERROR event becomes the Status it carries (410 ->
// kOutOfRange: relist); a line that is not a JSON watch event is kInternal naming the line.
absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

// True for the error ParseWatchEvent gives a line that is not a watch event (not JSON, no type
// or object, an unknown type): data the client could not read, so the stream and whatever it
// skipped can no longer be trusted. False for ERROR events, which carry the server's Status.
bool IsMalformedWatchEvent(const absl::Status& status);

class Client {
 public:
  explicit Client(std::unique_ptr<Transport> transport, std::string default_namespace = "default");
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // HTTPS transport with rate limiting and retries (NewTransport).
  static absl::StatusOr<std::unique_ptr<Client>> FromConfig(const RestConfig& config);
  // ConfigFromOptions + FromConfig: what a binary's main() calls.
  static absl::StatusOr<std::unique_ptr<Client>> FromOptions(const ClientOptions& options);

  // GET one object (or a subresource such as "status"). kNotFound if absent.
  absl::StatusOr<json::Document> Get(const ResourceRef& ref, std::string_view ns,
                                     std::string_view name, std::string_view subresource = {});

  // One LIST page (`options.limit` / `options.continue_token`). An empty `ns` on a namespaced
  // resource lists all namespaces. kOutOfRange when the continue token expired (relist).
  absl::StatusOr<ObjectList> List(const ResourceRef& ref, std::string_view ns,
                                  const ListOptions& options = {});
  // Follows continue tokens, `page_size` items per request, and returns every item.
  absl::StatusOr<ObjectList> ListAll(const ResourceRef& ref, std::string_view ns,
                                     ListOptions options = {}, int64_t page_size = 500);

  // Streams events until the server ends the watch (timeoutSeconds) or `cancel` fires
  // (returns OK), the handler fails (returns its status), or the stream fails. An ERROR event
  // ends the watch with its status: kOutOfRange (410) means the resourceVersion is too old.
  // Bookmarks are requested unless options.allow_watch_bookmarks is false.
  absl::Status Watch(const ResourceRef& ref, std::string_view ns, const ListOptions& options,
                     const WatchHandler& handler, CancelToken* cancel = nullptr);

  // POST. `ns` empty: taken from the body's metadata.namespace. kAlreadyExists on a
  // duplicate name.
  absl::StatusOr<json::Document> Create(const ResourceRef& ref, std::string_view ns,
                                        std::string_view body);
  // PUT of the whole object; namespace and name come from the body's metadata, and its
  // metadata.resourceVersion makes the write conditional: kAborted (IsConflict) when stale.
  absl::StatusOr<json::Document> Update(const ResourceRef& ref, std::string_view body);
  // PUT to the status subresource (spec changes in `body` are ignored by the server).
  absl::StatusOr<json::Document> UpdateStatus(const ResourceRef& ref, std::string_view body);
  // The same for a caller that knows the object's namespace and name (the body is not parsed).
  absl::StatusOr<json::Document> UpdateStatus(const ResourceRef& ref, std::string_view ns,
                                              std::string_view name, std::string_view body);
  absl::StatusOr<json::Document> Patch(const ResourceRef& ref, std::string_view ns,
                                       std::string_view name, PatchType type,
                                       std::string_view patch, std::string_view subresource = {});
  // DELETE. kNotFound if already gone; kAborted (IsConflict) if a precondition failed.
  absl::Status Delete(const ResourceRef& ref, std::string_view ns, std::string_view name,
                      const DeleteOptions& options = {});

  // POST to a subresource (binding, eviction, ...) and return the parsed answer.
  absl::StatusOr<json::Document> CreateSubresource(const ResourceRef& ref, std::string_view ns,
                                                   std::string_view name,
                                                   std::string_view subresource,
                                                   std::string_view body, int max_retries = -1);
  // Binds a pod to a node (pods/binding). With `pod_uid`, fails (kAborted/kNotFound) if the pod
  // was recreated under the same name. kAborted/kAlreadyExists-like conflict if already bound.
  // `annotations` are set on the pod by the same request (the API server merges the Binding's
  // metadata.annotations into the pod).
  absl::Status Bind(std::string_view ns, std::string_view pod, std::string_view node,
                    std::string_view pod_uid = {},
                    const std::vector<std::pair<std::string, std::string>>& annotations = {});
  // Evicts a pod through policy/v1 Eviction (respects PodDisruptionBudgets). Not retried: a
  // budget refusal comes back as kUnavailable with HttpCodeOf == 429.
  absl::Status Evict(std::string_view ns, std::string_view pod, const DeleteOptions& options = {});

  // Sends a raw request through the transport (escape hatch; no error mapping).
  absl::StatusOr<Response> Raw(const Request& request) { return transport_->Do(request); }

  Transport& transport() { return *transport_; }
  const std::string& default_namespace() const { return default_namespace_; }

 private:
  // The response of a request the server answered with 2xx; any other status is the error.
  absl::StatusOr<Response> DoSuccessful(const Request& request);
  // DoSuccessful, then the body parsed.
  absl::StatusOr<json::Document> DoObject(Request request);

  std::unique_ptr<Transport> transport_;
  const std::string default_namespace_;
};

// Runs a read-modify-write `fn` until it succeeds or fails with something other than a
// conflict (IsConflict), at most `max_attempts` times, sleeping 10ms, 20ms, 40ms... between
// attempts. `fn` must re-read the object each time.
absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, int max_attempts = 5,
                             Clock* clock = Clock::Real());

}  // namespace basalt::client
