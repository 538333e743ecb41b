#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/util/json.h"
#include "controllers/job/model.h"

namespace basalt::controllers {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "bert", "namespace": "ml", "uid": "u-1",
               "labels": {"team": "nlp"}, "annotations": {"volcano.sh/preemptable": "true"}},
  "spec": {
    "schedulerName": "volcano", "queue": "research", "minAvailable": 3, "maxRetry": 5,
    "minSuccess": 2, "priorityClassName": "high",
    "volumes": [{"mountPath": "/data", "volumeClaimName": "data-pvc"}],
    "networkTopology": {"mode": "soft", "highestTierAllowed": 2},
    "policies": [{"event": "PodEvicted", "action": "RestartJob"},
                 {"events": ["PodFailed", "Unknown"], "action": "AbortJob", "timeout": "1m30s"}],
    "plugins": {"ssh": [], "svc": ["--disable-network-policy=true"]},
    "tasks": [
      {"name": "master", "replicas": 1, "minAvailable": 1, "maxRetry": 2,
       "policies": [{"exitCode": 3, "action": "CompleteJob"}],
       "template": {"spec": {"containers": [{"name": "m", "image": "x"}], "futureField": 1}}},
      {"name": "worker", "replicas": 4, "topologyPolicy": "best-effort",
       "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1,
                           "networkTopology": {"mode": "hard", "highestTierName": "rack"}},
       "dependsOn": {"name": ["master"], "iteration": "any"}}
    ]
  },
  "status": {"state": {"phase": "Running"}, "running": 3,
             "controlledResources": {"plugin-ssh": "ssh"}, "succeeded": 1, "failed": 2,
             "pending": 4, "terminating": 5, "unknown": 6, "version": 7, "retryCount": 2,
             "minAvailable": 3,
             "taskStatusCount": {"master": {"phase": {"Running": 1}},
                                 "worker": {"phase": {"Succeeded": 1, "Running": 2}}}}
})";

TEST_CASE("Job: api::Job::Parse reads spec, policies, plugins and status", "[controllers][job]") {
  auto job = api::Job::Parse(kJob);
  REQUIRE(job.ok());
  CHECK(job->name() == "bert");
  CHECK(job->namespace_name() == "ml");
  CHECK(job->uid() == "u-1");
  CHECK(job->labels().at("team") == "nlp");
  CHECK(job->annotations().at("volcano.sh/preemptable") == "true");
  const api::JobSpec& s = job->spec();
  CHECK(s.scheduler_name == "volcano");
  CHECK(s.queue == "research");
  CHECK(s.min_available == 3);
  CHECK(s.max_retry == 5);
  CHECK(s.min_success == 2);
  CHECK(s.priority_class_name == "high");
  REQUIRE(s.volumes.size() == 1);
  CHECK(s.volumes[0].volume_claim_name == "data-pvc");
  REQUIRE(s.network_topology);
  CHECK(s.network_topology->mode == "soft");
  CHECK(s.network_topology->highest_tier_allowed == 2);
  REQUIRE(s.policies.size() == 2);
  CHECK(s.policies[0].events == std::vector<Event>{Event::kPodEvicted});
  CHECK(s.policies[1].events == std::vector<Event>{Event::kPodFailed, Event::kUnknown});
  CHECK(s.policies[1].timeout == milliseconds(90000));
  CHECK(s.plugins.at("svc") == std::vector<std::string>{"--disable-network-policy=true"});
  CHECK(s.plugins.at("ssh").empty());
  REQUIRE(s.tasks.size() == 2);
  CHECK(s.tasks[0].min_available == 1);
  CHECK(s.tasks[0].max_retry == 2);
  CHECK(s.tasks[0].policies[0].exit_code == 3);
  CHECK(json::FindPath(*s.tasks[0].pod_template, {"spec", "futureField"}) != nullptr);
  CHECK(s.tasks[1].replicas == 4);
  CHECK_FALSE(s.tasks[1].min_available);
  CHECK(s.tasks[1].topology_policy == "best-effort");
  REQUIRE(s.tasks[1].depends_on);
  CHECK(s.tasks[1].depends_on->names == std::vector<std::string>{"master"});
  CHECK(s.tasks[1].depends_on->iteration == "any");
  CHECK_FALSE(s.tasks[0].depends_on);
  REQUIRE(s.tasks[1].partition_policy);
  CHECK(s.tasks[1].partition_policy->total_partitions == 2);
  CHECK(s.tasks[1].partition_policy->partition_size == 2);
  CHECK(s.tasks[1].partition_policy->min_partitions == 1);
  CHECK(s.tasks[1].partition_policy->network_topology->highest_tier_name == "rack");
  CHECK_FALSE(s.tasks[0].partition_policy);
  CHECK(s.tasks[1].pod_template->IsObject());
  CHECK(s.TotalReplicas() == 5);
  CHECK(s.TotalTaskMinAvailable() == 5);

  CHECK(job->phase() == JobPhase::kRunning);
  CHECK(job->Initiated());
  CHECK(job->status().controlled_resources ==
        std::map<std::string, std::string>{{"plugin-ssh", "ssh"}});
  const JobCounts c = CountsFromApi(job->status());
  CHECK(c.pending == 4);
  CHECK(c.running == 3);
  CHECK(c.succeeded == 1);
  CHECK(c.failed == 2);
  CHECK(c.terminating == 5);
  CHECK(c.unknown == 6);
  CHECK(c.version == 7);
  CHECK(c.retry_count == 2);
  CHECK(c.min_available == 3);
  CHECK(c.TaskSucceeded("worker") == 1);
  CHECK(c.TaskSucceeded("master") == 0);
  CHECK_FALSE(c.TaskSucceeded("ps"));
}

