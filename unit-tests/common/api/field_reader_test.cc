#include "common/api/field_reader.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catch2/catch.hpp"
#include "common/util/json.h"
#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::api::FieldReader;

basalt::json::Document Doc(std::string_view text) {
  auto doc = basalt::json::Parse(text);
  REQUIRE(doc.ok());
  return *std::move(doc);
}

TEST_CASE("FieldReader: paths of nested members and list elements read as in error messages",
          "[api][field_reader]") {
  auto doc = Doc(R"({"spec": {"tasks": [{"template": {"spec": {"n": 1}}}, 7,
                                        {"template": {"spec": {"n": "x"}}}]}})");
  FieldReader root(&doc, "");
  CHECK(root.path().empty());
  std::vector<FieldReader> tasks = root.Child("spec").Elements("tasks");
  REQUIRE(tasks.size() == 2);
  FieldReader inner = tasks[1].Child("template").Child("spec");
  CHECK(inner.path() == "spec.tasks[2].template.spec");
  CHECK(inner.index() == -1);
  CHECK(tasks[1].index() == 2);
  CHECK(inner.Int("n") == 0);
  // The element that is not an object was reported first.
  CHECK(MessageOf(root.status()) == "spec.tasks[1]: must be an object");
}

TEST_CASE("FieldReader: a type error deep in the document carries the whole path",
          "[api][field_reader]") {
  auto doc = Doc(R"({"spec": {"tasks": [{"name": "a"}, {"template": {"spec": {"n": "x"}}}]}})");
  FieldReader root(&doc, "");
  std::vector<FieldReader> tasks = root.Child("spec").Elements("tasks");
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0].String("name") == "a");
  CHECK(root.ok());
  CHECK(tasks[1].Child("template").Child("spec").Int("n", 5) == 5);
  CHECK(MessageOf(root.status()) == "spec.tasks[1].template.spec.n: must be an integer");
}

TEST_CASE("FieldReader: a root path prefixes every path, absent members included",
          "[api][field_reader]") {
  auto doc = Doc(R"({"plugins": {"ssh": []}})");
  FieldReader root(&doc, "spec.jobTemplate");
  FieldReader absent = root.Child("policy").Child("nested");
  CHECK(absent.value() == nullptr);
  CHECK(absent.path() == "spec.jobTemplate.policy.nested");
  absent.Fail("field", "Required value");
  CHECK(MessageOf(root.status()) == "spec.jobTemplate.policy.nested.field: Required value");
  // Only the first error is kept.
  root.Fail("other", "ignored");
  CHECK(MessageOf(root.status()) == "spec.jobTemplate.policy.nested.field: Required value");
}

TEST_CASE("FieldReader: a root that is not an object is reported as value or by its path",
          "[api][field_reader]") {
  auto doc = Doc(R"({"a": 1})");
  const basalt::json::Value* one = basalt::json::Find(doc, "a");
  FieldReader unnamed(one, "");
  CHECK(unnamed.value() == nullptr);
  CHECK(MessageOf(unnamed.status()) == "value: must be an object");
  FieldReader named(one, "status");
  CHECK(MessageOf(named.status()) == "status: must be an object");
  CHECK(named.String("x").empty());
}

TEST_CASE("FieldReader: members of the wrong type are reported under their own path",
          "[api][field_reader]") {
  auto doc = Doc(R"({"spec": {"labels": {"a": "b", "c": 3}, "obj": [], "list": {}}})");
  FieldReader root(&doc, "");
  FieldReader spec = root.Child("spec");
  CHECK(spec.StringMapAt("labels").size() == 1);
  CHECK(MessageOf(root.status()) == "spec.labels.c: must be a string");

  FieldReader again(&doc, "");
  CHECK(again.Child("spec").Child("obj").value() == nullptr);
  CHECK(MessageOf(again.status()) == "spec.obj: must be an object");

  FieldReader third(&doc, "");
  CHECK(third.Child("spec").Elements("list").empty());
  CHECK(MessageOf(third.status()) == "spec.list: must be an array");
}

TEST_CASE("FieldReader: Items keeps every position and reads non-objects as absent",
          "[api][field_reader]") {
  auto doc =
      Doc(R"({"spec": {"tasks": [{"name": "a"}, 3, null, {"name": "d", "replicas": "x"}]}})");
  FieldReader root(&doc, "");
  std::vector<FieldReader> tasks = root.Child("spec").Items("tasks");
  REQUIRE(tasks.size() == 4);
  CHECK(tasks[0].View("name") == "a");
  CHECK(tasks[1].value() == nullptr);
  CHECK(tasks[1].View("name").empty());
  CHECK(tasks[2].value() == nullptr);
  CHECK(tasks[2].index() == 2);
  CHECK(root.ok());  // non-object elements are no error for Items
  CHECK(tasks[3].index() == 3);
  CHECK(tasks[3].Int("replicas") == 0);
  CHECK(MessageOf(root.status()) == "spec.tasks[3].replicas: must be an integer");
  auto bad = Doc(R"({"tasks": 1})");
  FieldReader r(&bad, "job");
  CHECK(r.Items("tasks").empty());
  CHECK(MessageOf(r.status()) == "job.tasks: must be an array");
}

