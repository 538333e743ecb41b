#include "webhook/jobs/mutate_job.h"

#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"

namespace basalt::webhook {
namespace {

using testing::ApplyPatch;
using testing::BertJob;
using testing::Canonical;
using testing::JsonBuilder;
using testing::Run;

// A one-task job with nothing defaulted yet.
JsonBuilder BareJob() {
  return JsonBuilder(R"({"metadata":{"name":"j"},"spec":{"tasks":[{"replicas":2,"template":{
      "spec":{"containers":[{"name":"c","image":"i"}]}}}]}})");
}

struct MutationCase {
  std::string name;
  std::string input;
  std::string patch;     // exact JSON patch text
  std::string expected;  // the object after applying the patch
};

TEST_CASE("JobMutator: defaults applied on CREATE as minimal JSON patches", "[webhook][jobs]") {
  JobMutator mutator("volcano");
  std::vector<MutationCase> cases = {
      {"the bert example gets queue, maxRetry and task defaults", BertJob(),
       R"([{"op":"add","path":"/spec/queue","value":"default"},)"
       R"({"op":"add","path":"/spec/maxRetry","value":3},)"
       R"({"op":"add","path":"/spec/tasks/0/minAvailable","value":4},)"
       R"({"op":"add","path":"/spec/tasks/0/maxRetry","value":3}])",
       testing::MutatedBertJob()},
      {"empty task names become default<index>, job minAvailable the sum",
       BareJob().Set("/spec/tasks/1", R"({"replicas":3})"),
       R"([{"op":"add","path":"/spec/queue","value":"default"},)"
       R"({"op":"add","path":"/spec/schedulerName","value":"volcano"},)"
       R"({"op":"add","path":"/spec/maxRetry","value":3},)"
       R"({"op":"add","path":"/spec/tasks/0/name","value":"default0"},)"
       R"({"op":"add","path":"/spec/tasks/0/minAvailable","value":2},)"
       R"({"op":"add","path":"/spec/tasks/0/maxRetry","value":3},)"
       R"({"op":"add","path":"/spec/tasks/1/name","value":"default1"},)"
       R"({"op":"add","path":"/spec/tasks/1/minAvailable","value":3},)"
       R"({"op":"add","path":"/spec/tasks/1/maxRetry","value":3},)"
       R"({"op":"add","path":"/spec/minAvailable","value":5}])",
       BareJob()
           .Set("/spec/tasks/1", R"({"replicas":3})")
           .SetString("/spec/queue", "default")
           .SetString("/spec/schedulerName", "volcano")
           .Set("/spec/maxRetry", "3")
           .SetString("/spec/tasks/0/name", "default0")
           .Set("/spec/tasks/0/minAvailable", "2")
           .Set("/spec/tasks/0/maxRetry", "3")
           .SetString("/spec/tasks/1/name", "default1")
           .Set("/spec/tasks/1/minAvailable", "3")
           .Set("/spec/tasks/1/maxRetry", "3")
           .Set("/spec/minAvailable", "5")},
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

// A fully defaulted one-task job, to vary one field at a time.
JsonBuilder DefaultedJob() {
  return BareJob()
      .SetString("/spec/queue", "q")
      .SetString("/spec/schedulerName", "volcano")
      .Set("/spec/maxRetry", "5")
      .SetString("/spec/tasks/0/name", "w")
      .Set("/spec/tasks/0/minAvailable", "1")
      .Set("/spec/tasks/0/maxRetry", "1")
      .Set("/spec/minAvailable", "1");
}

TEST_CASE("JobMutator: each default on its own", "[webhook][jobs]") {
  JobMutator mutator("volcano");
  std::vector<MutationCase> cases = {
      {"nothing to default: no patch", DefaultedJob(), "", DefaultedJob()},
      {"explicit maxRetry 0 becomes 3 (Volcano cannot tell 0 from unset)",
       DefaultedJob().Set("/spec/maxRetry", "0"),
       R"([{"op":"add","path":"/spec/maxRetry","value":3}])",
       DefaultedJob().Set("/spec/maxRetry", "3")},
      {"task maxRetry 0 becomes 3", DefaultedJob().Set("/spec/tasks/0/maxRetry", "0"),
       R"([{"op":"add","path":"/spec/tasks/0/maxRetry","value":3}])",
       DefaultedJob().Set("/spec/tasks/0/maxRetry", "3")},
      {"job minAvailable 0 becomes the sum of task minAvailable (not replicas)",
       DefaultedJob().Set("/spec/minAvailable", "0"),
       R"([{"op":"add","path":"/spec/minAvailable","value":1}])", DefaultedJob()},
      {"task minAvailable unset becomes replicas",
       DefaultedJob().Remove("/spec/tasks/0/minAvailable"),
       R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":2}])",
       DefaultedJob().Set("/spec/tasks/0/minAvailable", "2")},
      {"task minAvailable 0 is kept (it is set)",
       DefaultedJob().Set("/spec/tasks/0/minAvailable", "0"), "",
       DefaultedJob().Set("/spec/tasks/0/minAvailable", "0")},
      {"task minAvailable unset with minPartitions becomes minPartitions x partitionSize",
       DefaultedJob()
           .Remove("/spec/tasks/0/minAvailable")
           .Set("/spec/tasks/0/replicas", "8")
           .Set("/spec/tasks/0/partitionPolicy",
                R"({"totalPartitions":4,"partitionSize":2,"minPartitions":3})"),
       R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":6}])",
       DefaultedJob()
           .Set("/spec/tasks/0/replicas", "8")
           .Set("/spec/tasks/0/partitionPolicy",
                R"({"totalPartitions":4,"partitionSize":2,"minPartitions":3})")
           .Set("/spec/tasks/0/minAvailable", "6")},
      {"hostNetwork without dnsPolicy gets ClusterFirstWithHostNet",
       DefaultedJob().Set("/spec/tasks/0/template/spec/hostNetwork", "true"),
       R"([{"op":"add","path":"/spec/tasks/0/template/spec/dnsPolicy","value":"ClusterFirstWithHostNet"}])",
       DefaultedJob()
           .Set("/spec/tasks/0/template/spec/hostNetwork", "true")
           .SetString("/spec/tasks/0/template/spec/dnsPolicy", "ClusterFirstWithHostNet")},
      {"hostNetwork with a dnsPolicy is kept",
       DefaultedJob()
           .Set("/spec/tasks/0/template/spec/hostNetwork", "true")
           .SetString("/spec/tasks/0/template/spec/dnsPolicy", "Default"),
       "",
       DefaultedJob()
           .Set("/spec/tasks/0/template/spec/hostNetwork", "true")
           .SetString("/spec/tasks/0/template/spec/dnsPolicy", "Default")},
      {"mpi implies svc and ssh", DefaultedJob().Set("/spec/plugins", R"({"mpi":["--master=w"]})"),
       R"([{"op":"add","path":"/spec/plugins/svc","value":[]},)"
       R"({"op":"add","path":"/spec/plugins/ssh","value":[]}])",
       DefaultedJob().Set("/spec/plugins", R"({"mpi":["--master=w"],"svc":[],"ssh":[]})")},
      {"pytorch implies svc only", DefaultedJob().Set("/spec/plugins", R"({"pytorch":[]})"),
       R"([{"op":"add","path":"/spec/plugins/svc","value":[]}])",
       DefaultedJob().Set("/spec/plugins", R"({"pytorch":[],"svc":[]})")},
      {"tensorflow with svc already set keeps its arguments",
       DefaultedJob().Set("/spec/plugins",
                          R"({"tensorflow":[],"svc":["--disable-network-policy"]})"),
       "",
       DefaultedJob().Set("/spec/plugins",
                          R"({"tensorflow":[],"svc":["--disable-network-policy"]})")},
      {"ray implies svc", DefaultedJob().Set("/spec/plugins", R"({"ray":[]})"),
       R"([{"op":"add","path":"/spec/plugins/svc","value":[]}])",
       DefaultedJob().Set("/spec/plugins", R"({"ray":[],"svc":[]})")},
      {"env alone implies nothing", DefaultedJob().Set("/spec/plugins", R"({"env":[]})"), "",
       DefaultedJob().Set("/spec/plugins", R"({"env":[]})")},
      {"a job without spec is left to validation", JsonBuilder(R"({"metadata":{"name":"j"}})"), "",
       JsonBuilder(R"({"metadata":{"name":"j"}})")},
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

TEST_CASE("JobMutator: an explicit maxRetry 0 is defaulted with a warning", "[webhook][jobs]") {
  JobMutator mutator("volcano");
  AdmissionResponse explicit_zero =
      Run(mutator, Operation::kCreate, DefaultedJob().Set("/spec/maxRetry", "0"));
  CHECK(explicit_zero.warnings ==
        std::vector<std::string>{"spec.maxRetry: 0 is replaced by the default 3; maxRetry counts "
                                 "runs of the job, so use 1 for a job that must not be restarted"});
  AdmissionResponse unset =
      Run(mutator, Operation::kCreate, DefaultedJob().Remove("/spec/maxRetry"));
  CHECK(unset.patch == R"([{"op":"add","path":"/spec/maxRetry","value":3}])");
  CHECK(unset.warnings.empty());
}

TEST_CASE("JobMutator: the scheduler name comes from the first --scheduler-name",
          "[webhook][jobs]") {
  JobMutator mutator("kube-batch");
  AdmissionResponse r =
      Run(mutator, Operation::kCreate, DefaultedJob().Remove("/spec/schedulerName"));
  CHECK(r.patch == R"([{"op":"add","path":"/spec/schedulerName","value":"kube-batch"}])");
}

// A review sent straight to the webhook is not bounded by the CRD's int32 schema.
TEST_CASE("JobMutator: huge task counts saturate the default job minAvailable, never wrap",
          "[webhook][jobs]") {
  JobMutator mutator("volcano");
  // Two tasks whose minAvailable default to 2147483647 replicas each: 64-bit sum.
  AdmissionResponse int32_max = Run(mutator, Operation::kCreate,
                                    DefaultedJob()
                                        .Remove("/spec/minAvailable")
                                        .Remove("/spec/tasks/0/minAvailable")
                                        .Set("/spec/tasks/0/replicas", "2147483647")
                                        .Set("/spec/tasks/1", R"({"name":"b","replicas":2147483647,
                                              "maxRetry":3,"template":{}})"));
  CHECK(int32_max.patch ==
        R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":2147483647},)"
        R"({"op":"add","path":"/spec/tasks/1/minAvailable","value":2147483647},)"
        R"({"op":"add","path":"/spec/minAvailable","value":4294967294}])");
  // Two tasks of the largest int64: the sum stays the largest int64 instead of wrapping to -2.
  AdmissionResponse int64_max = Run(
      mutator, Operation::kCreate,
      DefaultedJob()
          .Remove("/spec/minAvailable")
          .Set("/spec/tasks/0/minAvailable", "9223372036854775807")
          .Set("/spec/tasks/1", R"({"name":"b","minAvailable":9223372036854775807,"maxRetry":3})"));
  CHECK(int64_max.patch ==
        R"([{"op":"add","path":"/spec/minAvailable","value":9223372036854775807}])");
  // minPartitions x partitionSize beyond int64 saturates too.
  AdmissionResponse partitions = Run(
      mutator, Operation::kCreate,
      DefaultedJob()
          .Remove("/spec/tasks/0/minAvailable")
          .Set("/spec/tasks/0/partitionPolicy",
               R"({"totalPartitions":1,"partitionSize":4,"minPartitions":4611686018427387905})"));
  CHECK(partitions.patch ==
        R"([{"op":"add","path":"/spec/tasks/0/minAvailable","value":9223372036854775807}])");
}

TEST_CASE("JobMutator: a task that is not an object is skipped, the others keep their positions",
          "[webhook][jobs]") {
  JobMutator mutator("volcano");
  // Members of the wrong type read as unset (the validator refuses such Jobs).
  AdmissionResponse r = Run(mutator, Operation::kCreate,
                            DefaultedJob()
                                .Set("/spec/tasks/1", "7")
                                .Set("/spec/tasks/2", R"({"name":5,"replicas":2,"maxRetry":1,
                                      "template":{"spec":{"hostNetwork":true}}})"));
  CHECK(r.allowed);
  CHECK(r.patch == R"([{"op":"add","path":"/spec/tasks/2/name","value":"default2"},)"
                   R"({"op":"add","path":"/spec/tasks/2/template/spec/dnsPolicy",)"
                   R"("value":"ClusterFirstWithHostNet"},)"
                   R"({"op":"add","path":"/spec/tasks/2/minAvailable","value":2}])");
}

TEST_CASE("JobMutator: UPDATE and DELETE are allowed without a patch", "[webhook][jobs]") {
  JobMutator mutator("volcano");
  AdmissionResponse update = Run(mutator, Operation::kUpdate, BareJob(), BareJob());
  CHECK(update.allowed);
  CHECK(update.patch.empty());
  AdmissionResponse del = Run(mutator, Operation::kDelete, "", BareJob());
  CHECK(del.allowed);
  CHECK(del.patch.empty());
}

TEST_CASE("JobMutator: a task with partitionPolicy is admitted without a warning",
          "[webhook][jobs]") {
  JobMutator mutator("volcano");
  AdmissionResponse r =
      Run(mutator, Operation::kCreate,
          DefaultedJob()
              .Remove("/spec/tasks/0/minAvailable")
              .Set("/spec/tasks/0/partitionPolicy",
                   R"({"totalPartitions":2,"partitionSize":2,"minPartitions":1})"));
  CHECK(r.allowed);
  CHECK(r.warnings.empty());  // the scheduler places partitions (issue 13)
}

}  // namespace
}  // namespace basalt::webhook
