#include <catch2/catch.hpp>
#include <string>

#include "common/api/batch.h"
#include "common/api/scheduling.h"
#include "common/util/json.h"
#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::api::Command;
using basalt::api::Job;
using basalt::api::JobStatus;
using basalt::api::PodGroup;
using basalt::api::PodGroupSpec;
using basalt::api::PodGroupStatus;
using basalt::api::Queue;
using basalt::api::QueueStatus;
using basalt::resource::MustParse;
using basalt::resource::ResourceList;

std::string Normalize(std::string_view text) {
  auto doc = basalt::json::Parse(text);
  REQUIRE(doc.ok());
  return basalt::json::Serialize(*doc);
}

// /work/shared/examples/job-bert-pretrain.yaml as the API server returns it (plus the queue
// the example suggests, server-set metadata and a status).
constexpr std::string_view kBertJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1",
  "kind": "Job",
  "metadata": {"name": "bert-pretrain", "namespace": "default", "uid": "job-uid-1",
               "resourceVersion": "100", "generation": 1,
               "creationTimestamp": "2024-05-01T10:00:00Z"},
  "spec": {
    "minAvailable": 4,
    "schedulerName": "volcano",
    "queue": "ai-training",
    "maxRetry": 3,
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "plugins": {"env": [], "svc": ["--disable-network-policy=true"], "ssh": null},
    "tasks": [{
      "name": "worker",
      "replicas": 4,
      "template": {"spec": {
        "containers": [{"name": "training", "image": "your-registry/train:latest",
          "resources": {"requests": {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 1},
                        "limits": {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 1}}}],
        "restartPolicy": "OnFailure"}},
      "policies": [{"event": "TaskFailed", "action": "RestartJob"},
                   {"exitCode": 137, "action": "RestartTask", "timeout": "10m"}],
      "dependsOn": {"name": ["ps"], "iteration": "all"}
    }]
  },
  "status": {
    "state": {"phase": "Running", "lastTransitionTime": "2024-05-01T10:01:00Z"},
    "minAvailable": 4,
    "running": 4,
    "taskStatusCount": {"worker": {"phase": {"Running": 4}}},
    "conditions": [{"status": "Pending", "lastTransitionTime": "2024-05-01T10:00:00Z"},
                   {"status": "Running", "lastTransitionTime": "2024-05-01T10:01:00Z"}],
    "controlledResources": {"plugin-svc": "svc"},
    "futureField": {"x": 1}
  }
})";

// /work/shared/examples/queue-ai-training.yaml plus a status.
constexpr std::string_view kQueue = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1",
  "kind": "Queue",
  "metadata": {"name": "ai-training", "uid": "q-uid"},
  "spec": {"weight": 10,
           "capability": {"cpu": 200, "memory": "500Gi", "nvidia.com/gpu": 8},
           "guarantee": {"resource": {"cpu": "16"}},
           "deserved": {"cpu": "100", "nvidia.com/gpu": "4"},
           "reclaimable": false,
           "parent": "root"},
  "status": {"state": "Open", "running": 1,
             "allocated": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"},
             "reservation": {"nodes": ["n1"]}}
})";

constexpr std::string_view kPodGroup = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1",
  "kind": "PodGroup",
  "metadata": {"name": "bert-pretrain", "namespace": "default", "uid": "pg-uid",
               "labels": {"volcano.sh/job-name": "bert-pretrain"},
               "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                 "name": "bert-pretrain", "uid": "job-uid-1", "controller": true,
                 "blockOwnerDeletion": true}]},
  "spec": {"minMember": 4, "minTaskMember": {"worker": 4}, "queue": "ai-training",
           "priorityClassName": "offline-batch",
           "minResources": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4"}},
  "status": {"phase": "Pending",
             "conditions": [{"type": "Unschedulable", "status": "True",
               "transitionID": "t-1", "lastTransitionTime": "2024-05-01T10:00:05Z",
               "reason": "NotEnoughResources",
               "message": "4/4 tasks in gang unschedulable: 0/8 nodes are unavailable"}]}
})";

