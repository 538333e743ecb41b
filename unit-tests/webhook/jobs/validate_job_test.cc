#include "webhook/jobs/validate_job.h"

#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"

namespace basalt::webhook {
namespace {

using testing::JsonBuilder;
using testing::MutatedBertJob;
using testing::Run;

constexpr std::string_view kValidLists =
    "valid events are [* PodFailed PodEvicted PodPending Unknown TaskCompleted TaskFailed "
    "JobUpdated], valid actions are [AbortJob RestartJob RestartTask RestartPod RestartPartition "
    "TerminateJob CompleteJob ResumeJob]";

constexpr std::string_view kImmutable =
    "spec: job updates may not change fields other than `minAvailable`, `tasks[*].replicas under "
    "spec` and `PriorityClassName`";

struct ValidationCase {
  std::string name;
  std::string job;
  std::string message;  // "" = allowed
  int code = 422;
};

void Lister(FakeLister& lister) {
  lister.AddQueue("default", "Open");
  lister.AddQueue("ai-training", "Open");
  lister.AddQueue("closed-q", "Closed");
  lister.AddQueue("fresh-q", "");  // created, not yet synced by the queue controller
  lister.AddQueue("root", "Open");
  QueueInfo child_a{"child-a", "Open", "parent-q", {}, {}, {}};
  QueueInfo child_b{"child-b", "Open", "parent-q", {}, {}, {}};
  lister.AddQueue("parent-q", "Open");
  lister.AddQueue(child_a);
  lister.AddQueue(child_b);
  lister.AddPriorityClass("offline-batch");
  lister.AddPriorityClass("online-critical");
}

void RunCases(const std::vector<ValidationCase>& cases) {
  FakeLister lister;
  Lister(lister);
  JobValidator validator(lister);
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(validator, Operation::kCreate, c.job);
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

// A second task, valid on its own.
constexpr std::string_view kPsTask =
    R"({"name":"ps","replicas":1,"minAvailable":1,"template":{"spec":{"containers":[{"name":"ps","image":"i"}]}}})";

TEST_CASE("JobValidator: the bert example and its variants that are valid", "[webhook][jobs]") {
  RunCases({
      {"the example as mutated", MutatedBertJob(), ""},
      {"the example in queue ai-training", MutatedBertJob().SetString("/spec/queue", "ai-training"),
       ""},
      {"a queue the controller has not synced yet counts as Open",
       MutatedBertJob().SetString("/spec/queue", "fresh-q"), ""},
      {"policies with an events list and an exit code",
       MutatedBertJob().Set("/spec/policies",
                            R"([{"events":["PodFailed","TaskFailed"],"action":"RestartJob"},
                                                   {"exitCode":137,"action":"AbortJob"}])"),
       ""},
      {"the job-policies snippet",
       MutatedBertJob().Set("/spec/policies", R"([{"event":"TaskFailed","action":"RestartJob"},
                                                   {"event":"PodEvicted","action":"RestartJob"}])"),
       ""},
      {"a task pinned to a node group (the task-node-group snippet)",
       MutatedBertJob().Set(
           "/spec/tasks/0/template/metadata",
           R"({"annotations":{"scheduling.volcano.sh/node-group":"gpu-rack-01"}})"),
       ""},
      {"a PriorityClass from the priorityclasses example",
       MutatedBertJob().SetString("/spec/priorityClassName", "online-critical"), ""},
      {"an existing PriorityClass",
       MutatedBertJob().SetString("/spec/priorityClassName", "offline-batch"), ""},
      {"mpi with its master named by flag",
       MutatedBertJob().Set("/spec/plugins", R"({"mpi":["--master=worker"],"svc":[],"ssh":[]})"),
       ""},
      {"mpi with a space-separated flag",
       MutatedBertJob().Set("/spec/plugins", R"({"mpi":["--master","worker"]})"), ""},
      {"integer CPU with a NUMA topology policy",
       MutatedBertJob().SetString("/spec/tasks/0/topologyPolicy", "single-numa-node"), ""},
      {"dependsOn forming a chain",
       MutatedBertJob()
           .Set("/spec/tasks/1", kPsTask)
           .Set("/spec/tasks/0/dependsOn", R"({"name":["ps"]})"),
       ""},
      {"a volume with a new claim",
       MutatedBertJob().Set("/spec/volumes", R"([{"mountPath":"/data","volumeClaim":{}}])"), ""},
      {"partitioned task",
       MutatedBertJob().Set("/spec/tasks/0/partitionPolicy",
                            R"({"totalPartitions":2,"partitionSize":2,"minPartitions":2})"),
       ""},
  });
}

TEST_CASE("JobValidator: CREATE rules on tasks and counts", "[webhook][jobs]") {
  RunCases({
      {"no tasks", MutatedBertJob().Set("/spec/tasks", "[]"),
       "spec.tasks: No task specified in job spec"},
      {"tasks absent", MutatedBertJob().Remove("/spec/tasks"),
       "spec.tasks: No task specified in job spec"},
      {"task minAvailable above replicas", MutatedBertJob().Set("/spec/tasks/0/minAvailable", "5"),
       "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: worker, "
       "job: bert-pretrain"},
      {"job minAvailable above total replicas", MutatedBertJob().Set("/spec/minAvailable", "5"),
       "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks"},
      {"negative replicas",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "-1")
           .Set("/spec/tasks/0/minAvailable", "-1")
           .Set("/spec/minAvailable", "0"),
       "spec.tasks[0].replicas: 'replicas' < 0 in task: worker, job: bert-pretrain; "
       "spec.tasks[0].minAvailable: 'minAvailable' < 0 in task: worker, job: bert-pretrain"},
      {"negative job minAvailable", MutatedBertJob().Set("/spec/minAvailable", "-1"),
       "spec.minAvailable: job 'minAvailable' must be >= 0."},
      {"negative maxRetry", MutatedBertJob().Set("/spec/maxRetry", "-1"),
       "spec.maxRetry: 'maxRetry' cannot be less than zero."},
      {"negative task maxRetry", MutatedBertJob().Set("/spec/tasks/0/maxRetry", "-2"),
       "spec.tasks[0].maxRetry: 'maxRetry' cannot be less than zero."},
      {"negative ttlSecondsAfterFinished",
       MutatedBertJob().Set("/spec/ttlSecondsAfterFinished", "-1"),
       "spec.ttlSecondsAfterFinished: 'ttlSecondsAfterFinished' cannot be less than zero."},
      {"minSuccess 0", MutatedBertJob().Set("/spec/minSuccess", "0"),
       "spec.minSuccess: 'minSuccess' must be >= 1"},
      {"duplicate task names",
       MutatedBertJob().Set("/spec/tasks/1", kPsTask).SetString("/spec/tasks/1/name", "worker"),
       "spec.tasks[1].name: duplicated task name worker"},
      {"duplicate task names: the duplicate's replicas still count toward minAvailable",
       MutatedBertJob()
           .Set("/spec/tasks/1", kPsTask)
           .SetString("/spec/tasks/1/name", "worker")
           .Set("/spec/minAvailable", "5"),
       "spec.tasks[1].name: duplicated task name worker"},
      {"empty task name", MutatedBertJob().SetString("/spec/tasks/0/name", ""),
       "spec.tasks[0].name: task name must not be empty"},
      {"task name not a DNS label", MutatedBertJob().SetString("/spec/tasks/0/name", "Worker"),
       "spec.tasks[0].name: task name \"Worker\" must be a DNS-1123 label (at most 63 lowercase "
       "alphanumeric characters or '-', starting and ending with an alphanumeric character)"},
      {"pod name too long", MutatedBertJob().SetString("/metadata/name", std::string(60, 'a')),
       "spec.tasks[0].name: create pod with name " + std::string(60, 'a') +
           "-worker-3 validate failed [name part must be no more than 63 characters]"},
      {"job name not a qualified name",
       MutatedBertJob().SetString("/metadata/name", "bert pretrain"),
       "spec.tasks[0].name: create pod with name bert pretrain-worker-3 validate failed [name part "
       "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character]; metadata.name: create job with name bert pretrain validate failed "
       "[name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end "
       "with an alphanumeric character]"},
      {"networkTopology with both highest-tier fields",
       MutatedBertJob().Set("/spec/networkTopology",
                            R"({"mode":"hard","highestTierAllowed":1,"highestTierName":"rack"})"),
       "spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
       "networkTopology simultaneously"},
      {"partition replicas mismatch",
       MutatedBertJob().Set("/spec/tasks/0/partitionPolicy",
                            R"({"totalPartitions":3,"partitionSize":2})"),
       "spec.tasks[0].replicas: 'replicas' (4) must equal 'totalPartitions' (3) x 'partitionSize' "
       "(2) in task: worker"},
      {"partition sizes not positive",
       MutatedBertJob().Set("/spec/tasks/0/partitionPolicy",
                            R"({"totalPartitions":0,"partitionSize":0})"),
       "spec.tasks[0].partitionPolicy.totalPartitions: 'totalPartitions' must be greater than 0 in "
       "task: worker; spec.tasks[0].partitionPolicy.partitionSize: 'partitionSize' must be greater "
       "than 0 in task: worker"},
      {"partition minAvailable mismatch",
       MutatedBertJob().Set("/spec/tasks/0/partitionPolicy",
                            R"({"totalPartitions":2,"partitionSize":2,"minPartitions":1})"),
       "spec.tasks[0].minAvailable: 'minAvailable' (4) must equal 'minPartitions' (1) x "
       "'partitionSize' (2) in task: worker"},
      {"several problems are all reported",
       MutatedBertJob().Set("/spec/tasks/0/minAvailable", "5").Set("/spec/minAvailable", "9"),
       "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: worker, "
       "job: bert-pretrain; spec.minAvailable: job 'minAvailable' should not be greater than total "
       "replicas in tasks"},
  });
}

