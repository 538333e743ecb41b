#pragma once
// AdmissionReview (admission.k8s.io/v1) decoding and encoding.
//
// DecodeAdmissionReview turns the body the API server POSTs to a webhook path into an
// AdmissionRequest; EncodeAdmissionReview turns a handler's AdmissionResponse into the body
// the API server expects back. Objects stay raw JSON so handlers can name exact field paths
// and never drop fields Basalt does not model.
//
// All types are values; an AdmissionRequest shares its parsed body read-only, so copies are
// cheap and may be read from several threads.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/util/json.h"

namespace basalt::webhook {

// Bodies larger than this are refused before parsing (Volcano caps at 3 MiB too). The HTTP
// layer should answer 413 for kResourceExhausted.
inline constexpr size_t kMaxAdmissionReviewBytes = 3 * 1024 * 1024;
// Objects nested deeper than this are refused before parsing, so recursive walks over the
// object (parsing, diffing, serialising) cannot exhaust the stack. Real objects stay < 40.
inline constexpr int kMaxAdmissionReviewDepth = 200;

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";

enum class Operation { kCreate, kUpdate, kDelete, kConnect };

// "CREATE", "UPDATE", "DELETE", "CONNECT".
std::string_view OperationName(Operation op);

struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;
};

struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
};

// The decoded `request` of an AdmissionReview.
struct AdmissionRequest {
  std::string uid;
  GroupVersionKind kind;
  GroupVersionResource resource;
  std::string sub_resource;
  Operation operation = Operation::kCreate;
  std::string name;
  std::string namespace_;
  UserInfo user_info;
  bool dry_run = false;

  // The parsed body; `object` and `old_object` point into it (nullptr when absent or null:
  // no object on DELETE, no old object on CREATE).
  std::shared_ptr<const json::Document> document;
  const json::Value* object = nullptr;
  const json::Value* old_object = nullptr;
};

// Decodes an AdmissionReview v1 body. Errors (all kInvalidArgument except oversize, which is
// kResourceExhausted) say what is wrong: not JSON, too deep, wrong apiVersion or kind,
// missing `request` or `request.uid`, unknown operation. Never crashes on hostile input.
absl::StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body);

// Builds a request directly from object JSON (empty text = absent). For tests, benchmarks
// and tools that have no AdmissionReview around the object. Kind, name and namespace are
// taken from the object (or the old object) when present.
absl::StatusOr<AdmissionRequest> MakeAdmissionRequest(Operation op, std::string_view object_json,
                                                      std::string_view old_object_json = {});

// A handler's verdict.
struct AdmissionResponse {
  bool allowed = true;
  // status.code / status.reason / status.message, sent only when denied.
  int32_t code = 0;
  std::string reason;
  std::string message;
  // Shown by kubectl as "Warning: ..." even when allowed.
  std::vector<std::string> warnings;
  // RFC 6902 JSON Patch (JSON text of the operation array); empty = no patch. Encoded
  // base64 with patchType JSONPatch.
  std::string patch;

  static AdmissionResponse Allow();
  static AdmissionResponse AllowWithPatch(std::string patch);
  static AdmissionResponse Deny(int32_t code, std::string_view reason, std::string_view message);
};

// The AdmissionReview v1 body answering the request with `uid`.
std::string EncodeAdmissionReview(std::string_view uid, const AdmissionResponse& response);

}  // namespace basalt::webhook