TEST_CASE("FindTaskReplicaCounts: reads one task's counts without decoding the Job",
          "[api][batch]") {
  auto doc = basalt::json::Parse(R"({"spec":{"tasks":[
      {"name":"master","replicas":1},
      {"name":"worker","replicas":4,"maxRetry":5,"template":"not decoded"}]}})");
  REQUIRE(doc.ok());
  using basalt::api::FindTaskReplicaCounts;
  using basalt::api::TaskReplicaCounts;
  CHECK(FindTaskReplicaCounts(*doc, "worker") == TaskReplicaCounts{4, 5});
  CHECK(FindTaskReplicaCounts(*doc, "master") == TaskReplicaCounts{1, 0});
  CHECK_FALSE(FindTaskReplicaCounts(*doc, "ps").has_value());
  auto no_tasks = basalt::json::Parse(R"({"spec":{}})");
  REQUIRE(no_tasks.ok());
  CHECK_FALSE(FindTaskReplicaCounts(*no_tasks, "worker").has_value());
}

}  // namespace

TEST_CASE("Job: decodes the bert-pretrain example", "[api][job]") {
  auto job = Job::Parse(kBertJob);
  REQUIRE(job.ok());
  const auto& spec = job->spec();
  CHECK(job->name() == "bert-pretrain");
  CHECK(spec.min_available == 4);
  CHECK(spec.scheduler_name == "volcano");
  CHECK(spec.queue == "ai-training");
  CHECK(spec.max_retry == 3);
  CHECK_FALSE(spec.ttl_seconds_after_finished.has_value());
  REQUIRE(spec.policies.size() == 1);
  CHECK(spec.policies[0].events ==
        std::vector<basalt::api::JobEvent>{basalt::api::JobEvent::kPodEvicted});
  CHECK(spec.policies[0].action == "RestartJob");
  CHECK(spec.plugins.at("svc") == std::vector<std::string>{"--disable-network-policy=true"});
  CHECK(spec.plugins.at("env").empty());
  CHECK(spec.plugins.at("ssh").empty());
  REQUIRE(spec.tasks.size() == 1);
  const auto& task = spec.tasks[0];
  CHECK(task.name == "worker");
  CHECK(task.replicas == 4);
  CHECK_FALSE(task.min_available.has_value());
  REQUIRE(task.policies.size() == 2);
  CHECK(task.policies[1].exit_code == 137);
  CHECK(task.policies[1].timeout == std::chrono::minutes(10));
  REQUIRE(task.depends_on.has_value());
  CHECK(task.depends_on->names == std::vector<std::string>{"ps"});
  CHECK(task.depends_on->iteration == "all");
  // The template is kept as raw JSON and is reachable in the document.
  CHECK(basalt::json::Serialize(*task.pod_template).find("\"nvidia.com/gpu\":1") !=
        std::string::npos);
  REQUIRE(job->TaskTemplate(0) != nullptr);
  CHECK(job->TaskTemplate(1) == nullptr);
  CHECK(job->FindTask("worker") == &spec.tasks[0]);

  const auto& st = job->status();
  CHECK(st.state.phase == "Running");
  CHECK(st.min_available == 4);
  CHECK(st.running == 4);
  CHECK(st.task_status_count.at("worker").at("Running") == 4);
  REQUIRE(st.conditions.size() == 2);
  CHECK(st.conditions[1].status == "Running");
  CHECK(st.controlled_resources.at("plugin-svc") == "svc");
}

TEST_CASE("Job: SetStatus rewrites known status fields and keeps the rest", "[api][job]") {
  auto job = Job::Parse(kBertJob);
  REQUIRE(job.ok());
  JobStatus st = job->status();
  st.state.phase = "Restarting";
  st.running = 0;
  st.pending = 4;
  st.retry_count = 1;
  st.task_status_count["worker"] = {{"Pending", 4}};
  job->SetStatus(st);
  CHECK(job->status() == st);
  auto reparsed = Job::Parse(job->ToJson());
  REQUIRE(reparsed.ok());
  CHECK(reparsed->status() == st);
  auto doc = basalt::json::Parse(job->ToJson());
  REQUIRE(doc.ok());
  CHECK(basalt::json::FindPath(*doc, {"status", "futureField", "x"}) != nullptr);
  CHECK(basalt::json::FindPath(*doc, {"status", "running"}) == nullptr);  // omitempty
  // The spec, including the raw template, is byte-for-byte unchanged.
  auto original = basalt::json::Parse(kBertJob);
  CHECK(basalt::json::Serialize(*basalt::json::Find(*doc, "spec")) ==
        basalt::json::Serialize(*basalt::json::Find(*original, "spec")));
}