TEST_CASE("JobValidator: CREATE rules on policies", "[webhook][jobs]") {
  RunCases({
      {"event and exitCode together",
       MutatedBertJob().Set("/spec/policies",
                            R"([{"event":"PodFailed","exitCode":1,"action":"RestartJob"}])"),
       "spec.policies[0]: must not specify event and exitCode simultaneously"},
      {"neither event nor exitCode",
       MutatedBertJob().Set("/spec/policies", R"([{"action":"RestartJob"}])"),
       "spec.policies[0]: either event and exitCode should be specified"},
      {"internal event OutOfSync",
       MutatedBertJob().Set("/spec/policies", R"([{"event":"OutOfSync","action":"RestartJob"}])"),
       "spec.policies[0].event: invalid policy event \"OutOfSync\", " + std::string(kValidLists)},
      {"PodRunning is internal too",
       MutatedBertJob().Set("/spec/policies",
                            R"([{"events":["PodFailed","PodRunning"],"action":"RestartJob"}])"),
       "spec.policies[0].events[1]: invalid policy event \"PodRunning\", " +
           std::string(kValidLists)},
      {"events that are not strings are skipped, positions kept",
       MutatedBertJob().Set("/spec/policies", R"([{"events":[7,"Boom"],"action":"RestartJob"}])"),
       "spec.policies[0].events[1]: invalid policy event \"Boom\", " + std::string(kValidLists)},
      {"an exit code that is not an integer",
       MutatedBertJob().Set("/spec/policies", R"([{"exitCode":"137","action":"RestartJob"}])"),
       "spec.policies[0].exitCode: exitCode must be an integer"},
      {"unknown action",
       MutatedBertJob().Set("/spec/policies", R"([{"event":"PodFailed","action":"Reboot"}])"),
       "spec.policies[0].action: invalid policy action \"Reboot\", " + std::string(kValidLists)},
      {"exitCode policy with an unknown action (Basalt checks it too)",
       MutatedBertJob().Set("/spec/policies", R"([{"exitCode":3,"action":"SyncJob"}])"),
       "spec.policies[0].action: invalid policy action \"SyncJob\", " + std::string(kValidLists)},
      {"same event in two policies",
       MutatedBertJob().Set("/spec/policies", R"([{"event":"PodEvicted","action":"RestartJob"},
                                                   {"event":"PodEvicted","action":"AbortJob"}])"),
       "spec.policies[1].event: duplicate event PodEvicted across different policy"},
      {"exitCode 0",
       MutatedBertJob().Set("/spec/policies", R"([{"exitCode":0,"action":"RestartJob"}])"),
       "spec.policies[0].exitCode: 0 is not a valid error code"},
      {"duplicate exitCode",
       MutatedBertJob().Set("/spec/policies", R"([{"exitCode":3,"action":"RestartJob"},
                                                   {"exitCode":3,"action":"AbortJob"}])"),
       "spec.policies[1].exitCode: duplicate exitCode 3"},
      {"* with another event",
       MutatedBertJob().Set("/spec/policies", R"([{"event":"*","action":"RestartJob"},
                                                   {"event":"PodFailed","action":"AbortJob"}])"),
       "spec.policies[1]: if there's * here, no other policy should be here"},
      {"task-level policies are checked with their own path",
       MutatedBertJob().Set("/spec/tasks/0/policies",
                            R"([{"event":"CommandIssued","action":"RestartJob"}])"),
       "spec.tasks[0].policies[0].event: invalid policy event \"CommandIssued\", " +
           std::string(kValidLists)},
      {"a task policy may repeat a job-level event",
       MutatedBertJob().Set("/spec/tasks/0/policies",
                            R"([{"event":"PodEvicted","action":"RestartTask"}])"),
       ""},
  });
}

