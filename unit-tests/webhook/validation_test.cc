#include "webhook/validation.h"

#include <catch2/catch.hpp>
#include <limits>

#include "fmt/format.h"

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

TEST_CASE("Label values: empty or up to 63 qualified-name characters", "[webhook]") {
  CHECK(LabelValueErrors("").empty());
  CHECK(LabelValueErrors("My_value.1").empty());
  CHECK(LabelValueErrors(std::string(63, 'a')).empty());
  CHECK(LabelValueErrors(std::string(64, 'a')) ==
        std::vector<std::string>{"must be no more than 63 characters"});
  CHECK(LabelValueErrors("-a").size() == 1);
  CHECK(LabelValueErrors("a b").size() == 1);
}

TEST_CASE("ValidateLabelsAndAnnotations: Kubernetes' rules for object metadata", "[webhook]") {
  auto check = [](std::string_view metadata, int64_t limit) {
    auto doc = json::Parse(metadata);
    REQUIRE(doc.ok());
    ErrorList errors;
    ValidateLabelsAndAnnotations(&*doc, FieldPath("metadata"), limit, "", errors);
    return errors.Message();
  };
  CHECK(check(R"({"labels":{"app":"x","example.com/tier":""},"annotations":{"A/b":"c"}})", 100)
            .empty());
  // Keys plus values: 1 + 9 = 10 bytes.
  CHECK(check(R"({"annotations":{"k":"123456789"}})", 10).empty());
  CHECK(check(R"({"annotations":{"k":"1234567890"}})", 10) ==
        "metadata.annotations: Too long: must have at most 10 bytes");
  CHECK(check(R"({"labels":{"a":"b c"}})", 10) ==
        "metadata.labels: Invalid value: \"b c\": a valid label must be an empty string or "
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character");
  CHECK(check(R"({"annotations":{"":"v"}})", 10) ==
        "metadata.annotations: Invalid value: \"\": name part must be non-empty");
  // Long values are shortened in the message.
  const std::string long_key(100, 'k');
  CHECK(check(fmt::format(R"({{"labels":{{"{}":"v"}}}})", long_key), 10) ==
        "metadata.labels: Invalid value: \"" + std::string(80, 'k') +
            "\"...: name part must be no more than 63 characters");
  CHECK(check("null", 10).empty());
  CHECK(check(R"({"labels":null,"annotations":[]})", 10).empty());
}

TEST_CASE("Saturating arithmetic clamps to the int64 range", "[webhook]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CHECK(SaturatingAdd(2147483647, 2147483647) == 4294967294);
  CHECK(SaturatingAdd(kMax, kMax) == kMax);
  CHECK(SaturatingAdd(kMax, 1) == kMax);
  CHECK(SaturatingAdd(kMin, -1) == kMin);
  CHECK(SaturatingAdd(kMax, kMin) == -1);
  CHECK(SaturatingMul(4611686018427387905, 4) == kMax);
  CHECK(SaturatingMul(-4611686018427387905, 4) == kMin);
  CHECK(SaturatingMul(kMin, -1) == kMax);
  CHECK(SaturatingMul(6, 7) == 42);
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