TEST_CASE("Job: api::Job::Parse applies the CRD defaults", "[controllers][job]") {
  auto job = api::Job::Parse(R"({"metadata": {"name": "j"}, "spec": {"tasks": [{"name": "t"}]}})");
  REQUIRE(job.ok());
  CHECK(job->spec().queue == "default");
  CHECK(job->spec().max_retry == 3);
  CHECK_FALSE(job->spec().min_success);
  CHECK(job->status().state.phase.empty());
  CHECK(job->phase() == JobPhase::kPending);
  CHECK_FALSE(job->Initiated());
}

TEST_CASE("Job: api::Job::Parse rejects malformed input", "[controllers][job]") {
  CHECK_FALSE(api::Job::Parse("[]").ok());
  CHECK_FALSE(api::Job::Parse(R"({"spec": {"tasks": [{"name": "t", "template": 3}]}})").ok());
  CHECK_FALSE(api::Job::Parse(R"({"spec": {"policies": [{"event": "PodFailed",
                                    "action": "RestartJob", "timeout": "soon"}]}})")
                  .ok());
}

TEST_CASE("Job: names of phases, actions and events round-trip", "[controllers][job]") {
  for (Action a : kAllActions) {
    if (a != Action::kOther) CHECK(ParseAction(ActionName(a)) == a);
  }
  CHECK(ParseAction("Whatever") == Action::kOther);
  CHECK(ParseEvent("*") == Event::kAny);
  CHECK(ParseEvent("PodEvicted") == Event::kPodEvicted);
  CHECK(ParseEvent("") == Event::kNone);
  CHECK_FALSE(ParseEvent("Nope"));
  CHECK(IsFinishedPhase(JobPhase::kAborted));
  CHECK_FALSE(IsFinishedPhase(JobPhase::kAborting));
}

TEST_CASE("Job: pod names are <job>-<task>-<index>", "[controllers][job]") {
  CHECK(MakePodName("bert", "worker", 3) == "bert-worker-3");
}

}  // namespace
}  // namespace basalt::controllers