TEST_CASE("JobValidator: CREATE rules on plugins, volumes, dependencies and templates",
          "[webhook][jobs]") {
  RunCases({
      {"unknown plugin", MutatedBertJob().Set("/spec/plugins", R"({"horovod":[]})"),
       "spec.plugins[horovod]: unable to find job plugin: horovod"},
      {"mpi master task missing",
       MutatedBertJob().Set("/spec/plugins", R"({"mpi":[],"svc":[],"ssh":[]})"),
       "spec.plugins[mpi]: The specified mpi master task was not found (no task named \"master\")"},
      {"volume without mountPath",
       MutatedBertJob().Set("/spec/volumes", R"([{"volumeClaimName":"data"}])"),
       "spec.volumes[0].mountPath: mountPath is required"},
      {"duplicate mountPath",
       MutatedBertJob().Set("/spec/volumes", R"([{"mountPath":"/d","volumeClaimName":"a"},
                                                  {"mountPath":"/d","volumeClaimName":"b"}])"),
       "spec.volumes[1].mountPath: duplicated mountPath: /d"},
      {"volume with neither claim",
       MutatedBertJob().Set("/spec/volumes", R"([{"mountPath":"/d"}])"),
       "spec.volumes[0]: either volumeClaim or volumeClaimName must be specified"},
      {"volume with both claims",
       MutatedBertJob().Set("/spec/volumes",
                            R"([{"mountPath":"/d","volumeClaimName":"a","volumeClaim":{}}])"),
       "spec.volumes[0]: conflict: set volumeClaimName to use an existing PVC, or volumeClaim to "
       "create a new one, not both"},
      {"invalid claim name",
       MutatedBertJob().Set("/spec/volumes", R"([{"mountPath":"/d","volumeClaimName":"Data_1"}])"),
       "spec.volumes[0].volumeClaimName: invalid volumeClaimName \"Data_1\": must be a DNS-1123 "
       "subdomain"},
      {"dependency cycle",
       MutatedBertJob()
           .Set("/spec/tasks/1", kPsTask)
           .Set("/spec/tasks/0/dependsOn", R"({"name":["ps"]})")
           .Set("/spec/tasks/1/dependsOn", R"({"name":["worker"]})"),
       "spec.tasks: job has dependencies between tasks, but doesn't form a directed acyclic "
       "graph(DAG)"},
      {"self dependency", MutatedBertJob().Set("/spec/tasks/0/dependsOn", R"({"name":["worker"]})"),
       "spec.tasks: job has dependencies between tasks, but doesn't form a directed acyclic "
       "graph(DAG)"},
      {"dependency on an unknown task",
       MutatedBertJob().Set("/spec/tasks/0/dependsOn", R"({"name":["chief"]})"),
       "spec.tasks[0].dependsOn.name[0]: task \"worker\" depends on unknown task \"chief\""},
      {"fractional CPU with a NUMA topology policy",
       MutatedBertJob()
           .SetString("/spec/tasks/0/topologyPolicy", "best-effort")
           .SetString("/spec/tasks/0/template/spec/containers/0/resources/requests/cpu", "7500m"),
       "spec.tasks[0].template.spec.containers[0].resources.requests[cpu]: the cpu request isn't "
       "an "
       "integer in spec.task[0] container[0]."},
      {"unknown topology policy",
       MutatedBertJob().SetString("/spec/tasks/0/topologyPolicy", "numa"),
       "spec.tasks[0].topologyPolicy: unsupported topologyPolicy \"numa\", supported values are "
       "[none best-effort restricted single-numa-node]"},
      {"template without containers",
       MutatedBertJob().Set("/spec/tasks/0/template/spec/containers", "[]"),
       "spec.tasks[0].template.spec.containers: Required value: the pod template needs at least "
       "one "
       "container"},
      {"container without image",
       MutatedBertJob().Remove("/spec/tasks/0/template/spec/containers/0/image"),
       "spec.tasks[0].template.spec.containers[0].image: Required value"},
      {"duplicate container names",
       MutatedBertJob().Set("/spec/tasks/0/template/spec/initContainers",
                            R"([{"name":"training","image":"i"}])"),
       "spec.tasks[0].template.spec.containers[0].name: Duplicate value: \"training\""},
      {"request above limit",
       MutatedBertJob().Set("/spec/tasks/0/template/spec/containers/0/resources/requests/cpu",
                            "16"),
       "spec.tasks[0].template.spec.containers[0].resources.requests[cpu]: must be less than or "
       "equal to cpu limit of 8"},
      {"invalid quantity",
       MutatedBertJob().SetString(
           "/spec/tasks/0/template/spec/containers/0/resources/limits/memory", "64GB"),
       "spec.tasks[0].template.spec.containers[0].resources.limits[memory]: invalid quantity "
       "\"64GB\": unknown suffix \"GB\" (want one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, "
       "Pi, "
       "Ei, or an exponent like e3)"},
      {"negative quantity",
       MutatedBertJob().SetString(
           "/spec/tasks/0/template/spec/containers/0/resources/requests/memory", "-1Gi"),
       "spec.tasks[0].template.spec.containers[0].resources.requests[memory]: must be greater than "
       "or equal to 0"},
      {"missing job PriorityClass",
       MutatedBertJob().SetString("/spec/priorityClassName", "platinum"),
       "spec.priorityClassName: PriorityClass \"platinum\" not found", 403},
      {"missing template PriorityClass",
       MutatedBertJob().SetString("/spec/tasks/0/template/spec/priorityClassName", "gold"),
       "spec.tasks[0].template.spec.priorityClassName: PriorityClass \"gold\" not found", 403},
  });
}

