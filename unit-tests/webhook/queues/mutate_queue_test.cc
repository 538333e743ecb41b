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

struct MutationCase {
  std::string name;
  std::string input;
  std::string patch;
  std::string expected;
};

TEST_CASE("QueueMutator: weight, reclaimable and hierarchy defaults on CREATE",
          "[webhook][queues]") {
  QueueMutator mutator;
  std::vector<MutationCase> cases = {
      {"the ai-training example gets reclaimable", AiTrainingQueue(),
       R"([{"op":"add","path":"/spec/reclaimable","value":true}])",
       AiTrainingQueue().Set("/spec/reclaimable", "true")},
      {"weight 0 becomes 1",
       AiTrainingQueue().Set("/spec/weight", "0").Set("/spec/reclaimable", "false"),
       R"([{"op":"add","path":"/spec/weight","value":1}])",
       AiTrainingQueue().Set("/spec/weight", "1").Set("/spec/reclaimable", "false")},
      {"weight unset becomes 1, reclaimable unset becomes true",
       AiTrainingQueue().Remove("/spec/weight"),
       R"([{"op":"add","path":"/spec/weight","value":1},{"op":"add","path":"/spec/reclaimable","value":true}])",
       AiTrainingQueue().Set("/spec/weight", "1").Set("/spec/reclaimable", "true")},
      {"no spec at all", JsonBuilder(R"({"metadata":{"name":"q"}})"),
       R"([{"op":"add","path":"/spec","value":{"weight":1,"reclaimable":true}}])",
       JsonBuilder(R"({"metadata":{"name":"q"},"spec":{"weight":1,"reclaimable":true}})")},
      {"nothing to default", AiTrainingQueue().Set("/spec/reclaimable", "false"), "",
       AiTrainingQueue().Set("/spec/reclaimable", "false")},
      {"hierarchy annotations get rooted",
       AiTrainingQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"a/b","volcano.sh/hierarchy-weights":"2/3"})"),
       R"([{"op":"add","path":"/metadata/annotations/volcano.sh~1hierarchy","value":"root/a/b"},)"
       R"({"op":"add","path":"/metadata/annotations/volcano.sh~1hierarchy-weights","value":"1/2/3"}])",
       AiTrainingQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"root/a/b","volcano.sh/hierarchy-weights":"1/2/3"})")},
      {"rooted hierarchy is kept",
       AiTrainingQueue()
           .Set("/spec/reclaimable", "true")
           .Set("/metadata/annotations",
                R"({"volcano.sh/hierarchy":"root/a","volcano.sh/hierarchy-weights":"1/2"})"),
       "",
       AiTrainingQueue()
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
