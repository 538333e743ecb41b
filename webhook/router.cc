#include "webhook/router.h"

#include <exception>
#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook {

void Router::Register(std::string path, std::unique_ptr<AdmissionHandler> handler) {
  handlers_[std::move(path)] = std::move(handler);
}

const AdmissionHandler* Router::Find(std::string_view path) const {
  auto it = handlers_.find(path);
  return it == handlers_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Router::Paths() const {
  std::vector<std::string> out;
  for (const auto& [path, handler] : handlers_) out.push_back(path);
  return out;
}

HttpReply Router::Serve(std::string_view path, std::string_view body) const {
  const AdmissionHandler* handler = Find(path);
  if (handler == nullptr) {
    return {404, "text/plain", fmt::format("no admission handler for path \"{}\"", path)};
  }
  auto request = DecodeAdmissionReview(body);
  if (!request.ok()) {
    int status = request.status().code() == absl::StatusCode::kResourceExhausted ? 413 : 400;
    return {status, "text/plain", std::string(MessageOf(request.status()))};
  }
  AdmissionResponse response;
  try {
    response = handler->Handle(*request);
  } catch (const std::exception& e) {
    // Handlers do not throw by contract; a throw here is a bug, but one request must not take
    // the webhook down.
    response = AdmissionResponse::Deny(500, "InternalError",
                                       fmt::format("internal error in {}: {}", path, e.what()));
  }
  return {200, "application/json", EncodeAdmissionReview(request->uid, response)};
}

}  // namespace basalt::webhook