TEST_CASE("JobValidator: CREATE rules on the queue", "[webhook][jobs]") {
  RunCases({
      {"queue not found", MutatedBertJob().SetString("/spec/queue", "nope"),
       "spec.queue: unable to find job queue: queues.scheduling.volcano.sh \"nope\" not found",
       403},
      {"queue closed", MutatedBertJob().SetString("/spec/queue", "closed-q"),
       "spec.queue: can only submit job to queue with state `Open`, queue `closed-q` status is "
       "`Closed`",
       403},
      {"root queue", MutatedBertJob().SetString("/spec/queue", "root"),
       "spec.queue: can not submit job to root queue", 403},
      {"queue with children", MutatedBertJob().SetString("/spec/queue", "parent-q"),
       "spec.queue: can only submit job to leaf queue, queue `parent-q` has 2 child queues", 403},
      // A valid queue name, but too long for the label every pod of the Job carries.
      {"a queue name too long for a label",
       MutatedBertJob().SetString("/spec/queue", std::string(64, 'q')),
       "spec.queue: Invalid value: \"" + std::string(64, 'q') +
           "\": must be no more than 63 characters (the job controller puts it in the pods' "
           "volcano.sh/queue-name label)"},
      {"field errors and queue errors together answer 403",
       MutatedBertJob().SetString("/spec/queue", "nope").Set("/spec/minAvailable", "5"),
       "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; "
       "spec.queue: unable to find job queue: queues.scheduling.volcano.sh \"nope\" not found",
       403},
  });
}

