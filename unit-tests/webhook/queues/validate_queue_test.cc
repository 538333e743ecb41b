#include "webhook/queues/validate_queue.h"

#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"

namespace basalt::webhook {
namespace {

using testing::AiTrainingQueue;
using testing::JsonBuilder;
using testing::Run;

struct Case {
  std::string name;
  Operation op;
  std::string queue;
  std::string old_queue;
  std::string message;  // "" = allowed
  int code = 422;
};

void Fill(FakeLister& lister) {
  lister.AddQueue("root", "Open");
  lister.AddQueue("default", "Open");
  lister.AddQueue(QueueInfo{"research", "Open", "", {{"cpu", "100"}, {"memory", "1Ti"}}, {}, {}});
  lister.AddQueue(QueueInfo{"nlp", "Open", "research", {{"cpu", "50"}}, {}, {}});
  lister.AddQueue(QueueInfo{"l3", "Open", "nlp", {}, {}, {}});
  lister.AddQueue(QueueInfo{"l4", "Open", "l3", {}, {}, {}});
  lister.AddQueue(QueueInfo{"vision", "Open", "research", {}, {}, {}});
  // org-a: guarantee 8 GPUs, deserved 32; team-1 holds 4 and 16 of them.
  lister.AddQueue(QueueInfo{"org-a",
                            "Open",
                            "root",
                            {{"nvidia.com/gpu", "40"}},
                            {{"nvidia.com/gpu", "32"}},
                            {{"nvidia.com/gpu", "8"}}});
  lister.AddQueue(QueueInfo{"team-1",
                            "Open",
                            "org-a",
                            {{"nvidia.com/gpu", "32"}},
                            {{"nvidia.com/gpu", "16"}},
                            {{"nvidia.com/gpu", "4"}}});
  lister.AddPodGroup("team-a", "pg1", "busy");
  lister.AddPodGroup("team-b", "pg2", "busy");
  lister.AddJob("team-a", "j1", "busy");
  lister.AddPodGroup("team-a", "pg3", "one-pg");
}

void RunCases(const std::vector<Case>& cases) {
  FakeLister lister;
  Fill(lister);
  QueueValidator validator(lister, AdmissionOptions{});
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(validator, c.op, c.queue, c.old_queue);
      if (c.message.empty()) {
        CHECK(r.allowed);
        CHECK(r.message == "");
      } else {
        CHECK_FALSE(r.allowed);
        CHECK(r.message == c.message);
        CHECK(r.code == c.code);
      }
    }
  }
}

JsonBuilder Queue() { return AiTrainingQueue().Set("/spec/reclaimable", "true"); }