TEST_CASE("Job: standard conditions round-trip after the phase history", "[api][job]") {
  auto job = Job::Parse(kBertJob);
  REQUIRE(job.ok());
  JobStatus st = job->status();
  basalt::api::Condition c;
  c.type = "Completed";
  c.status = "True";
  c.reason = "Completed";
  c.message = "The job is Completed.";
  c.last_transition_time = basalt::api::Time(std::chrono::seconds(1'700'000'000));
  st.typed_conditions.push_back(c);
  job->SetStatus(st);
  auto reparsed = Job::Parse(job->ToJson());
  REQUIRE(reparsed.ok());
  CHECK(reparsed->status() == st);
  CHECK(reparsed->status().conditions.size() == 2);  // the history entries are untouched
  REQUIRE(reparsed->status().FindTypedCondition("Completed") != nullptr);
  CHECK(reparsed->status().FindTypedCondition("Completed")->reason == "Completed");
  CHECK(reparsed->status().FindTypedCondition("Running") == nullptr);
  auto doc = basalt::json::Parse(job->ToJson());
  REQUIRE(doc.ok());
  const basalt::json::Value* arr = basalt::json::FindPath(*doc, {"status", "conditions"});
  REQUIRE(arr != nullptr);
  REQUIRE(arr->Size() == 3);
  CHECK(basalt::json::GetString((*arr)[2], "type") == "Completed");
  CHECK(basalt::json::GetString((*arr)[2], "status") == "True");
}

TEST_CASE("Job: a round trip without edits loses nothing", "[api][job]") {
  auto job = Job::Parse(kBertJob);
  REQUIRE(job.ok());
  CHECK(job->ToJson() == Normalize(kBertJob));
}

TEST_CASE("Job: mistyped fields are reported with the object and field path", "[api][job]") {
  auto job =
      Job::Parse(R"({"kind":"Job","metadata":{"name":"j","namespace":"ns"},)"
                 R"("spec":{"tasks":[{"name":"a","replicas":1},{"name":"b","replicas":"two"}]}})");
  REQUIRE_FALSE(job.ok());
  CHECK(MessageOf(job.status()) == "Job ns/j: spec.tasks[1].replicas: must be an integer");
  auto wrong_kind = Job::Parse(R"({"kind":"Pod","metadata":{"name":"p"}})");
  REQUIRE_FALSE(wrong_kind.ok());
  CHECK(MessageOf(wrong_kind.status()).find("expected kind Job, got Pod") != std::string::npos);
  auto too_big = Job::Parse(R"({"spec":{"minAvailable":4294967296}})");
  REQUIRE_FALSE(too_big.ok());
  CHECK(MessageOf(too_big.status()).find("spec.minAvailable: must fit in a 32-bit integer") !=
        std::string::npos);
}

TEST_CASE("Queue: decodes the ai-training example", "[api][queue]") {
  auto q = Queue::Parse(kQueue);
  REQUIRE(q.ok());
  CHECK(q->name() == "ai-training");
  CHECK(q->spec().weight == 10);
  CHECK(q->spec().capability.Get("cpu") == MustParse("200"));
  CHECK(q->spec().capability.Get("memory").String() == "500Gi");
  CHECK(q->spec().capability.Get("nvidia.com/gpu").Value() == 8);
  CHECK(q->spec().guarantee.Get("cpu").Value() == 16);
  CHECK(q->spec().deserved.Get("nvidia.com/gpu").Value() == 4);
  CHECK_FALSE(q->spec().Reclaimable());
  CHECK(q->spec().parent == "root");
  CHECK(q->status().state == "Open");
  CHECK(q->status().running == 1);
  CHECK(q->status().allocated.Get("memory").String() == "256Gi");
  CHECK(q->ToJson() == Normalize(kQueue));
}

TEST_CASE("Queue: defaults apply when fields are absent", "[api][queue]") {
  auto q = Queue::Parse(R"({"kind":"Queue","metadata":{"name":"default"}})");
  REQUIRE(q.ok());
  CHECK(q->spec().weight == 1);
  CHECK(q->spec().Reclaimable());
  CHECK(q->spec().capability.empty());
}

TEST_CASE("Queue: SetStatus writes allocated and keeps reservation", "[api][queue]") {
  auto q = Queue::Parse(kQueue);
  REQUIRE(q.ok());
  QueueStatus st;
  st.state = "Closed";
  st.allocated = *ResourceList::FromStrings({{"cpu", "1500m"}});
  q->SetStatus(st);
  auto doc = basalt::json::Parse(q->ToJson());
  REQUIRE(doc.ok());
  CHECK(basalt::json::Serialize(*basalt::json::Find(*doc, "status")) ==
        R"({"state":"Closed","allocated":{"cpu":"1500m"},"reservation":{"nodes":["n1"]}})");
  QueueStatus empty;
  q->SetStatus(empty);
  CHECK(basalt::json::Serialize(*basalt::json::Find(*basalt::json::Parse(q->ToJson()), "status")) ==
        R"({"allocated":{},"reservation":{"nodes":["n1"]}})");
}

TEST_CASE("Queue: a bad capability quantity names the field and the resource", "[api][queue]") {
  auto q = Queue::Parse(R"({"kind":"Queue","metadata":{"name":"q"},)"
                        R"("spec":{"capability":{"nvidia.com/gpu":"1.2.3"}}})");
  REQUIRE_FALSE(q.ok());
  CHECK(MessageOf(q.status()) ==
        "Queue q: spec.capability: resource \"nvidia.com/gpu\": invalid quantity \"1.2.3\": "
        "unknown suffix \".3\" (want one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, "
        "or an exponent like e3)");
}

TEST_CASE("PodGroup: decodes spec, status and conditions", "[api][podgroup]") {
  auto pg = PodGroup::Parse(kPodGroup);
  REQUIRE(pg.ok());
  CHECK(pg->spec().min_member == 4);
  CHECK(pg->spec().min_task_member.at("worker") == 4);
  CHECK(pg->spec().queue == "ai-training");
  CHECK(pg->spec().priority_class_name == "offline-batch");
  REQUIRE(pg->spec().min_resources.has_value());
  CHECK(pg->spec().min_resources->Get("nvidia.com/gpu").Value() == 4);
  CHECK(pg->status().phase == "Pending");
  const auto* cond = pg->FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "True");
  CHECK(cond->reason == "NotEnoughResources");
  CHECK(cond->transition_id == "t-1");
  CHECK(pg->controller_ref()->uid == "job-uid-1");
  CHECK(pg->label("volcano.sh/job-name") == "bert-pretrain");
  CHECK(pg->ToJson() == Normalize(kPodGroup));
}

TEST_CASE("PodGroup: Make + SetSpec + SetStatus build an object that parses back",
          "[api][podgroup]") {
  PodGroup pg = PodGroup::Make("default", "bert-pretrain");
  pg.AddOwnerReference({"batch.volcano.sh/v1alpha1", "Job", "bert-pretrain", "u1", true, true});
  PodGroupSpec spec;
  spec.min_member = 4;
  spec.min_task_member = {{"worker", 4}};
  spec.queue = "ai-training";
  spec.min_resources = *ResourceList::FromStrings({{"cpu", "32"}, {"nvidia.com/gpu", "4"}});
  pg.SetSpec(spec);
  PodGroupStatus st;
  st.phase = "Inqueue";
  basalt::api::Condition c;
  c.type = "Scheduled";
  c.status = "True";
  c.reason = "tasks in gang are ready to be scheduled";
  c.last_transition_time = basalt::api::ParseRfc3339("2024-05-01T10:00:00Z").value();
  st.conditions.push_back(c);
  st.running = 2;
  pg.SetStatus(st);
  auto back = PodGroup::Parse(pg.ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec() == spec);
  CHECK(back->status() == st);
  CHECK(back->api_version() == "scheduling.volcano.sh/v1beta1");
  CHECK(back->Key() == "default/bert-pretrain");
  CHECK(pg.ToJson().find(R"("minResources":{"cpu":"32","nvidia.com/gpu":"4"})") !=
        std::string::npos);
}

TEST_CASE("PodGroup: subGroupPolicy is decoded and kept through SetSpec", "[api][podgroup]") {
  auto pg = PodGroup::Parse(R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "job", "namespace": "ns"},
    "spec": {"minMember": 4, "subGroupPolicy": [
      {"name": "w", "subGroupSize": 4, "minSubGroups": 1, "futureField": true,
       "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "w"}},
       "matchLabelKeys": ["volcano.sh/partition-id"],
       "networkTopology": {"mode": "soft"}}]}})");
  REQUIRE(pg.ok());
  REQUIRE(pg->spec().sub_group_policy.size() == 1);
  const basalt::api::SubGroupPolicy& g = pg->spec().sub_group_policy[0];
  CHECK(g.name == "w");
  CHECK(g.sub_group_size == 4);
  CHECK(g.min_sub_groups == 1);
  CHECK(g.label_selector_json == R"({"matchLabels":{"volcano.sh/task-spec":"w"}})");
  CHECK(g.match_label_keys == std::vector<std::string>{"volcano.sh/partition-id"});
  REQUIRE(g.network_topology.has_value());
  CHECK_FALSE(g.network_topology->Hard());
  PodGroupSpec spec = pg->spec();
  spec.min_member = 8;
  spec.sub_group_policy.clear();  // not written: the document's list stays
  pg->SetSpec(spec);
  CHECK(pg->spec().sub_group_policy.size() == 1);
  auto back = PodGroup::Parse(pg->ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec().min_member == 8);
  CHECK(back->spec().sub_group_policy == pg->spec().sub_group_policy);
  CHECK(pg->ToJson().find(R"("futureField":true)") != std::string::npos);
}

