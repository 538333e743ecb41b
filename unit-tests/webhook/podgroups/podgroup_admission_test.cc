#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"
#include "webhook/podgroups/mutate_podgroup.h"
#include "webhook/podgroups/validate_podgroup.h"

namespace basalt::webhook {
namespace {

using testing::ApplyPatch;
using testing::Canonical;
using testing::JsonBuilder;
using testing::Run;
using testing::SimplePodGroup;

TEST_CASE("PodGroupMutator: the namespace's queue annotation replaces the default queue",
          "[webhook][podgroups]") {
  FakeLister lister;
  lister.SetNamespaceDefaultQueue("team-a", "ai-training");
  PodGroupMutator mutator(lister);
  struct Case {
    std::string name;
    std::string input;
    std::string patch;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"queue unset", SimplePodGroup(),
       R"([{"op":"add","path":"/spec/queue","value":"ai-training"}])",
       SimplePodGroup().SetString("/spec/queue", "ai-training")},
      {"queue default", SimplePodGroup().SetString("/spec/queue", "default"),
       R"([{"op":"add","path":"/spec/queue","value":"ai-training"}])",
       SimplePodGroup().SetString("/spec/queue", "ai-training")},
      {"explicit queue is kept", SimplePodGroup().SetString("/spec/queue", "other"), "",
       SimplePodGroup().SetString("/spec/queue", "other")},
      {"namespace without annotation", SimplePodGroup().SetString("/metadata/namespace", "team-b"),
       "", SimplePodGroup().SetString("/metadata/namespace", "team-b")},
      {"no spec", JsonBuilder(R"({"metadata":{"name":"pg","namespace":"team-a"}})"),
       R"([{"op":"add","path":"/spec","value":{"queue":"ai-training"}}])",
       JsonBuilder(
           R"({"metadata":{"name":"pg","namespace":"team-a"},"spec":{"queue":"ai-training"}})")},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(mutator, Operation::kCreate, c.input);
      CHECK(r.allowed);
      CHECK(r.patch == c.patch);
      CHECK(ApplyPatch(c.input, r) == Canonical(c.expected));
    }
  }
}

TEST_CASE("PodGroupValidator: the queue must exist and be Open on CREATE", "[webhook][podgroups]") {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  lister.AddQueue("closed-q", "Closed");
  lister.AddQueue("fresh-q", "");
  lister.AddQueue("root", "Open");
  lister.AddQueue(QueueInfo{"org-a", "Open", "root", {}, {}, {}});
  lister.AddQueue(QueueInfo{"team-1", "Open", "org-a", {}, {}, {}});
  lister.AddQueue(QueueInfo{"team-2", "Open", "org-a", {}, {}, {}});
  PodGroupValidator validator(lister);
  struct Case {
    std::string name;
    std::string podgroup;
    std::string message;
    int code = 403;
  };
  std::vector<Case> cases = {
      {"default queue", SimplePodGroup(), ""},
      {"unsynced queue counts as Open", SimplePodGroup().SetString("/spec/queue", "fresh-q"), ""},
      {"missing queue", SimplePodGroup().SetString("/spec/queue", "nope"),
       "spec.queue: unable to find queue: queues.scheduling.volcano.sh \"nope\" not found"},
      {"closed queue", SimplePodGroup().SetString("/spec/queue", "closed-q"),
       "spec.queue: can only submit PodGroup to queue with state `Open`, queue `closed-q` status "
       "is "
       "`Closed`."},
      {"a leaf queue", SimplePodGroup().SetString("/spec/queue", "team-1"), ""},
      {"a parent queue", SimplePodGroup().SetString("/spec/queue", "org-a"),
       "spec.queue: can only submit PodGroup to leaf queue, queue `org-a` has 2 child queues "
       "(team-1, team-2)"},
      {"the root queue", SimplePodGroup().SetString("/spec/queue", "root"),
       "spec.queue: can not submit PodGroup to root queue"},
      {"networkTopology exclusivity",
       SimplePodGroup().Set("/spec/networkTopology",
                            R"({"highestTierAllowed":2,"highestTierName":"x"})"),
       "spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
       "networkTopology simultaneously",
       422},
      {"subGroupPolicy networkTopology exclusivity",
       SimplePodGroup().Set(
           "/spec/subGroupPolicy",
           R"([{"name":"a"},{"name":"b","networkTopology":{"highestTierAllowed":1,"highestTierName":"x"}}])"),
       "spec.subGroupPolicy[1].networkTopology: must not specify 'highestTierAllowed' and "
       "'highestTierName' in networkTopology simultaneously",
       422},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(validator, Operation::kCreate, c.podgroup);
      if (c.message.empty()) {
        CHECK(r.allowed);
      } else {
        CHECK_FALSE(r.allowed);
        CHECK(r.message == c.message);
        CHECK(r.code == c.code);
      }
    }
  }
  SECTION("UPDATE is not checked (the queue may close while the group runs)") {
    CHECK(Run(validator, Operation::kUpdate, SimplePodGroup().SetString("/spec/queue", "closed-q"),
              SimplePodGroup().SetString("/spec/queue", "closed-q"))
              .allowed);
  }
}

}  // namespace
}  // namespace basalt::webhook