TEST_CASE("QueueValidator: CREATE and UPDATE rules on resources, weight and state",
          "[webhook][queues]") {
  RunCases({
      {"the ai-training example", Operation::kCreate, Queue(), "", ""},
      {"guarantee <= deserved <= capability", Operation::kCreate,
       Queue()
           .Set("/spec/deserved", R"({"cpu":"100","memory":"200Gi"})")
           .Set("/spec/guarantee", R"({"resource":{"cpu":"50"}})"),
       "", ""},
      {"negative capability", Operation::kCreate, Queue().SetString("/spec/capability/cpu", "-1"),
       "", "spec.capability[cpu]: must be greater than or equal to 0"},
      {"invalid deserved quantity", Operation::kCreate,
       Queue().Set("/spec/deserved", R"({"cpu":"x"})"), "",
       "spec.deserved[cpu]: invalid quantity \"x\": expected digits after the optional sign (want "
       "a "
       "number with an optional suffix, e.g. 500m, 1.5, 64Gi)"},
      {"negative guarantee", Operation::kCreate,
       Queue().Set("/spec/guarantee", R"({"resource":{"memory":"-1Gi"}})"), "",
       "spec.guarantee.resource[memory]: must be greater than or equal to 0"},
      {"deserved above capability", Operation::kCreate,
       Queue().Set("/spec/deserved", R"({"cpu":"300"})"), "",
       "spec.deserved[cpu]: deserved[cpu]=300 must be <= capability[cpu]=200"},
      {"guarantee above deserved", Operation::kCreate,
       Queue()
           .Set("/spec/deserved", R"({"cpu":"10"})")
           .Set("/spec/guarantee", R"({"resource":{"cpu":"20"}})"),
       "", "spec.deserved[cpu]: deserved[cpu]=10 must be >= guarantee[cpu]=20"},
      {"guarantee not covered by deserved", Operation::kCreate,
       Queue()
           .Set("/spec/deserved", R"({"cpu":"10"})")
           .Set("/spec/guarantee", R"({"resource":{"memory":"1Gi"}})"),
       "",
       "spec.deserved[memory]: deserved[memory] must be >= guarantee[memory]=1Gi (deserved[memory] "
       "is not set)"},
      {"guarantee above capability", Operation::kCreate,
       Queue().Set("/spec/guarantee", R"({"resource":{"nvidia.com/gpu":"16"}})"), "",
       "spec.guarantee.resource[nvidia.com/gpu]: guarantee[nvidia.com/gpu]=16 must be <= "
       "capability[nvidia.com/gpu]=8"},
      {"weight 0", Operation::kUpdate, Queue().Set("/spec/weight", "0"), Queue(),
       "spec.weight: queue weight must be a positive integer"},
      {"weight too large", Operation::kCreate, Queue().Set("/spec/weight", "70000"), "",
       "spec.weight: queue weight must be <= 65535"},
      {"state Closed on create", Operation::kCreate, Queue().SetString("/status/state", "Closed"),
       "", ""},
      {"state Closing on create", Operation::kCreate, Queue().SetString("/status/state", "Closing"),
       "", "status.state: queue state must be in [Open Closed], got \"Closing\""},
      {"editing a Closing queue keeps its state (Volcano refuses, #3517)", Operation::kUpdate,
       Queue().SetString("/status/state", "Closing").Set("/spec/weight", "3"),
       Queue().SetString("/status/state", "Closing"), ""},
      {"moving to an invalid state", Operation::kUpdate,
       Queue().SetString("/status/state", "Paused"), Queue().SetString("/status/state", "Open"),
       "status.state: queue state must be in [Open Closed], got \"Paused\""},
      {"hierarchy annotations of different lengths", Operation::kCreate,
       Queue().Set("/metadata/annotations",
                   R"({"volcano.sh/hierarchy":"root/a/b","volcano.sh/hierarchy-weights":"1/2"})"),
       "",
       "metadata.annotations[volcano.sh/hierarchy-weights]: volcano.sh/hierarchy \"root/a/b\" and "
       "volcano.sh/hierarchy-weights \"1/2\" must have the same number of segments"},
      {"hierarchy weight not positive", Operation::kCreate,
       Queue().Set("/metadata/annotations",
                   R"({"volcano.sh/hierarchy":"root/a","volcano.sh/hierarchy-weights":"1/-2"})"),
       "",
       "metadata.annotations[volcano.sh/hierarchy-weights]: weight \"-2\" in "
       "volcano.sh/hierarchy-weights must be a positive number"},
      {"several problems are all reported", Operation::kCreate,
       Queue().Set("/spec/weight", "0").SetString("/spec/capability/cpu", "-2"), "",
       "spec.capability[cpu]: must be greater than or equal to 0; spec.weight: queue weight must "
       "be "
       "a positive integer"},
  });
}

TEST_CASE("QueueValidator: hierarchy rules on parent", "[webhook][queues]") {
  RunCases({
      {"a child of an existing parent within its capability", Operation::kCreate,
       Queue().SetString("/spec/parent", "research").Set("/spec/capability", R"({"cpu":"80"})"), "",
       ""},
      {"parent root", Operation::kCreate, Queue().SetString("/spec/parent", "root"), "", ""},
      {"parent missing", Operation::kCreate, Queue().SetString("/spec/parent", "nope"), "",
       "spec.parent: unable to find parent queue: queues.scheduling.volcano.sh \"nope\" not found",
       403},
      {"own parent", Operation::kCreate, Queue().SetString("/spec/parent", "ai-training"), "",
       "spec.parent: queue can not be its own parent"},
      {"capability above the nearest ancestor limiting the resource", Operation::kCreate,
       Queue()
           .SetString("/spec/parent", "l3")
           .Set("/spec/capability", R"({"cpu":"60","memory":"2Ti"})"),
       "",
       "spec.capability[cpu]: capability[cpu]=60 must be <= capability[cpu]=50 of ancestor queue "
       "`nlp`; spec.capability[memory]: capability[memory]=2Ti must be <= capability[memory]=1Ti "
       "of "
       "ancestor queue `research`"},
      {"too deep", Operation::kCreate,
       Queue().SetString("/spec/parent", "l4").Remove("/spec/capability"), "",
       "spec.parent: queue depth 6 exceeds the maximum of 5 (root is depth 1)"},
      {"unchanged parent is not re-checked on update", Operation::kUpdate,
       Queue().SetString("/spec/parent", "gone").Set("/spec/weight", "2"),
       Queue().SetString("/spec/parent", "gone"), ""},
  });
}

// A child queue of org-a with the given GPU guarantee, deserved and capability.
JsonBuilder Team(std::string_view name, std::string_view guarantee, std::string_view deserved,
                 std::string_view capability) {
  return JsonBuilder(R"({"metadata":{"name":"x"},"spec":{"weight":1,"parent":"org-a"}})")
      .SetString("/metadata/name", name)
      .Set("/spec/guarantee", R"({"resource":{}})")
      .SetString("/spec/guarantee/resource/nvidia.com~1gpu", guarantee)
      .Set("/spec/deserved", "{}")
      .SetString("/spec/deserved/nvidia.com~1gpu", deserved)
      .Set("/spec/capability", "{}")
      .SetString("/spec/capability/nvidia.com~1gpu", capability);
}

