#include "common/util/json.h"

#include <catch2/catch.hpp>

namespace json = basalt::json;

TEST_CASE("json: accessors tolerate missing and mistyped members", "[json]") {
  auto doc = json::Parse(R"({"metadata":{"name":"p","generation":3},"spec":[1]})");
  REQUIRE(doc.ok());
  REQUIRE(json::FindPath(*doc, {"metadata", "name"}) != nullptr);
  REQUIRE(json::FindPath(*doc, {"spec", "nodeName"}) == nullptr);  // spec is an array
  const auto& md = *json::Find(*doc, "metadata");
  REQUIRE(json::GetString(md, "name") == "p");
  REQUIRE(json::GetString(md, "generation", "x") == "x");
  REQUIRE(json::GetInt(md, "generation") == 3);
  REQUIRE_FALSE(json::GetOptionalInt(md, "missing").has_value());
  auto s = json::RequireString(md, "uid");
  REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(std::string(s.status().message()) == "missing field \"uid\"");
  REQUIRE(json::RequireInt(md, "name").status().message() == "field \"name\" must be an integer");
}

TEST_CASE("json: parse errors name the offset", "[json]") {
  auto doc = json::Parse(R"({"a": )");
  REQUIRE_FALSE(doc.ok());
  REQUIRE(doc.status().message().find("offset") != std::string::npos);
}

TEST_CASE("json: Set, EnsureObject and Remove edit in place and round trip", "[json]") {
  auto doc = json::Parse(R"({"metadata":{"name":"p"},"x":1})");
  REQUIRE(doc.ok());
  auto& a = doc->GetAllocator();
  auto& labels = json::EnsureObject(json::EnsureObject(*doc, "metadata", a), "labels", a);
  json::Set(labels, "app", json::MakeString("web", a), a);
  json::Set(*doc, "x", json::Value(2), a);
  json::Remove(*doc, "nope");
  REQUIRE(json::Serialize(*doc) == R"({"metadata":{"name":"p","labels":{"app":"web"}},"x":2})");
}

TEST_CASE("json: Remove keeps the order of the remaining members", "[json]") {
  auto doc = json::Parse(R"({"a":1,"b":2,"c":3,"d":4})");
  REQUIRE(doc.ok());
  json::Remove(*doc, "b");
  REQUIRE(json::Serialize(*doc) == R"({"a":1,"c":3,"d":4})");
}