TEST_CASE("JobValidator: a failing queue lookup denies with 500", "[webhook][jobs]") {
  FakeLister lister;
  lister.FailQueueLookups(absl::UnavailableError("cache not synced"));
  JobValidator validator(lister);
  AdmissionResponse r = Run(validator, Operation::kCreate, MutatedBertJob());
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 500);
  CHECK(r.message == "spec.queue: unable to look up job queue \"default\": cache not synced");
}

struct UpdateCase {
  std::string name;
  std::string old_job;
  std::string job;
  std::string message;  // "" = allowed
  int code = 422;
};

TEST_CASE("JobValidator: UPDATE allows scaling and refuses other spec changes", "[webhook][jobs]") {
  FakeLister lister;
  Lister(lister);
  lister.AddQueue("default", "Closed");  // not re-checked on update
  JobValidator validator(lister);
  JsonBuilder with_claim = MutatedBertJob().Set(
      "/spec/volumes", R"([{"mountPath":"/d","volumeClaim":{"resources":{}}}])");
  std::vector<UpdateCase> cases = {
      {"status-only change", MutatedBertJob(),
       MutatedBertJob().Set("/status", R"({"state":{"phase":"Running"}})"), ""},
      {"scale up replicas and minAvailable", MutatedBertJob(),
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "8")
           .Set("/spec/tasks/0/minAvailable", "6")
           .Set("/spec/minAvailable", "6"),
       ""},
      {"change priorityClassName to an existing class", MutatedBertJob(),
       MutatedBertJob().SetString("/spec/priorityClassName", "offline-batch"), ""},
      {"the controller writes a generated claim name", with_claim,
       JsonBuilder(with_claim).SetString("/spec/volumes/0/volumeClaimName", "bert-pretrain-pvc-x1"),
       ""},
      {"changing an existing claim name",
       JsonBuilder(with_claim).SetString("/spec/volumes/0/volumeClaimName", "a"),
       JsonBuilder(with_claim).SetString("/spec/volumes/0/volumeClaimName", "b"),
       std::string(kImmutable) + " (changed: spec.volumes[0].volumeClaimName)"},
      {"change priorityClassName to a missing class", MutatedBertJob(),
       MutatedBertJob().SetString("/spec/priorityClassName", "gold"),
       "spec.priorityClassName: PriorityClass \"gold\" not found", 403},
      {"minAvailable above total replicas", MutatedBertJob(),
       MutatedBertJob().Set("/spec/minAvailable", "5"),
       "spec.minAvailable: job 'minAvailable' must not be greater than total replicas"},
      {"negative job minAvailable", MutatedBertJob(),
       MutatedBertJob().Set("/spec/minAvailable", "-1"),
       "spec.minAvailable: job 'minAvailable' must be >= 0."},
      {"scale down below task minAvailable", MutatedBertJob(),
       MutatedBertJob().Set("/spec/tasks/0/replicas", "2").Set("/spec/minAvailable", "2"),
       "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: worker, "
       "job: "
       "bert-pretrain"},
      {"negative replicas", MutatedBertJob(),
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "-1")
           .Set("/spec/tasks/0/minAvailable", "0")
           .Set("/spec/minAvailable", "0"),
       "spec.tasks[0].replicas: 'replicas' < 0 in task: worker, job: bert-pretrain; "
       "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: worker, "
       "job: bert-pretrain"},
      {"adding a task", MutatedBertJob(), MutatedBertJob().Set("/spec/tasks/1", kPsTask),
       "spec.tasks: job updates may not add or remove tasks"},
      {"changing the image", MutatedBertJob(),
       MutatedBertJob().SetString("/spec/tasks/0/template/spec/containers/0/image", "train:v2"),
       std::string(kImmutable) + " (changed: spec.tasks[0].template.spec.containers[0].image)"},
      {"changing queue and maxRetry", MutatedBertJob(),
       MutatedBertJob().SetString("/spec/queue", "ai-training").Set("/spec/maxRetry", "5"),
       std::string(kImmutable) + " (changed: spec.queue, spec.maxRetry)"},
      {"removing the policies", MutatedBertJob(), MutatedBertJob().Remove("/spec/policies"),
       std::string(kImmutable) + " (changed: spec.policies)"},
      {"invalid partition change", MutatedBertJob(),
       MutatedBertJob().Set("/spec/tasks/0/partitionPolicy",
                            R"({"totalPartitions":3,"partitionSize":2})"),
       "spec.tasks[0].replicas: 'replicas' (4) must equal 'totalPartitions' (3) x 'partitionSize' "
       "(2) in task: worker; " +
           std::string(kImmutable) + " (changed: spec.tasks[0].partitionPolicy)"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(validator, Operation::kUpdate, c.job, c.old_job);
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

constexpr std::string_view kMaxPods = "must be no more than 10000 (the webhook's --max-job-pods)";

TEST_CASE("JobValidator: replicas beyond --max-job-pods are refused naming the field",
          "[webhook][jobs]") {
  RunCases({
      {"exactly the default maximum",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "10000")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/minAvailable", "1"),
       ""},
      // The Job from the issue: one task of a billion pods, gang of one.
      {"a billion replicas",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "1000000000")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/minAvailable", "1"),
       "spec.tasks[0].replicas: Invalid value: 1000000000: " + std::string(kMaxPods)},
      {"two tasks each within the limit, together above it",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "6000")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/tasks/1", kPsTask)
           .Set("/spec/tasks/1/replicas", "4001")
           .Set("/spec/minAvailable", "2"),
       "spec.tasks: Invalid value: 10001: the tasks' replicas must add up to no more than 10000 "
       "(the webhook's --max-job-pods)"},
      {"a number beyond int64",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "18446744073709551615")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/minAvailable", "1"),
       "spec.tasks[0].replicas: Invalid value: 18446744073709551615: " + std::string(kMaxPods)},
  });
}

