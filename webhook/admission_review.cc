#include "webhook/admission_review.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace basalt::webhook {
namespace {

// Refuses input nested deeper than kMaxAdmissionReviewDepth, scanning brackets outside
// strings. RapidJSON's default parser recurses per level, so this runs before it.
absl::Status CheckDepth(std::string_view body) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        if (++depth > kMaxAdmissionReviewDepth) {
          return absl::InvalidArgumentError(fmt::format(
              "AdmissionReview is nested deeper than {} levels", kMaxAdmissionReviewDepth));
        }
        break;
      case '}':
      case ']':
        --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Operation> ParseOperation(std::string_view s) {
  if (s == "CREATE") return Operation::kCreate;
  if (s == "UPDATE") return Operation::kUpdate;
  if (s == "DELETE") return Operation::kDelete;
  if (s == "CONNECT") return Operation::kConnect;
  return absl::InvalidArgumentError(
      fmt::format("request.operation \"{}\" is not one of CREATE, UPDATE, DELETE, CONNECT", s));
}

const json::Value* ObjectOrNull(const json::Value* v) {
  return v != nullptr && v->IsObject() ? v : nullptr;
}

void FillIdentityFromObject(AdmissionRequest& req) {
  const json::Value* obj = req.object != nullptr ? req.object : req.old_object;
  if (obj == nullptr) return;
  req.kind.kind = std::string(json::GetString(*obj, "kind"));
  std::string_view api_version = json::GetString(*obj, "apiVersion");
  size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    req.kind.version = std::string(api_version);
  } else {
    req.kind.group = std::string(api_version.substr(0, slash));
    req.kind.version = std::string(api_version.substr(slash + 1));
  }
  if (const json::Value* md = json::Find(*obj, "metadata")) {
    req.name = std::string(json::GetString(*md, "name"));
    req.namespace_ = std::string(json::GetString(*md, "namespace"));
  }
}

}  // namespace

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "CREATE";
    case Operation::kUpdate:
      return "UPDATE";
    case Operation::kDelete:
      return "DELETE";
    case Operation::kConnect:
      return "CONNECT";
  }
  return "UNKNOWN";
}

absl::StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view body) {
  if (body.size() > kMaxAdmissionReviewBytes) {
    return absl::ResourceExhaustedError(
        fmt::format("AdmissionReview body of {} bytes exceeds the limit of {} bytes", body.size(),
                    kMaxAdmissionReviewBytes));
  }
  if (body.empty()) return absl::InvalidArgumentError("empty AdmissionReview body");
  BASALT_RETURN_IF_ERROR(CheckDepth(body));
  auto parsed = json::Parse(body);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("AdmissionReview is not valid JSON: {}", MessageOf(parsed.status())));
  }
  auto doc = std::make_shared<json::Document>(std::move(*parsed));
  if (!doc->IsObject()) return absl::InvalidArgumentError("AdmissionReview must be a JSON object");

  std::string_view api_version = json::GetString(*doc, "apiVersion");
  if (api_version != kAdmissionApiVersion) {
    return absl::InvalidArgumentError(
        fmt::format("unsupported AdmissionReview apiVersion \"{}\", expected \"{}\"", api_version,
                    kAdmissionApiVersion));
  }
  std::string_view kind = json::GetString(*doc, "kind");
  if (kind != "AdmissionReview") {
    return absl::InvalidArgumentError(
        fmt::format("unexpected kind \"{}\", expected \"AdmissionReview\"", kind));
  }
  const json::Value* request = json::Find(*doc, "request");
  if (request == nullptr || !request->IsObject()) {
    return absl::InvalidArgumentError("AdmissionReview has no request object");
  }
  std::string_view uid = json::GetString(*request, "uid");
  if (uid.empty()) return absl::InvalidArgumentError("AdmissionReview request has no uid");

  AdmissionRequest req;
  req.uid = std::string(uid);
  BASALT_ASSIGN_OR_RETURN(req.operation, ParseOperation(json::GetString(*request, "operation")));
  if (const json::Value* k = json::Find(*request, "kind")) {
    req.kind = {std::string(json::GetString(*k, "group")),
                std::string(json::GetString(*k, "version")),
                std::string(json::GetString(*k, "kind"))};
  }
  if (const json::Value* r = json::Find(*request, "resource")) {
    req.resource = {std::string(json::GetString(*r, "group")),
                    std::string(json::GetString(*r, "version")),
                    std::string(json::GetString(*r, "resource"))};
  }
  req.sub_resource = std::string(json::GetString(*request, "subResource"));
  req.name = std::string(json::GetString(*request, "name"));
  req.namespace_ = std::string(json::GetString(*request, "namespace"));
  req.dry_run = json::GetBool(*request, "dryRun");
  if (const json::Value* u = json::Find(*request, "userInfo")) {
    req.user_info.username = std::string(json::GetString(*u, "username"));
    req.user_info.uid = std::string(json::GetString(*u, "uid"));
    if (const json::Value* groups = json::Find(*u, "groups"); groups && groups->IsArray()) {
      for (const auto& g : groups->GetArray()) {
        if (g.IsString()) req.user_info.groups.emplace_back(json::AsView(g));
      }
    }
  }
  req.object = ObjectOrNull(json::Find(*request, "object"));
  req.old_object = ObjectOrNull(json::Find(*request, "oldObject"));
  if (req.operation == Operation::kCreate && req.object == nullptr) {
    return absl::InvalidArgumentError("AdmissionReview CREATE request has no object");
  }
  if (req.operation == Operation::kUpdate && (req.object == nullptr || req.old_object == nullptr)) {
    return absl::InvalidArgumentError("AdmissionReview UPDATE request needs object and oldObject");
  }
  req.document = std::move(doc);
  return req;
}

