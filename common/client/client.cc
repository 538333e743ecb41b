#include "common/client/client.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "common/client/https_transport.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace basalt::client {
namespace {

constexpr size_t kMaxQuotedLine = 200;
// Payload that marks ParseWatchEvent's own errors (IsMalformedWatchEvent).
constexpr char kMalformedWatchEventPayload[] = "basalt.dev/malformed-watch-event";

absl::Status MalformedWatchEvent(std::string message) {
  absl::Status s = absl::InternalError(std::move(message));
  s.SetPayload(kMalformedWatchEventPayload, absl::Cord("1"));
  return s;
}

std::string QuoteLine(std::string_view line) {
  std::string s(line.substr(0, kMaxQuotedLine));
  if (line.size() > kMaxQuotedLine) s += "...";
  return s;
}

absl::Status CheckName(std::string_view what, std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError(fmt::format("{} must not be empty", what));
  if (name == "." || name == ".." || name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format("{} \"{}\" is not a valid name", what, name));
  }
  return absl::OkStatus();
}

absl::Status CheckNamespace(const ResourceRef& ref, std::string_view ns, bool required) {
  if (!ref.namespaced || ns.empty()) {
    if (ref.namespaced && required) {
      return absl::InvalidArgumentError(
          fmt::format("{} are namespaced: a namespace is required", ref.resource));
    }
    return absl::OkStatus();
  }
  return CheckName("namespace", ns);
}

// Writes a JSON object with string members, e.g. {"a":"b"} from pairs; nested via Writer.
class JsonWriter {
 public:
  JsonWriter() : writer_(buffer_) {}
  rapidjson::Writer<rapidjson::StringBuffer>& w() { return writer_; }
  void Key(std::string_view k) {
    writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  }
  void String(std::string_view v) {
    writer_.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  void KV(std::string_view k, std::string_view v) {
    Key(k);
    String(v);
  }
  std::string Take() { return std::string(buffer_.GetString(), buffer_.GetSize()); }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

void WriteDeleteOptions(JsonWriter& j, const DeleteOptions& o) {
  j.w().StartObject();
  j.KV("apiVersion", "v1");
  j.KV("kind", "DeleteOptions");
  if (o.propagation_policy.has_value()) j.KV("propagationPolicy", *o.propagation_policy);
  if (o.grace_period_seconds.has_value()) {
    j.Key("gracePeriodSeconds");
    j.w().Int64(*o.grace_period_seconds);
  }
  if (o.precondition_uid.has_value() || o.precondition_resource_version.has_value()) {
    j.Key("preconditions");
    j.w().StartObject();
    if (o.precondition_uid.has_value()) j.KV("uid", *o.precondition_uid);
    if (o.precondition_resource_version.has_value()) {
      j.KV("resourceVersion", *o.precondition_resource_version);
    }
    j.w().EndObject();
  }
  if (o.dry_run) {
    j.Key("dryRun");
    j.w().StartArray();
    j.String("All");
    j.w().EndArray();
  }
  j.w().EndObject();
}

struct ObjectKey {
  std::string ns;
  std::string name;
};

absl::StatusOr<ObjectKey> KeyFromBody(const ResourceRef& ref, std::string_view body) {
  absl::StatusOr<json::Document> doc = json::Parse(body);
  if (!doc.ok()) return Annotate(doc.status(), fmt::format("{} object", ref.resource));
  const json::Value* meta = json::Find(*doc, "metadata");
  if (meta == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{} object has no metadata", ref.resource));
  }
  ObjectKey key{std::string(json::GetString(*meta, "namespace")),
                std::string(json::GetString(*meta, "name"))};
  BASALT_RETURN_IF_ERROR(CheckName("metadata.name", key.name));
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, key.ns, true));
  return key;
}

absl::StatusOr<json::Document> ParseBody(const Request& request, const Response& response) {
  absl::StatusOr<json::Document> doc = json::Parse(response.body);
  if (!doc.ok()) {
    return absl::InternalError(fmt::format("{} {}: response is not JSON: {}: {}", request.verb,
                                           request.path, MessageOf(doc.status()),
                                           QuoteLine(response.body)));
  }
  return doc;
}

