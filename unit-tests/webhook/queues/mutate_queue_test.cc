#include "webhook/queues/mutate_queue.h"

#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"

namespace basalt::webhook {
namespace {

using testing::AiTrainingQueue;
using testing::ApplyPatch;
using testing::Canonical;
using testing::JsonBuilder;
using testing::Run;

// The example queue with a parent already, so the other defaults are seen alone.
JsonBuilder ParentedQueue() { return AiTrainingQueue().Set("/spec/parent", R"("root")"); }

struct MutationCase {
  std::string name;
  std::string input;
  std::string patch;
  std::string expected;
};

TEST_CASE("QueueMutator: weight, reclaimable, parent and hierarchy defaults on CREATE",
          "[webhook][queues]") {
  QueueMutator mutator;
  std::vector<MutationCase> cases = {
      {"the ai-training example gets reclaimable", ParentedQueue(),
       R"([{"op":"add","path":"/spec/reclaimable","value":true}])",
       ParentedQueue().Set("/spec/reclaimable", "true")},
      {"weight 0 becomes 1",
       ParentedQueue().Set("/spec/weight", "0").Set("/spec/reclaimable", "false"),
       R"([{"op":"add","path":"/spec/weight","value":1}])",
       ParentedQueue().Set("/spec/weight", "1").Set("/spec/reclaimable", "false")},
      {"weight unset becomes 1, reclaimable unset becomes true",
       ParentedQueue().Remove("/spec/weight"),
       R"([{"op":"add","path":"/spec/weight","value":1},{"op":"add","path":"/spec/reclaimable","value":true}])",
       ParentedQueue().Set("/spec/weight", "1").Set("/spec/reclaimable", "true")},
      {"no spec at all", JsonBuilder(R"({"metadata":{"name":"q"}})"),
       R"([{"op":"add","path":"/spec","value":{"weight":1,"reclaimable":true,"parent":"root"}}])",
       JsonBuilder(
           R"({"metadata":{"name":"q"},"spec":{"weight":1,"reclaimable":true,"parent":"root"}})")},
      {"a queue without parent gets parent root",
       AiTrainingQueue().Set("/spec/reclaimable", "true"),
       R"([{"op":"add","path":"/spec/parent","value":"root"}])",
       AiTrainingQueue().Set("/spec/reclaimable", "true").Set("/spec/parent", R"("root")")},
      {"root itself gets no parent", JsonBuilder(R"({"metadata":{"name":"root"}})"),
       R"([{"op":"add","path":"/spec","value":{"weight":1,"reclaimable":true}}])",
       JsonBuilder(R"({"metadata":{"name":"root"},"spec":{"weight":1,"reclaimable":true}})")},
      {"an explicit parent is kept",
       AiTrainingQueue().Set("/spec/reclaimable", "true").Set("/spec/parent", R"("org-a")"), "",
       AiTrainingQueue().Set("/spec/reclaimable", "true").Set("/spec/parent", R"("org-a")")},
      {"nothing to default", ParentedQueue().Set("/spec/reclaimable", "false"), "",
       ParentedQueue().Set("/spec/reclaimable", "false")},
      {"hierarchy annotations get rooted",
       ParentedQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"a/b","volcano.sh/hierarchy-weights":"2/3"})"),
       R"([{"op":"add","path":"/metadata/annotations/volcano.sh~1hierarchy","value":"root/a/b"},)"
       R"({"op":"add","path":"/metadata/annotations/volcano.sh~1hierarchy-weights","value":"1/2/3"}])",
       ParentedQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"root/a/b","volcano.sh/hierarchy-weights":"1/2/3"})")},
      {"rooted hierarchy is kept",
       ParentedQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"root/a","volcano.sh/hierarchy-weights":"1/2"})"),
       "",
       ParentedQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"root/a","volcano.sh/hierarchy-weights":"1/2"})")},
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

TEST_CASE("QueueMutator: UPDATE is not mutated", "[webhook][queues]") {
  QueueMutator mutator;
  AdmissionResponse r = Run(mutator, Operation::kUpdate, AiTrainingQueue().Set("/spec/weight", "0"),
                            AiTrainingQueue());
  CHECK(r.allowed);
  CHECK(r.patch.empty());
}

}  // namespace
}  // namespace basalt::webhook
