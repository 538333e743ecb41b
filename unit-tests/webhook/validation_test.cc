#include "webhook/validation.h"

#include <catch2/catch.hpp>

namespace basalt::webhook {
namespace {

TEST_CASE("FieldPath: prints paths the way kubectl users read them", "[webhook]") {
  FieldPath spec("spec");
  CHECK(spec.Child("tasks").Index(1).Child("minAvailable").str() == "spec.tasks[1].minAvailable");
  CHECK(spec.Child("capability").Key("nvidia.com/gpu").str() == "spec.capability[nvidia.com/gpu]");
  CHECK(FieldPath().Child("metadata").str() == "metadata");
}

TEST_CASE("ErrorList: joins messages and picks the HTTP code by the worst kind", "[webhook]") {
  ErrorList none;
  CHECK(none.ToResponse().allowed);

  ErrorList invalid;
  invalid.Invalid(FieldPath("spec").Child("a"), "bad a");
  invalid.Invalid(FieldPath(), "bad object");
  AdmissionResponse r = invalid.ToResponse();
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 422);
  CHECK(r.reason == "Invalid");
  CHECK(r.message == "spec.a: bad a; bad object");

  invalid.Forbidden(FieldPath("spec").Child("queue"), "closed");
  CHECK(invalid.ToResponse().code == 403);
  CHECK(invalid.ToResponse().reason == "Forbidden");
  invalid.Internal(FieldPath(), "lookup failed");
  CHECK(invalid.ToResponse().code == 500);
}

TEST_CASE("Name rules: DNS-1123 labels, subdomains and qualified names", "[webhook]") {
  CHECK(IsDns1123Label("worker-0"));
  CHECK_FALSE(IsDns1123Label("Worker"));
  CHECK_FALSE(IsDns1123Label("-a"));
  CHECK_FALSE(IsDns1123Label("a.b"));
  CHECK_FALSE(IsDns1123Label(std::string(64, 'a')));
  CHECK(IsDns1123Label(std::string(63, 'a')));
  CHECK(IsDns1123Subdomain("pvc.team-a"));
  CHECK_FALSE(IsDns1123Subdomain("a..b"));
  CHECK_FALSE(IsDns1123Subdomain(std::string(254, 'a')));
  CHECK(IsQualifiedName("Job_1.a"));
  CHECK(IsQualifiedName("example.com/name"));
  CHECK_FALSE(IsQualifiedName("a b"));
  CHECK(QualifiedNameErrors(std::string(64, 'a')) ==
        std::vector<std::string>{"name part must be no more than 63 characters"});
  CHECK(BracketList({"a", "b"}) == "[a b]");
}

TEST_CASE("ReadResourceList: reports invalid and negative quantities by resource", "[webhook]") {
  auto doc = json::Parse(R"({"cpu":"2","memory":"-1Gi","gpu":"lots","pods":10})");
  REQUIRE(doc.ok());
  ErrorList errors;
  auto list = ReadResourceList(&*doc, FieldPath("spec").Child("capability"), errors);
  CHECK(list.size() == 2);
  CHECK(list.at("pods") == resource::MustParse("10"));
  REQUIRE(errors.size() == 2);
  CHECK(errors.errors()[0].ToString() ==
        "spec.capability[memory]: must be greater than or equal to 0");
  CHECK(errors.errors()[1].path == "spec.capability[gpu]");
  CHECK(errors.errors()[1].message.rfind("invalid quantity \"lots\"", 0) == 0);
}

}  // namespace
}  // namespace basalt::webhook