// Reviews sent straight to the webhook (fuzzing found these) are not bounded by the CRD's
// int32 schema: sums and products of counts must not overflow into nonsense.
TEST_CASE("JobValidator: huge counts in a direct review give the limit, not an overflow",
          "[webhook][jobs]") {
  RunCases({
      {"two tasks of 2147483647 replicas",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "2147483647")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/tasks/1", kPsTask)
           .Set("/spec/tasks/1/replicas", "2147483647")
           .Set("/spec/minAvailable", "2"),
       "spec.tasks[0].replicas: Invalid value: 2147483647: " + std::string(kMaxPods) +
           "; spec.tasks[1].replicas: Invalid value: 2147483647: " + std::string(kMaxPods)},
      // Without saturation the sum wraps negative and minAvailable 2 is reported "greater
      // than total replicas".
      {"two tasks of the largest int64",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "9223372036854775807")
           .Set("/spec/tasks/0/minAvailable", "1")
           .Set("/spec/tasks/1", kPsTask)
           .Set("/spec/tasks/1/replicas", "9223372036854775807")
           .Set("/spec/minAvailable", "2"),
       "spec.tasks[0].replicas: Invalid value: 9223372036854775807: " + std::string(kMaxPods) +
           "; spec.tasks[1].replicas: Invalid value: 9223372036854775807: " +
           std::string(kMaxPods)},
      // (2^62 + 1) x 4 wraps to exactly the 4 replicas.
      {"partitions whose product wraps to the replicas",
       MutatedBertJob().Set(
           "/spec/tasks/0/partitionPolicy",
           R"({"totalPartitions":4611686018427387905,"partitionSize":4,"minPartitions":0})"),
       "spec.tasks[0].replicas: 'replicas' (4) must equal 'totalPartitions' (4611686018427387905) "
       "x 'partitionSize' (4) in task: worker"},
      {"the smallest int64 replicas",
       MutatedBertJob()
           .Set("/spec/tasks/0/replicas", "-9223372036854775808")
           .Set("/spec/tasks/0/minAvailable", "0")
           .Set("/spec/minAvailable", "0"),
       "spec.tasks[0].replicas: 'replicas' < 0 in task: worker, job: bert-pretrain; "
       "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: worker, "
       "job: bert-pretrain"},
  });
}