TEST_CASE("PodGroup: SetSubGroupPolicy and a struct-only networkTopology write what parses back",
          "[api][podgroup]") {
  PodGroup pg = PodGroup::Make("ns", "job");
  PodGroupSpec spec;
  spec.min_member = 2;
  spec.network_topology = basalt::api::NetworkTopology{"soft", std::nullopt, "rack"};
  pg.SetSpec(spec);
  basalt::api::SubGroupPolicy g;
  g.name = "w";
  g.sub_group_size = 2;
  g.min_sub_groups = 1;
  g.label_selector_json =
      basalt::api::MatchLabelsSelectorJson(basalt::api::StringMap{{"volcano.sh/task-spec", "w"}});
  g.match_label_keys = {"volcano.sh/partition-id"};
  g.network_topology = basalt::api::NetworkTopology{"hard", 1, ""};
  pg.SetSubGroupPolicy({g});
  CHECK(pg.ToJson().find(R"("networkTopology":{"mode":"soft","highestTierName":"rack"})") !=
        std::string::npos);
  auto back = PodGroup::Parse(pg.ToJson());
  REQUIRE(back.ok());
  REQUIRE(back->spec().network_topology.has_value());
  CHECK(*back->spec().network_topology == *spec.network_topology);
  CHECK(back->spec().sub_group_policy == std::vector<basalt::api::SubGroupPolicy>{g});
  CHECK(pg.spec().sub_group_policy == back->spec().sub_group_policy);
  pg.SetSubGroupPolicy({});
  CHECK(pg.ToJson().find("subGroupPolicy") == std::string::npos);
  CHECK(pg.spec().sub_group_policy.empty());
}

