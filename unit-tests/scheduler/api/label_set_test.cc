#include "scheduler/api/label_set.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace basalt::sched {
namespace {

TEST_CASE("LabelSet: reads like the sorted map it was made from", "[label_set]") {
  const std::map<std::string, std::string> m = {{"tier", "front"}, {"app", "web"}, {"e", ""}};
  const LabelSet s(m);
  REQUIRE(s.size() == 3);
  std::vector<std::pair<std::string, std::string>> seen;
  for (const auto& [k, v] : s) seen.emplace_back(k, v);
  CHECK(seen == std::vector<std::pair<std::string, std::string>>(m.begin(), m.end()));
  CHECK(s.at("app") == "web");
  CHECK(s.contains("e"));
  CHECK(s.find("e")->second.empty());
  CHECK(s.count("tier") == 1);
  CHECK(s.find("zone") == s.end());
  CHECK(s == LabelSet{{"app", "web"}, {"e", ""}, {"tier", "front"}});
  CHECK_FALSE(s == LabelSet{{"app", "web"}, {"e", ""}, {"tier", "back"}});
}

TEST_CASE("LabelSet: a repeated key keeps its last value, and Set adds or replaces",
          "[label_set]") {
  const std::vector<std::pair<std::string, std::string>> in = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  LabelSet s(in.begin(), in.end());
  CHECK(s == LabelSet{{"a", "3"}, {"b", "2"}});
  s.Set("c", "4");
  s.Set("a", s.at("b"));  // a value viewing the set's own block
  CHECK(s == LabelSet{{"a", "2"}, {"b", "2"}, {"c", "4"}});
}

TEST_CASE("LabelSet: copies and moves own their values, and keys are interned once",
          "[label_set]") {
  std::string value = "job-0123456789-abcdef";
  LabelSet original{{"volcano.sh/job-name", value}};
  value.assign(value.size(), 'x');  // the set holds its own copy
  const size_t keys = LabelSet::InternedKeyCount();
  LabelSet copy = original;
  LabelSet moved = std::move(original);
  CHECK(copy.at("volcano.sh/job-name") == "job-0123456789-abcdef");
  CHECK(moved.at("volcano.sh/job-name") == "job-0123456789-abcdef");
  CHECK(copy.find("volcano.sh/job-name")->first.data() ==
        moved.find("volcano.sh/job-name")->first.data());
  CHECK(LabelSet::InternedKeyCount() == keys);
  copy = moved;
  CHECK(copy == moved);
}

}  // namespace
}  // namespace basalt::sched