TEST_CASE("JobValidator: --max-job-pods is configurable and applies to UPDATE too",
          "[webhook][jobs]") {
  FakeLister lister;
  Lister(lister);
  JobValidator validator(lister, JobLimits{.max_pods = 6});
  AdmissionResponse create = Run(
      validator, Operation::kCreate,
      MutatedBertJob().Set("/spec/tasks/0/replicas", "7").Set("/spec/tasks/0/minAvailable", "4"));
  CHECK_FALSE(create.allowed);
  CHECK(create.code == 422);
  CHECK(create.message ==
        "spec.tasks[0].replicas: Invalid value: 7: must be no more than 6 (the webhook's "
        "--max-job-pods)");
  CHECK(Run(validator, Operation::kCreate, MutatedBertJob()).allowed);

  // Scaling a running Job up past the limit is refused as well.
  AdmissionResponse scale =
      Run(validator, Operation::kUpdate,
          MutatedBertJob().Set("/spec/tasks/0/replicas", "1000000000"), MutatedBertJob());
  CHECK_FALSE(scale.allowed);
  CHECK(scale.message ==
        "spec.tasks[0].replicas: Invalid value: 1000000000: must be no more than 6 (the "
        "webhook's --max-job-pods)");
  AdmissionResponse two_tasks =
      Run(validator, Operation::kUpdate,
          MutatedBertJob().Set("/spec/tasks/1", kPsTask).Set("/spec/tasks/1/replicas", "3"),
          MutatedBertJob().Set("/spec/tasks/1", kPsTask));
  CHECK_FALSE(two_tasks.allowed);
  CHECK(two_tasks.message ==
        "spec.tasks: Invalid value: 7: the tasks' replicas must add up to no more than 6 (the "
        "webhook's --max-job-pods)");
}