TEST_CASE("Command: decodes action, target, reason and message", "[api][command]") {
  auto cmd = Command::Parse(R"({
    "apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
    "metadata": {"name": "bert-pretrain-abortjob-x7k2p", "namespace": "default"},
    "action": "AbortJob",
    "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
               "name": "bert-pretrain", "uid": "job-uid-1", "controller": true},
    "reason": "user", "message": "suspend via vcctl"})");
  REQUIRE(cmd.ok());
  CHECK(cmd->action() == "AbortJob");
  REQUIRE(cmd->target().has_value());
  CHECK(cmd->target()->kind == "Job");
  CHECK(cmd->target()->name == "bert-pretrain");
  CHECK(cmd->target()->uid == "job-uid-1");
  CHECK(cmd->reason() == "user");
  CHECK(cmd->message() == "suspend via vcctl");
}

TEST_CASE("Command: Make names it like vcctl and owns it by the target", "[api][command]") {
  Command cmd = Command::Make("default", "ResumeJob",
                              {"batch.volcano.sh/v1alpha1", "Job", "bert-pretrain", "u1"});
  CHECK(cmd.generate_name() == "bert-pretrain-resumejob-");
  CHECK(cmd.owner_references().size() == 1);
  auto back = Command::Parse(cmd.ToJson());
  REQUIRE(back.ok());
  CHECK(back->action() == "ResumeJob");
  CHECK(back->target()->name == "bert-pretrain");
  CHECK(cmd.ToJson().find(R"("reason")") == std::string::npos);
}

TEST_CASE("Command: a target that is not an object is rejected", "[api][command]") {
  auto cmd = Command::Parse(R"({"kind":"Command","metadata":{"name":"c","namespace":"d"},)"
                            R"("action":"AbortJob","target":"bert"})");
  REQUIRE_FALSE(cmd.ok());
  CHECK(MessageOf(cmd.status()) == "Command d/c: target: must be an object");
}