absl::StatusOr<AdmissionRequest> MakeAdmissionRequest(Operation op, std::string_view object_json,
                                                      std::string_view old_object_json) {
  auto doc = std::make_shared<json::Document>();
  doc->SetObject();
  auto& a = doc->GetAllocator();
  auto add = [&](std::string_view key, std::string_view text) -> absl::Status {
    if (text.empty()) return absl::OkStatus();
    BASALT_RETURN_IF_ERROR(CheckDepth(text));
    BASALT_ASSIGN_OR_RETURN(json::Document parsed, json::Parse(text));
    if (!parsed.IsObject()) {
      return absl::InvalidArgumentError(fmt::format("{} must be a JSON object", key));
    }
    json::Value copy(parsed, a);
    json::Set(*doc, key, std::move(copy), a);
    return absl::OkStatus();
  };
  BASALT_RETURN_IF_ERROR(add("object", object_json));
  BASALT_RETURN_IF_ERROR(add("oldObject", old_object_json));

  AdmissionRequest req;
  req.uid = "00000000-0000-0000-0000-000000000000";
  req.operation = op;
  req.object = json::Find(*doc, "object");
  req.old_object = json::Find(*doc, "oldObject");
  FillIdentityFromObject(req);
  req.document = std::move(doc);
  return req;
}

AdmissionResponse AdmissionResponse::Allow() { return AdmissionResponse{}; }

AdmissionResponse AdmissionResponse::AllowWithPatch(std::string patch) {
  AdmissionResponse r;
  r.patch = std::move(patch);
  return r;
}

AdmissionResponse AdmissionResponse::Deny(int32_t code, std::string_view reason,
                                          std::string_view message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = code;
  r.reason = std::string(reason);
  r.message = std::string(message);
  return r;
}

std::string EncodeAdmissionReview(std::string_view uid, const AdmissionResponse& response) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto str = [&w](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  str("apiVersion");
  str(kAdmissionApiVersion);
  str("kind");
  str("AdmissionReview");
  str("response");
  w.StartObject();
  str("uid");
  str(uid);
  str("allowed");
  w.Bool(response.allowed);
  if (!response.allowed) {
    str("status");
    w.StartObject();
    str("status");
    str("Failure");
    if (response.code != 0) {
      str("code");
      w.Int(response.code);
    }
    if (!response.reason.empty()) {
      str("reason");
      str(response.reason);
    }
    str("message");
    str(response.message);
    w.EndObject();
  }
  if (!response.warnings.empty()) {
    str("warnings");
    w.StartArray();
    for (const auto& warning : response.warnings) str(warning);
    w.EndArray();
  }
  if (response.allowed && !response.patch.empty()) {
    str("patchType");
    str("JSONPatch");
    str("patch");
    str(absl::Base64Escape(response.patch));
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace basalt::webhook
