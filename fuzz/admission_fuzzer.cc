// fuzz_admission: the webhook's admission router with every Basalt handler, in-process, on
// arbitrary AdmissionReview bodies (a direct POST to the webhook, bypassing the API server's
// own validation, is what an attacker inside the cluster network can send).
//
// Input: the first byte picks the endpoint (byte % number of endpoints), the rest is the body.
// Invariants checked:
//  - Serve answers 200, 400 or 413 (every path here is registered), never crashes;
//  - a 200 body is an AdmissionReview v1 whose response.uid echoes request.uid;
//  - a denial carries a code and a message; an allowed response may carry a JSONPatch, and that
//    patch applies cleanly to the object under review (the API server would reject the whole
//    request otherwise);
//  - the patched object then passes through the matching validating endpoint without a crash
//    (the API server calls mutating webhooks before validating ones).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "common/util/json.h"
#include "fmt/format.h"
#include "fuzz/fuzz_check.h"
#include "webhook/admission_review.h"
#include "webhook/admission_router.h"
#include "webhook/fake_lister.h"
#include "webhook/json_patch.h"

namespace json = basalt::json;
namespace wh = basalt::webhook;

namespace {

struct Endpoint {
  std::string_view path;
  std::string_view validate_path;  // where the mutated object goes next ("" = none)
};
constexpr Endpoint kEndpoints[] = {
    {"/jobs/mutate", "/jobs/validate"},
    {"/jobs/validate", ""},
    {"/queues/mutate", "/queues/validate"},
    {"/queues/validate", ""},
    {"/podgroups/mutate", "/podgroups/validate"},
    {"/podgroups/validate", ""},
    {"/pods/validate", ""},
};
constexpr size_t kEndpointCount = sizeof(kEndpoints) / sizeof(kEndpoints[0]);

// A small cluster: queues in every state, a hierarchy, priority classes, objects in queues.
wh::FakeLister* MakeLister() {
  auto* lister = new wh::FakeLister();
  lister->AddQueue("default", "Open");
  lister->AddQueue("root", "Open");
  lister->AddQueue("ai-training", "Open");
  lister->AddQueue("closed-q", "Closed");
  lister->AddQueue("closing-q", "Closing");
  lister->AddQueue("fresh-q", "");
  lister->AddQueue(
      wh::QueueInfo{"parent-q", "Open", "root", {{"cpu", "100"}, {"memory", "1Ti"}}, {}, {}});
  lister->AddQueue(wh::QueueInfo{"child-a", "Open", "parent-q", {{"cpu", "10"}}, {}, {}});
  lister->AddQueue(wh::QueueInfo{"child-b", "Open", "parent-q", {{"nvidia.com/gpu", "8"}}, {}, {}});
  lister->AddPodGroup("default", "pg-1", "ai-training");
  lister->AddJob("default", "job-1", "ai-training");
  lister->AddPriorityClass("high-priority");
  lister->AddPriorityClass("offline-batch");
  lister->SetNamespaceDefaultQueue("team-a", "ai-training");
  return lister;
}

const wh::Router& TheRouter() {
  static const wh::FakeLister* lister = MakeLister();
  static const std::unique_ptr<wh::Router> router = [] {
    wh::AdmissionDeps deps;
    deps.lister = lister;
    return wh::NewAdmissionRouter(deps);
  }();
  return *router;
}

// Checks one reply to `body`; returns the decoded patch ("" if none).
std::string CheckReply(const wh::HttpReply& reply, std::string_view path, std::string_view body) {
  FUZZ_CHECK(reply.status == 200 || reply.status == 400 || reply.status == 413,
             fmt::format("{} answered HTTP {}: {}", path, reply.status, reply.body));
  if (reply.status != 200) {
    absl::StatusOr<wh::AdmissionRequest> req = wh::DecodeAdmissionReview(body);
    FUZZ_CHECK(!req.ok(), fmt::format("{} answered {} to a decodable review: {}", path,
                                      reply.status, reply.body));
    return {};
  }
  absl::StatusOr<json::Document> doc = json::Parse(reply.body);
  FUZZ_CHECK(doc.ok(), fmt::format("{} answered invalid JSON: {}", path, reply.body));
  FUZZ_CHECK(
      json::GetString(*doc, "apiVersion") == wh::kAdmissionApiVersion &&
          json::GetString(*doc, "kind") == "AdmissionReview",
      fmt::format("{} answered something other than an AdmissionReview: {}", path, reply.body));
  const json::Value* response = json::Find(*doc, "response");
  FUZZ_CHECK(response != nullptr && response->IsObject(),
             fmt::format("{} answered without a response: {}", path, reply.body));
  absl::StatusOr<wh::AdmissionRequest> req = wh::DecodeAdmissionReview(body);
  FUZZ_CHECK(req.ok(), fmt::format("{} answered 200 to an undecodable review", path));
  FUZZ_CHECK(json::GetString(*response, "uid") == req->uid,
             fmt::format("{} answered another uid: {}", path, reply.body));
  const json::Value* allowed = json::Find(*response, "allowed");
  FUZZ_CHECK(allowed != nullptr && allowed->IsBool(),
             fmt::format("{} answered without allowed: {}", path, reply.body));
  if (!allowed->GetBool()) {
    const json::Value* status = json::Find(*response, "status");
    FUZZ_CHECK(status != nullptr && json::GetInt(*status, "code") >= 400 &&
                   !json::GetString(*status, "message").empty(),
               fmt::format("{} denied without a code or message: {}", path, reply.body));
    FUZZ_CHECK(json::Find(*response, "patch") == nullptr,
               fmt::format("{} denied with a patch: {}", path, reply.body));
    return {};
  }
  std::string_view patch64 = json::GetString(*response, "patch");
  if (patch64.empty()) return {};
  std::string patch;
  FUZZ_CHECK(absl::Base64Unescape(absl::string_view(patch64.data(), patch64.size()), &patch),
             fmt::format("{} answered a patch that is not base64: {}", path, reply.body));
  return patch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Endpoint& endpoint = kEndpoints[data[0] % kEndpointCount];
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const wh::Router& router = TheRouter();

  wh::HttpReply reply = router.Serve(endpoint.path, body);
  std::string patch = CheckReply(reply, endpoint.path, body);
  if (patch.empty()) return 0;

  // The patch must apply to the object it was computed for.
  absl::StatusOr<wh::AdmissionRequest> req = wh::DecodeAdmissionReview(body);
  FUZZ_CHECK(req.ok() && req->object != nullptr,
             fmt::format("{} patched a request without an object", endpoint.path));
  json::Document object;
  object.CopyFrom(*req->object, object.GetAllocator());
  absl::Status applied = wh::ApplyJsonPatch(object, patch);
  FUZZ_CHECK(applied.ok(), fmt::format("{} answered a patch that does not apply: {} ({})",
                                       endpoint.path, patch, applied.ToString()));
  if (endpoint.validate_path.empty()) return 0;

  // The mutated object goes on to the validating webhook, in the same request.
  json::Document review;
  review.CopyFrom(*req->document, review.GetAllocator());
  json::Value* request = json::FindMutable(review, "request");
  FUZZ_CHECK(request != nullptr && request->IsObject(), "decoded review without a request");
  json::Value patched;
  patched.CopyFrom(object, review.GetAllocator());
  json::Set(*request, "object", std::move(patched), review.GetAllocator());
  std::string next_body = json::Serialize(review);
  wh::HttpReply validated = router.Serve(endpoint.validate_path, next_body);
  CheckReply(validated, endpoint.validate_path, next_body);
  return 0;
}