// One pass over a LIST response that builds nothing: where each element of the top-level
// "items" array starts and ends, and the list's metadata.resourceVersion and .continue. Each
// item is then parsed straight into its own document; parsing the whole list into one document
// and copying the items out cost about four times a bare parse.
class ListScanner : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ListScanner> {
 public:
  struct Span {
    size_t begin;
    size_t end;
  };

  explicit ListScanner(const rapidjson::MemoryStream& stream) : stream_(stream) {}

  bool Default() { return Scalar(); }
  bool Null() {
    if (depth_ == 1 && top_key_ == "items") return true;  // "items": null is an empty list
    return Scalar();
  }
  bool String(const char* str, rapidjson::SizeType length, bool) {
    if (depth_ == 2 && in_metadata_) {
      if (key_ == "resourceVersion") resource_version_.assign(str, length);
      if (key_ == "continue") continue_token_.assign(str, length);
    }
    return Scalar();
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    if (depth_ <= 2) key_.assign(str, length);
    if (depth_ == 1) top_key_.assign(str, length);
    return true;
  }
  bool StartObject() { return Open('{'); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool StartArray() { return Open('['); }
  bool EndArray(rapidjson::SizeType) { return Close(); }

  const std::vector<Span>& items() const { return items_; }
  std::string& resource_version() { return resource_version_; }
  std::string& continue_token() { return continue_token_; }
  // Why the response is not a list we can use ("" if it is).
  const std::string& problem() const { return problem_; }

 private:
  // A value that is not an object or array.
  bool Scalar() {
    if (depth_ == 1 && top_key_ == "items") {
      problem_ = "items is not a list";
      return false;
    }
    if (depth_ == 2 && in_items_) {
      problem_ = fmt::format("items[{}] is not an object", items_.size());
      return false;
    }
    return true;
  }
  bool Open(char c) {
    if (depth_ == 1) {
      in_items_ = top_key_ == "items";
      in_metadata_ = top_key_ == "metadata";
      if (in_items_ && c != '[') {
        problem_ = "items is not a list";
        return false;
      }
    } else if (depth_ == 2 && in_items_) {
      if (c != '{') {
        problem_ = fmt::format("items[{}] is not an object", items_.size());
        return false;
      }
      items_.push_back({stream_.Tell() - 1, 0});  // the '{' was just taken
    }
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    if (depth_ == 2 && in_items_) items_.back().end = stream_.Tell();  // the '}' was just taken
    if (depth_ == 1) in_items_ = in_metadata_ = false;
    return true;
  }

  const rapidjson::MemoryStream& stream_;
  int depth_ = 0;
  std::string top_key_;
  std::string key_;
  bool in_items_ = false;
  bool in_metadata_ = false;
  std::vector<Span> items_;
  std::string resource_version_;
  std::string continue_token_;
  std::string problem_;
};

// A 401 says the credentials were refused; name them (never the secret) so the operator knows
// which token file or certificate to look at. Keeps the reason and HTTP code payloads.
absl::Status NameCredentials(absl::Status status, const Transport& transport) {
  if (status.code() != absl::StatusCode::kUnauthenticated) return status;
  std::string credentials = transport.CredentialsDescription();
  if (credentials.empty()) return status;
  absl::Status out(status.code(),
                   fmt::format("{}; the server rejected the credentials: {} (an expired or "
                               "revoked token, or a certificate it does not trust)",
                               MessageOf(status), credentials));
  status.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

std::string DeleteOptions::ToJson() const {
  JsonWriter j;
  WriteDeleteOptions(j, *this);
  return j.Take();
}

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "UNKNOWN";
}

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  absl::StatusOr<json::Document> doc = json::Parse(line);
  if (!doc.ok()) {
    return MalformedWatchEvent(
        fmt::format("watch: line is not JSON ({}): {}", MessageOf(doc.status()), QuoteLine(line)));
  }
  std::string_view type = json::GetString(*doc, "type");
  const json::Value* object = json::Find(*doc, "object");
  if (type.empty() || object == nullptr || !object->IsObject()) {
    return MalformedWatchEvent(fmt::format(
        "watch: line is not a watch event (needs type and object): {}", QuoteLine(line)));
  }
  if (type == "ERROR") {
    return StatusFromApiStatusObject(json::Serialize(*object), "watch");
  }
  WatchEvent event;
  if (type == "ADDED") {
    event.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    event.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    event.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    event.type = WatchEventType::kBookmark;
  } else {
    return MalformedWatchEvent(
        fmt::format("watch: unknown event type \"{}\": {}", type, QuoteLine(line)));
  }
  event.object.CopyFrom(*object, event.object.GetAllocator());
  return event;
}

