#include "webhook/admission_review.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/escaping.h"
#include "common/util/json.h"
#include "common/util/status.h"

namespace basalt::webhook {
namespace {

constexpr std::string_view kCreateReview = R"({
  "apiVersion": "admission.k8s.io/v1",
  "kind": "AdmissionReview",
  "request": {
    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
    "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
    "resource": {"group": "batch.volcano.sh", "version": "v1alpha1", "resource": "jobs"},
    "subResource": "",
    "name": "bert-pretrain",
    "namespace": "team-a",
    "operation": "CREATE",
    "userInfo": {"username": "alice", "uid": "u-1", "groups": ["devs", "system:authenticated"]},
    "object": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
               "metadata": {"name": "bert-pretrain"}, "spec": {"tasks": []}},
    "oldObject": null,
    "dryRun": true
  }
})";

std::string Review(std::string_view request_json) {
  return std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)") +
         std::string(request_json) + "}";
}

std::string Message(const absl::Status& s) { return std::string(MessageOf(s)); }

TEST_CASE("DecodeAdmissionReview: a CREATE review yields every request field", "[webhook]") {
  auto req = DecodeAdmissionReview(kCreateReview);
  REQUIRE(req.ok());
  CHECK(req->uid == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(req->kind.group == "batch.volcano.sh");
  CHECK(req->kind.version == "v1alpha1");
  CHECK(req->kind.kind == "Job");
  CHECK(req->resource.resource == "jobs");
  CHECK(req->sub_resource.empty());
  CHECK(req->operation == Operation::kCreate);
  CHECK(req->name == "bert-pretrain");
  CHECK(req->namespace_ == "team-a");
  CHECK(req->user_info.username == "alice");
  CHECK(req->user_info.uid == "u-1");
  CHECK(req->user_info.groups == std::vector<std::string>{"devs", "system:authenticated"});
  CHECK(req->dry_run);
  REQUIRE(req->object != nullptr);
  CHECK(json::GetString(*json::Find(*req->object, "metadata"), "name") == "bert-pretrain");
  CHECK(req->old_object == nullptr);
}

TEST_CASE("DecodeAdmissionReview: UPDATE carries both objects, DELETE may carry none",
          "[webhook]") {
  auto update = DecodeAdmissionReview(Review(
      R"({"uid":"u","operation":"UPDATE","object":{"spec":{"a":2}},"oldObject":{"spec":{"a":1}}})"));
  REQUIRE(update.ok());
  CHECK(update->operation == Operation::kUpdate);
  REQUIRE(update->old_object != nullptr);
  CHECK(json::GetInt(*json::Find(*update->old_object, "spec"), "a") == 1);

  auto del = DecodeAdmissionReview(
      Review(R"({"uid":"u","operation":"DELETE","name":"q1","object":null})"));
  REQUIRE(del.ok());
  CHECK(del->operation == Operation::kDelete);
  CHECK(del->object == nullptr);
  CHECK(del->name == "q1");
}

TEST_CASE("DecodeAdmissionReview: malformed bodies give errors that say what is wrong",
          "[webhook]") {
  struct Case {
    std::string name;
    std::string body;
    std::string message;
  };
  std::string truncated(kCreateReview.substr(0, kCreateReview.size() / 2));
  std::vector<Case> cases = {
      {"empty", "", "empty AdmissionReview body"},
      {"not JSON", "hello",
       "AdmissionReview is not valid JSON: invalid JSON at offset 0: Invalid value."},
      {"truncated", truncated, ""},
      {"an array", "[1,2]", "AdmissionReview must be a JSON object"},
      {"wrong apiVersion",
       R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}})",
       "unsupported AdmissionReview apiVersion \"admission.k8s.io/v1beta1\", expected "
       "\"admission.k8s.io/v1\""},
      {"wrong kind", R"({"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"u"}})",
       "unexpected kind \"Pod\", expected \"AdmissionReview\""},
      {"no request", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "AdmissionReview has no request object"},
      {"request not an object",
       R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":"x"})",
       "AdmissionReview has no request object"},
      {"no uid", Review(R"({"operation":"CREATE","object":{}})"),
       "AdmissionReview request has no uid"},
      {"uid not a string", Review(R"({"uid":42,"operation":"CREATE","object":{}})"),
       "AdmissionReview request has no uid"},
      {"unknown operation", Review(R"({"uid":"u","operation":"PATCH","object":{}})"),
       "request.operation \"PATCH\" is not one of CREATE, UPDATE, DELETE, CONNECT"},
      {"CREATE without object", Review(R"({"uid":"u","operation":"CREATE"})"),
       "AdmissionReview CREATE request has no object"},
      {"UPDATE without oldObject", Review(R"({"uid":"u","operation":"UPDATE","object":{}})"),
       "AdmissionReview UPDATE request needs object and oldObject"},
      {"deeply nested",
       Review(R"({"uid":"u","operation":"CREATE","object":)" + std::string(100000, '[') +
              std::string(100000, ']') + "}"),
       "AdmissionReview is nested deeper than 200 levels"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto req = DecodeAdmissionReview(c.body);
      REQUIRE_FALSE(req.ok());
      CHECK(req.status().code() == absl::StatusCode::kInvalidArgument);
      if (!c.message.empty()) CHECK(Message(req.status()) == c.message);
    }
  }
}