TEST_CASE("JobValidator: pod template labels and annotations the API server would refuse",
          "[webhook][jobs]") {
  const std::string limit_note =
      " (Kubernetes allows 262144 per pod, of which 4096 are kept for the annotations the job "
      "controller adds)";
  // Keys plus values of exactly the limit left to the template: allowed; one byte more: not.
  const std::string key = "example.com/blob";
  const std::string fits(262144 - 4096 - key.size(), 'x');
  RunCases({
      {"annotations that fit",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/annotations/example.com~1blob",
                                  fits),
       ""},
      {"one byte too many",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/annotations/example.com~1blob",
                                  fits + "x"),
       "spec.tasks[0].template.metadata.annotations: Too long: must have at most 258048 bytes" +
           limit_note},
      // The Job from the issue: admitted, then every pod create failed with 422.
      {"a 1 MB annotation",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/annotations/big",
                                  std::string(1 << 20, 'a')),
       "spec.tasks[0].template.metadata.annotations: Too long: must have at most 258048 bytes" +
           limit_note},
      {"an annotation key with a space",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/annotations/bad key", "v"),
       "spec.tasks[0].template.metadata.annotations: Invalid value: \"bad key\": name part must "
       "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character"},
      {"upper-case annotation keys are fine",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/annotations/Example.COM~1Key",
                                  "v"),
       ""},
      {"a label value of 64 characters",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/labels/app",
                                  std::string(64, 'a')),
       "spec.tasks[0].template.metadata.labels: Invalid value: \"" + std::string(64, 'a') +
           "\": must be no more than 63 characters"},
      {"a label value with a slash",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/labels/app", "a/b"),
       "spec.tasks[0].template.metadata.labels: Invalid value: \"a/b\": a valid label must be an "
       "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end with an alphanumeric character"},
      {"an empty label value and a prefixed key",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/labels/example.com~1tier", ""),
       ""},
      {"a label key with two slashes",
       MutatedBertJob().SetString("/spec/tasks/0/template/metadata/labels/a~1b~1c", "v"),
       "spec.tasks[0].template.metadata.labels: Invalid value: \"a/b/c\": a qualified name must "
       "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric character, with an optional DNS subdomain prefix and '/'"},
  });
}

TEST_CASE("JobValidator: DELETE is allowed", "[webhook][jobs]") {
  FakeLister lister;
  JobValidator validator(lister);
  CHECK(Run(validator, Operation::kDelete, "", MutatedBertJob()).allowed);
}

}  // namespace
}  // namespace basalt::webhook