bool IsMalformedWatchEvent(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kMalformedWatchEventPayload).has_value();
}

Client::Client(std::unique_ptr<Transport> transport, std::string default_namespace)
    : transport_(std::move(transport)), default_namespace_(std::move(default_namespace)) {}

absl::StatusOr<std::unique_ptr<Client>> Client::FromConfig(const RestConfig& config) {
  BASALT_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, NewTransport(config));
  return std::make_unique<Client>(std::move(transport), config.default_namespace);
}

absl::StatusOr<std::unique_ptr<Client>> Client::FromOptions(const ClientOptions& options) {
  BASALT_ASSIGN_OR_RETURN(RestConfig config, ConfigFromOptions(options));
  return FromConfig(config);
}

absl::StatusOr<json::Document> Client::DoObject(Request request) {
  BASALT_ASSIGN_OR_RETURN(Response response, DoSuccessful(request));
  return ParseBody(request, response);
}

absl::StatusOr<Response> Client::DoSuccessful(const Request& request) {
  absl::StatusOr<Response> response = transport_->Do(request);
  if (!response.ok()) return response.status();
  if (response->status_code < 200 || response->status_code >= 300) {
    return NameCredentials(ApiError(response->status_code, response->body,
                                    fmt::format("{} {}", request.verb, request.path)),
                           *transport_);
  }
  return response;
}

absl::StatusOr<json::Document> Client::Get(const ResourceRef& ref, std::string_view ns,
                                           std::string_view name, std::string_view subresource) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, true));
  BASALT_RETURN_IF_ERROR(CheckName("name", name));
  Request request;
  request.verb = "GET";
  request.path = ResourcePath(ref, ns, name, subresource);
  return DoObject(std::move(request));
}

absl::StatusOr<ObjectList> Client::List(const ResourceRef& ref, std::string_view ns,
                                        const ListOptions& options) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, false));
  Request request;
  request.verb = "GET";
  request.path = ResourcePath(ref, ns) + ListQuery(options, false);
  BASALT_ASSIGN_OR_RETURN(Response response, DoSuccessful(request));
  const std::string& body = response.body;
  rapidjson::MemoryStream stream(body.data(), body.size());
  ListScanner scanner(stream);
  rapidjson::Reader reader;
  rapidjson::ParseResult parsed = reader.Parse<rapidjson::kParseStopWhenDoneFlag>(stream, scanner);
  if (!scanner.problem().empty()) {
    return absl::InternalError(fmt::format("GET {}: {}", request.path, scanner.problem()));
  }
  if (parsed.IsError()) {
    return absl::InternalError(
        fmt::format("{} {}: response is not JSON: invalid JSON at offset {}: {}: {}", request.verb,
                    request.path, parsed.Offset(), rapidjson::GetParseError_En(parsed.Code()),
                    QuoteLine(body)));
  }
  ObjectList list;
  list.resource_version = std::move(scanner.resource_version());
  list.continue_token = std::move(scanner.continue_token());
  list.items.reserve(scanner.items().size());
  const std::string api_version = ref.ApiVersion();
  for (const ListScanner::Span& span : scanner.items()) {
    json::Document d;
    d.Parse<rapidjson::kParseStopWhenDoneFlag>(body.data() + span.begin, span.end - span.begin);
    if (d.HasParseError() || !d.IsObject()) {  // cannot happen: the scan validated it
      return absl::InternalError(
          fmt::format("GET {}: item at offset {} does not parse", request.path, span.begin));
    }
    if (json::Find(d, "apiVersion") == nullptr) {
      json::Set(d, "apiVersion", json::MakeString(api_version, d.GetAllocator()), d.GetAllocator());
    }
    if (json::Find(d, "kind") == nullptr && !ref.kind.empty()) {
      json::Set(d, "kind", json::MakeString(ref.kind, d.GetAllocator()), d.GetAllocator());
    }
    list.items.push_back(std::move(d));
  }
  return list;
}