TEST_CASE("FieldReader: ForEachItem visits the readers Items returns, in order",
          "[api][field_reader]") {
  auto doc = Doc(R"({"spec": {"c": [{"name": "a"}, 3, {"name": "d", "n": "x"}], "s": "no"}})");
  FieldReader root(&doc, "pod");
  FieldReader spec = root.Child("spec");
  std::vector<std::string> seen;
  spec.ForEachItem("c", [&](FieldReader& c) {
    seen.push_back(c.path() + "=" + std::string(c.View("name")) +
                   (c.value() == nullptr ? "(absent)" : ""));
    c.Int("n");
  });
  CHECK(seen ==
        std::vector<std::string>{"pod.spec.c[0]=a", "pod.spec.c[1]=(absent)", "pod.spec.c[2]=d"});
  CHECK(MessageOf(root.status()) == "pod.spec.c[2].n: must be an integer");
  int calls = 0;
  FieldReader other(&doc, "");
  other.Child("spec").ForEachItem("missing", [&](FieldReader&) { ++calls; });
  CHECK(other.ok());
  other.Child("spec").ForEachItem("s", [&](FieldReader&) { ++calls; });
  CHECK(calls == 0);
  CHECK(MessageOf(other.status()) == "spec.s: must be an array");
}

TEST_CASE("FieldReader: ViewIfPresent tells absent from wrong type without an error",
          "[api][field_reader]") {
  auto doc = Doc(R"({"s": "x", "n": 3, "z": null, "e": ""})");
  FieldReader r(&doc, "spec");
  CHECK(r.ViewIfPresent("s", "?") == std::optional<std::string_view>("x"));
  CHECK(r.ViewIfPresent("n", "?") == std::optional<std::string_view>("?"));
  CHECK(r.ViewIfPresent("e", "?") == std::optional<std::string_view>(""));
  CHECK_FALSE(r.ViewIfPresent("z", "?").has_value());
  CHECK_FALSE(r.ViewIfPresent("missing", "?").has_value());
  CHECK(r.ok());
}

TEST_CASE("FieldReader: ForEachString visits every position, non-strings as nullopt",
          "[api][field_reader]") {
  auto doc = Doc(R"({"t": ["a", 1, null, "d"], "bad": {"a": 1}})");
  FieldReader r(&doc, "dep");
  std::vector<std::string> seen;
  r.ForEachString("t", [&](std::optional<std::string_view> s, size_t i) {
    seen.push_back(std::to_string(i) + "=" + (s ? std::string(*s) : std::string("-")));
  });
  CHECK(seen == std::vector<std::string>{"0=a", "1=-", "2=-", "3=d"});
  int calls = 0;
  r.ForEachString("missing", [&](std::optional<std::string_view>, size_t) { ++calls; });
  CHECK(r.ok());
  r.ForEachString("bad", [&](std::optional<std::string_view>, size_t) { ++calls; });
  CHECK(calls == 0);
  CHECK(MessageOf(r.status()) == "dep.bad: must be an array");
}

TEST_CASE("FieldReader: ForEachEntry visits members in document order, non-strings as nullopt",
          "[api][field_reader]") {
  auto doc = Doc(R"({"labels": {"b": "1", "a": 2, "c": ""}, "annotations": [1]})");
  FieldReader md(&doc, "metadata");
  std::vector<std::string> seen;
  md.ForEachEntry("labels", [&](std::string_view k, std::optional<std::string_view> v) {
    seen.push_back(std::string(k) + "=" + (v ? std::string(*v) : std::string("-")));
  });
  CHECK(seen == std::vector<std::string>{"b=1", "a=-", "c="});
  int calls = 0;
  md.ForEachEntry("missing", [&](std::string_view, std::optional<std::string_view>) { ++calls; });
  CHECK(md.ok());
  md.ForEachEntry("annotations",
                  [&](std::string_view, std::optional<std::string_view>) { ++calls; });
  CHECK(calls == 0);
  CHECK(MessageOf(md.status()) == "metadata.annotations: must be an object");
}

TEST_CASE("FieldReader: a new root starts clean after an earlier root on the thread is gone",
          "[api][field_reader]") {
  auto doc = Doc(R"({"a": {"b": "x"}})");
  {
    FieldReader first(&doc, "first-root-with-a-long-path");
    first.Child("a").Int("b");
    CHECK_FALSE(first.ok());
  }
  FieldReader second(&doc, "second");
  CHECK(second.ok());
  FieldReader b = second.Child("a").Child("c");
  CHECK(b.path() == "second.a.c");
  CHECK(second.Child("a").View("b") == "x");
  CHECK(second.ok());
}

TEST_CASE("FieldReader: paths stay right past the inline node table and after the root is gone",
          "[api][field_reader]") {
  std::string text = R"({"items": [)";
  for (int i = 0; i < 40; ++i) text += std::string(i > 0 ? "," : "") + R"({"v": {"n": 1}})";
  text += "]}";
  auto doc = Doc(text);
  std::vector<FieldReader> items = FieldReader(&doc, "list").Elements("items");  // root temporary
  REQUIRE(items.size() == 40);
  std::vector<FieldReader> children;
  for (FieldReader& item : items) children.push_back(item.Child("v"));
  CHECK(items[0].path() == "list.items[0]");
  CHECK(items[39].path() == "list.items[39]");
  CHECK(children[17].path() == "list.items[17].v");
  CHECK(children[39].Child("missing").path() == "list.items[39].v.missing");
  CHECK(children[39].Int("n") == 1);
  children[30].Fail("n", "must be odd");
  CHECK(MessageOf(items[0].status()) == "list.items[30].v.n: must be odd");
}

}  // namespace
