#include "webhook/router.h"

#include <exception>
#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook {

void Router::Register(std::string path, std::string kind,
                      std::unique_ptr<AdmissionHandler> handler) {
  routes_[std::move(path)] = Route{std::move(kind), std::move(handler)};
}

const AdmissionHandler* Router::Find(std::string_view path) const {
  auto it = routes_.find(path);
  return it == routes_.end() ? nullptr : it->second.handler.get();
}

std::vector<std::string> Router::Paths() const {
  std::vector<std::string> out;
  for (const auto& [path, route] : routes_) out.push_back(path);
  return out;
}

bool Router::ReadsClusterState(std::string_view path) const {
  const AdmissionHandler* handler = Find(path.substr(0, path.find('?')));
  return handler != nullptr && handler->ReadsClusterState();
}

HttpReply Router::Serve(std::string_view path, std::string_view body) const {
  path = path.substr(0, path.find('?'));
  auto route = routes_.find(path);
  if (route == routes_.end()) {
    return {404, "text/plain", fmt::format("no admission handler for path \"{}\"", path)};
  }
  auto request = DecodeAdmissionReview(body);
  if (!request.ok()) {
    int status = request.status().code() == absl::StatusCode::kResourceExhausted ? 413 : 400;
    return {status, "text/plain", std::string(MessageOf(request.status()))};
  }
  AdmissionResponse response;
  const std::string& kind = route->second.kind;
  if (!request->sub_resource.empty()) {
    // Status and scale writes are the controllers' business, not admission's.
    return {200, "application/json", EncodeAdmissionReview(request->uid, response)};
  }
  if (!kind.empty() && !request->kind.kind.empty() && request->kind.kind != kind) {
    response = AdmissionResponse::Deny(
        400, "BadRequest",
        fmt::format("{} admits {} objects, not {} (check the webhook configuration's rules)", path,
                    kind, request->kind.kind));
    return {200, "application/json", EncodeAdmissionReview(request->uid, response)};
  }
  try {
    response = route->second.handler->Handle(*request);
  } catch (const std::exception& e) {
    // Handlers do not throw by contract; a throw here is a bug, but one request must not take
    // the webhook down.
    response = AdmissionResponse::Deny(500, "InternalError",
                                       fmt::format("internal error in {}: {}", path, e.what()));
  }
  return {200, "application/json", EncodeAdmissionReview(request->uid, response)};
}

}  // namespace basalt::webhook