TEST_CASE(
    "DecodeAdmissionReview: every truncation and byte corruption of a valid body is "
    "handled without crashing",
    "[webhook]") {
  std::string body(kCreateReview);
  for (size_t n = 0; n < body.size(); ++n) {
    auto req = DecodeAdmissionReview(std::string_view(body).substr(0, n));
    // A prefix can only be complete JSON once the closing brace is in; all shorter ones fail.
    CHECK_FALSE(req.ok());
  }
  const char kNoise[] = {'\0', '"', '{', ']', '\\', '\xff', ':', ','};
  size_t decoded = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    for (char c : kNoise) {
      std::string corrupted = body;
      corrupted[i] = c;
      auto req = DecodeAdmissionReview(corrupted);
      if (req.ok()) ++decoded;  // e.g. a changed character inside a string value
    }
  }
  CHECK(decoded < body.size() * sizeof(kNoise));
}

TEST_CASE("DecodeAdmissionReview: bodies over 3 MiB are refused before parsing", "[webhook]") {
  std::string huge = Review(R"({"uid":"u","operation":"CREATE","object":{"data":")" +
                            std::string(kMaxAdmissionReviewBytes, 'x') + "\"}}");
  auto req = DecodeAdmissionReview(huge);
  REQUIRE_FALSE(req.ok());
  CHECK(req.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(Message(req.status()).find("exceeds the limit of 3145728 bytes") != std::string::npos);
}

TEST_CASE("DecodeAdmissionReview: brackets inside strings do not count as nesting", "[webhook]") {
  std::string body = Review(R"({"uid":"u","operation":"CREATE","object":{"s":")" +
                            std::string(1000, '[') + R"(\"{"}})");
  auto req = DecodeAdmissionReview(body);
  REQUIRE(req.ok());
}

TEST_CASE("EncodeAdmissionReview: allowed, denied, patched and warned responses", "[webhook]") {
  CHECK(
      EncodeAdmissionReview("u1", AdmissionResponse::Allow()) ==
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u1","allowed":true}})");

  CHECK(
      EncodeAdmissionReview("u2", AdmissionResponse::Deny(403, "Forbidden", "no \"way\"")) ==
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u2","allowed":false,"status":{"status":"Failure","code":403,"reason":"Forbidden","message":"no \"way\""}}})");

  std::string patch = R"([{"op":"add","path":"/spec/queue","value":"default"}])";
  AdmissionResponse patched = AdmissionResponse::AllowWithPatch(patch);
  patched.warnings.push_back("spec.x is deprecated");
  std::string body = EncodeAdmissionReview("u3", patched);
  auto doc = json::Parse(body);
  REQUIRE(doc.ok());
  const json::Value* response = json::Find(*doc, "response");
  REQUIRE(response != nullptr);
  CHECK(json::GetBool(*response, "allowed"));
  CHECK(json::GetString(*response, "patchType") == "JSONPatch");
  std::string decoded;
  REQUIRE(absl::Base64Unescape(std::string(json::GetString(*response, "patch")), &decoded));
  CHECK(decoded == patch);
  CHECK(json::Serialize(*json::Find(*response, "warnings")) == R"(["spec.x is deprecated"])");
}

TEST_CASE("MakeAdmissionRequest: takes kind, name and namespace from the object", "[webhook]") {
  auto req = MakeAdmissionRequest(
      Operation::kCreate,
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","namespace":"n"}})");
  REQUIRE(req.ok());
  CHECK(req->kind.group == "batch.volcano.sh");
  CHECK(req->kind.version == "v1alpha1");
  CHECK(req->kind.kind == "Job");
  CHECK(req->name == "j");
  CHECK(req->namespace_ == "n");
  CHECK_FALSE(MakeAdmissionRequest(Operation::kCreate, "[1]").ok());
}

}  // namespace
}  // namespace basalt::webhook