absl::StatusOr<ObjectList> Client::ListAll(const ResourceRef& ref, std::string_view ns,
                                           ListOptions options, int64_t page_size) {
  options.limit = page_size;
  options.continue_token.clear();
  ObjectList all;
  while (true) {
    BASALT_ASSIGN_OR_RETURN(ObjectList page, List(ref, ns, options));
    for (json::Document& d : page.items) all.items.push_back(std::move(d));
    all.resource_version = page.resource_version;
    if (page.continue_token.empty()) break;
    options.continue_token = page.continue_token;
    // Later pages come from the snapshot named by the continue token.
    options.resource_version.clear();
    options.resource_version_match.clear();
  }
  return all;
}

absl::Status Client::Watch(const ResourceRef& ref, std::string_view ns, const ListOptions& options,
                           const WatchHandler& handler, CancelToken* cancel) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, false));
  Request request;
  request.verb = "GET";
  request.path = ResourcePath(ref, ns) + ListQuery(options, true);
  if (options.timeout_seconds.has_value() && *options.timeout_seconds > 0) {
    // The server ends the stream after timeoutSeconds; silence well past that means it is gone.
    request.stream_idle_timeout =
        std::chrono::seconds(*options.timeout_seconds) + std::chrono::seconds(30);
  }
  LineCallback on_line = [&handler](std::string_view line) -> absl::Status {
    BASALT_ASSIGN_OR_RETURN(WatchEvent event, ParseWatchEvent(line));
    return handler(std::move(event));
  };
  absl::StatusOr<Response> response = transport_->Stream(request, on_line, cancel);
  if (!response.ok()) return response.status();
  return NameCredentials(ApiError(response->status_code, response->body,
                                  fmt::format("{} {}", request.verb, request.path)),
                         *transport_);
}

absl::StatusOr<json::Document> Client::Create(const ResourceRef& ref, std::string_view ns,
                                              std::string_view body) {
  std::string effective_ns(ns);
  if (ref.namespaced && effective_ns.empty()) {
    absl::StatusOr<json::Document> doc = json::Parse(body);
    if (!doc.ok()) return Annotate(doc.status(), fmt::format("{} object", ref.resource));
    if (const json::Value* meta = json::Find(*doc, "metadata")) {
      effective_ns = std::string(json::GetString(*meta, "namespace"));
    }
  }
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, effective_ns, true));
  Request request;
  request.verb = "POST";
  request.path = ResourcePath(ref, effective_ns);
  request.body = std::string(body);
  return DoObject(std::move(request));
}

absl::StatusOr<json::Document> Client::Update(const ResourceRef& ref, std::string_view body) {
  BASALT_ASSIGN_OR_RETURN(ObjectKey key, KeyFromBody(ref, body));
  Request request;
  request.verb = "PUT";
  request.path = ResourcePath(ref, key.ns, key.name);
  request.body = std::string(body);
  return DoObject(std::move(request));
}

absl::StatusOr<json::Document> Client::UpdateStatus(const ResourceRef& ref, std::string_view body) {
  BASALT_ASSIGN_OR_RETURN(ObjectKey key, KeyFromBody(ref, body));
  return UpdateStatus(ref, key.ns, key.name, body);
}