// org-a as the webhook sees it in an UPDATE, with the given GPU quotas.
JsonBuilder OrgA(std::string_view guarantee, std::string_view deserved,
                 std::string_view capability) {
  return Team("org-a", guarantee, deserved, capability).SetString("/spec/parent", "root");
}

TEST_CASE("QueueValidator: children's guarantee and deserved within the parent's",
          "[webhook][queues]") {
  RunCases({
      {"team-2 fits beside team-1", Operation::kCreate, Team("team-2", "4", "16", "32"), "", ""},
      {"team-2's guarantee over what org-a has left", Operation::kCreate,
       Team("team-2", "5", "16", "32"), "",
       "spec.guarantee.resource[nvidia.com/gpu]: the children of queue `org-a` may together "
       "have at most its guarantee[nvidia.com/gpu]=8; this queue's 5 plus its siblings' 4 is 9"},
      {"team-2's deserved over what org-a has left", Operation::kCreate,
       Team("team-2", "4", "17", "32"), "",
       "spec.deserved[nvidia.com/gpu]: the children of queue `org-a` may together have at most "
       "its deserved[nvidia.com/gpu]=32; this queue's 17 plus its siblings' 16 is 33"},
      {"team-2's capability over org-a's", Operation::kCreate, Team("team-2", "4", "16", "41"), "",
       "spec.capability[nvidia.com/gpu]: capability[nvidia.com/gpu]=41 must be <= "
       "capability[nvidia.com/gpu]=40 of ancestor queue `org-a`"},
      {"team-1 raising its own deserved counts itself once", Operation::kUpdate,
       Team("team-1", "4", "32", "32"), Team("team-1", "4", "16", "32"), ""},
      {"org-a lowering its guarantee below its children's", Operation::kUpdate,
       OrgA("3", "32", "40"), OrgA("8", "32", "40"),
       "spec.guarantee.resource[nvidia.com/gpu]: guarantee[nvidia.com/gpu]=3 must be >= the sum "
       "of its child queues' guarantee[nvidia.com/gpu]=4"},
      {"org-a lowering its capability below a child's", Operation::kUpdate, OrgA("8", "24", "31"),
       OrgA("8", "32", "40"),
       "spec.capability[nvidia.com/gpu]: capability[nvidia.com/gpu]=31 must be >= "
       "capability[nvidia.com/gpu]=32 of child queue `team-1`"},
      {"org-a moved under its own child is a cycle", Operation::kUpdate,
       OrgA("8", "32", "40").SetString("/spec/parent", "team-1"), OrgA("8", "32", "40"),
       "spec.parent: queue hierarchy through `org-a` forms a cycle"},
  });
}

TEST_CASE("QueueValidator: root queue resources are protected", "[webhook][queues]") {
  JsonBuilder root(R"({"metadata":{"name":"root"},"spec":{"weight":1,"reclaimable":false}})");
  RunCases({
      {"changing root's capability", Operation::kUpdate,
       JsonBuilder(root).Set("/spec/capability", R"({"cpu":"1"})"), root,
       "spec.capability: `root` queue capability can not be changed", 403},
      {"changing root's weight is fine", Operation::kUpdate,
       JsonBuilder(root).Set("/spec/weight", "2"), root, ""},
  });
}

TEST_CASE("QueueValidator: DELETE refuses default, root, parents and queues in use",
          "[webhook][queues]") {
  auto del = [](std::string_view name) {
    return std::string(R"({"metadata":{"name":")") + std::string(name) + "\"}}";
  };
  RunCases({
      {"an empty queue", Operation::kDelete, "", del("ai-training"), ""},
      {"default", Operation::kDelete, "", del("default"), "`default` queue can not be deleted",
       403},
      {"root", Operation::kDelete, "", del("root"), "`root` queue can not be deleted", 403},
      {"a parent", Operation::kDelete, "", del("research"),
       "queue research can not be deleted because it has 2 child queues: nlp, vision", 403},
      {"a queue with PodGroups and Jobs", Operation::kDelete, "", del("busy"),
       "queue `busy` can not be deleted because it still has 2 PodGroups and 1 Job; delete them or "
       "move them to another queue first",
       403},
      {"a queue with one PodGroup", Operation::kDelete, "", del("one-pg"),
       "queue `one-pg` can not be deleted because it still has 1 PodGroup and 0 Jobs; delete them "
       "or move them to another queue first",
       403},
  });
}

}  // namespace
}  // namespace basalt::webhook
