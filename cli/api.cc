#include "cli/api.h"

#include <utility>

#include "common/client/errors.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::cli {

absl::Status ServerError(int http_status, std::string_view body) {
  std::string reason;
  std::string message;
  absl::StatusOr<json::Document> doc = json::Parse(body);
  if (doc.ok() && doc->IsObject() && json::GetString(*doc, "kind") == "Status") {
    reason = std::string(json::GetString(*doc, "reason"));
    message = std::string(json::GetString(*doc, "message"));
  } else {
    message = std::string(body.substr(0, 512));
    while (!message.empty() &&
           (message.back() == '\n' || message.back() == '\r' || message.back() == ' ')) {
      message.pop_back();
    }
  }
  if (message.empty()) message = fmt::format("the server answered HTTP {}", http_status);
  std::string text = reason.empty() || reason == "Unknown"
                         ? fmt::format("Error from server: {}", message)
                         : fmt::format("Error from server ({}): {}", reason, message);
  return absl::Status(client::CodeForHttpStatus(http_status, reason), text);
}

absl::StatusOr<json::Document> Api::Call(client::Request request) {
  request.headers.emplace_back("Accept", "application/json");
  absl::StatusOr<client::Response> r = client_->Raw(request);
  if (!r.ok()) {
    return absl::Status(r.status().code(),
                        fmt::format("cannot reach the API server: {}", MessageOf(r.status())));
  }
  if (r->status_code < 200 || r->status_code >= 300) {
    return ServerError(r->status_code, r->body);
  }
  if (r->body.empty()) return json::Document();
  absl::StatusOr<json::Document> doc = json::Parse(r->body);
  if (!doc.ok()) {
    return absl::InternalError(fmt::format("{} {}: the answer is not JSON: {}", request.verb,
                                           request.path, MessageOf(doc.status())));
  }
  return doc;
}

absl::StatusOr<json::Document> Api::Get(const client::ResourceRef& ref, std::string_view ns,
                                        std::string_view name) {
  client::Request req;
  req.path = client::ResourcePath(ref, ns, name);
  return Call(std::move(req));
}

absl::StatusOr<std::vector<json::Document>> Api::List(const client::ResourceRef& ref,
                                                      std::string_view ns,
                                                      const client::ListOptions& options) {
  client::Request req;
  req.path = client::ResourcePath(ref, ns) + client::ListQuery(options, /*watch=*/false);
  absl::StatusOr<json::Document> list = Call(std::move(req));
  if (!list.ok()) return list.status();
  std::vector<json::Document> items;
  const json::Value* arr = json::Find(*list, "items");
  if (arr == nullptr || !arr->IsArray()) return items;
  for (const json::Value& item : arr->GetArray()) {
    if (!item.IsObject()) continue;
    json::Document d;
    d.CopyFrom(item, d.GetAllocator());
    items.push_back(std::move(d));
  }
  return items;
}

absl::StatusOr<json::Document> Api::Create(const client::ResourceRef& ref, std::string_view ns,
                                           std::string_view body) {
  client::Request req;
  req.verb = "POST";
  req.path = client::ResourcePath(ref, ns);
  req.headers.emplace_back("Content-Type", "application/json");
  req.body = std::string(body);
  return Call(std::move(req));
}

absl::StatusOr<json::Document> Api::MergePatch(const client::ResourceRef& ref, std::string_view ns,
                                               std::string_view name, std::string_view patch) {
  client::Request req;
  req.verb = "PATCH";
  req.path = client::ResourcePath(ref, ns, name);
  req.headers.emplace_back("Content-Type", "application/merge-patch+json");
  req.body = std::string(patch);
  return Call(std::move(req));
}

absl::Status Api::Delete(const client::ResourceRef& ref, std::string_view ns,
                         std::string_view name) {
  client::Request req;
  req.verb = "DELETE";
  req.path = client::ResourcePath(ref, ns, name);
  return Call(std::move(req)).status();
}

}  // namespace basalt::cli