absl::StatusOr<json::Document> Client::UpdateStatus(const ResourceRef& ref, std::string_view ns,
                                                    std::string_view name, std::string_view body) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, true));
  BASALT_RETURN_IF_ERROR(CheckName("name", name));
  Request request;
  request.verb = "PUT";
  request.path = ResourcePath(ref, ns, name, "status");
  request.body = std::string(body);
  return DoObject(std::move(request));
}

absl::StatusOr<json::Document> Client::Patch(const ResourceRef& ref, std::string_view ns,
                                             std::string_view name, PatchType type,
                                             std::string_view patch, std::string_view subresource) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, true));
  BASALT_RETURN_IF_ERROR(CheckName("name", name));
  Request request;
  request.verb = "PATCH";
  request.path = ResourcePath(ref, ns, name, subresource);
  request.headers.emplace_back("Content-Type", std::string(PatchContentType(type)));
  request.body = std::string(patch);
  return DoObject(std::move(request));
}

absl::Status Client::Delete(const ResourceRef& ref, std::string_view ns, std::string_view name,
                            const DeleteOptions& options) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, true));
  BASALT_RETURN_IF_ERROR(CheckName("name", name));
  Request request;
  request.verb = "DELETE";
  request.path = ResourcePath(ref, ns, name);
  request.body = options.ToJson();
  return DoObject(std::move(request)).status();
}

absl::StatusOr<json::Document> Client::CreateSubresource(const ResourceRef& ref,
                                                         std::string_view ns, std::string_view name,
                                                         std::string_view subresource,
                                                         std::string_view body, int max_retries) {
  BASALT_RETURN_IF_ERROR(CheckNamespace(ref, ns, true));
  BASALT_RETURN_IF_ERROR(CheckName("name", name));
  BASALT_RETURN_IF_ERROR(CheckName("subresource", subresource));
  Request request;
  request.verb = "POST";
  request.path = ResourcePath(ref, ns, name, subresource);
  request.body = std::string(body);
  request.max_retries = max_retries;
  return DoObject(std::move(request));
}

absl::Status Client::Bind(std::string_view ns, std::string_view pod, std::string_view node,
                          std::string_view pod_uid,
                          const std::vector<std::pair<std::string, std::string>>& annotations) {
  BASALT_RETURN_IF_ERROR(CheckName("node", node));
  JsonWriter j;
  j.w().StartObject();
  j.KV("apiVersion", "v1");
  j.KV("kind", "Binding");
  j.Key("metadata");
  j.w().StartObject();
  j.KV("name", pod);
  j.KV("namespace", ns);
  if (!pod_uid.empty()) j.KV("uid", pod_uid);
  if (!annotations.empty()) {
    j.Key("annotations");
    j.w().StartObject();
    for (const auto& [k, v] : annotations) j.KV(k, v);
    j.w().EndObject();
  }
  j.w().EndObject();
  j.Key("target");
  j.w().StartObject();
  j.KV("apiVersion", "v1");
  j.KV("kind", "Node");
  j.KV("name", node);
  j.w().EndObject();
  j.w().EndObject();
  return CreateSubresource(Pods(), ns, pod, "binding", j.Take()).status();
}

absl::Status Client::Evict(std::string_view ns, std::string_view pod,
                           const DeleteOptions& options) {
  JsonWriter j;
  j.w().StartObject();
  j.KV("apiVersion", "policy/v1");
  j.KV("kind", "Eviction");
  j.Key("metadata");
  j.w().StartObject();
  j.KV("name", pod);
  j.KV("namespace", ns);
  j.w().EndObject();
  j.Key("deleteOptions");
  WriteDeleteOptions(j, options);
  j.w().EndObject();
  return CreateSubresource(Pods(), ns, pod, "eviction", j.Take(), /*max_retries=*/0).status();
}

absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, int max_attempts,
                             Clock* clock) {
  std::chrono::milliseconds delay(10);
  absl::Status status;
  for (int attempt = 0; attempt < std::max(max_attempts, 1); ++attempt) {
    if (attempt > 0) {
      clock->SleepFor(delay);
      delay *= 2;
    }
    status = fn();
    if (!IsConflict(status)) return status;
  }
  return status;
}

}  // namespace basalt::client
