#include "cli/output.h"

#include <chrono>

#include "catch2/catch.hpp"
#include "unit-tests/cli/builders.h"

namespace basalt::cli {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::EventBuilder;
using testing::JobBuilder;
using testing::PodBuilder;
using testing::PodGroupBuilder;
using testing::QueueBuilder;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

TEST_CASE("HumanDuration: kubectl's ages", "[cli][output]") {
  CHECK(HumanDuration(-5s) == "<invalid>");
  CHECK(HumanDuration(-1s) == "0s");
  CHECK(HumanDuration(45s) == "45s");
  CHECK(HumanDuration(119s) == "119s");
  CHECK(HumanDuration(200s) == "3m20s");
  CHECK(HumanDuration(5min) == "5m");
  CHECK(HumanDuration(95min) == "95m");
  CHECK(HumanDuration(4h + 5min) == "4h5m");
  CHECK(HumanDuration(30h) == "30h");
  CHECK(HumanDuration(24h * 3 + 2h) == "3d2h");
  CHECK(HumanDuration(24h * 30) == "30d");
  CHECK(HumanDuration(24h * (365 * 3 + 4)) == "3y4d");
}

TEST_CASE("FormatJobList: Volcano's columns, the name column sized by the longest name",
          "[cli][output]") {
  std::vector<api::Job> jobs = {JobBuilder("bert-pretrain")
                                    .Task("worker", 4)
                                    .Task("ps", 1)
                                    .Phase("Running")
                                    .MinAvailable(5)
                                    .Running(5)
                                    .RetryCount(1)
                                    .Build(),
                                JobBuilder("j2")
                                    .Label("volcano.sh/job-type", "MPI")
                                    .Task("w", 1)
                                    .Phase("Completed")
                                    .Succeeded(1)
                                    .Build()};
  std::vector<std::string> lines = Lines(FormatJobList(jobs, false));
  REQUIRE(lines.size() == 3);
  // "bert-pretrain" is 13 characters: the name column is 16 wide.
  CHECK(lines[0] ==
        "Name            Creation       Phase       JobType     Replicas    Min   Pending   "
        "Running   Succeeded   Failed    Unknown     RetryCount");
  CHECK(lines[1] ==
        "bert-pretrain   2026-05-01     Running     Batch       5           5     0         "
        "5         0           0         0           1         ");
  CHECK(lines[2].rfind("j2              2026-05-01     Completed   MPI         1           0     "
                       "0         0         1  ",
                       0) == 0);

  std::vector<std::string> all = Lines(FormatJobList(jobs, true));
  CHECK(all[0].rfind("Namespace   Name            Creation", 0) == 0);
  CHECK(all[1].rfind("default     bert-pretrain   2026-05-01", 0) == 0);
}

TEST_CASE("FormatQueueList and FormatQueue: Volcano's fixed-width columns", "[cli][output]") {
  std::vector<api::Queue> queues = {QueueBuilder("default").Weight(1).State("Open").Build(),
                                    QueueBuilder("research").Weight(4).State("Closed").Build()};
  std::vector<api::PodGroup> pgs = {
      PodGroupBuilder("a").Queue("research").Phase("Running").Build(),
      PodGroupBuilder("b").Queue("research").Phase("Inqueue").Build(),
      PodGroupBuilder("c").Queue("research").Phase("Completed").Build(),
      PodGroupBuilder("d").Phase("Pending").Build()};
  std::vector<std::string> lines = Lines(FormatQueueList(queues, CountPodGroupsByQueue(pgs)));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "Name                     Weight  State   Inqueue Pending Running Unknown Completed");
  // A PodGroup without spec.queue counts for "default".
  CHECK(lines[1] ==
        "default                  1       Open    0       1       0       0       0       ");
  CHECK(lines[2] ==
        "research                 4       Closed  1       0       1       0       1       ");

  std::vector<std::string> one = Lines(FormatQueue(
      QueueBuilder("q1").Weight(3).State("Open").Inqueue(2).Pending(1).Running(5).Build()));
  REQUIRE(one.size() == 2);
  CHECK(one[0] == "Name                     Weight  State   Inqueue Pending Running Unknown ");
  CHECK(one[1] == "q1                       3       Open    2       1       5       0       ");
}

TEST_CASE("PodStatusText: kubectl's STATUS column", "[cli][output]") {
  CHECK(PodStatusText(PodBuilder("p").Phase("Pending").Build()) == "Pending");
  CHECK(PodStatusText(PodBuilder("p").Phase("Running").Running(true).Build()) == "Running");
  CHECK(PodStatusText(PodBuilder("p").Phase("Pending").Waiting("ImagePullBackOff").Build()) ==
        "ImagePullBackOff");
  CHECK(PodStatusText(PodBuilder("p").Phase("Failed").Terminated(3, "Error").Build()) == "Error");
  CHECK(PodStatusText(PodBuilder("p").Phase("Failed").Terminated(3, "").Build()) == "ExitCode:3");
  CHECK(PodStatusText(PodBuilder("p").Phase("Succeeded").Terminated(0, "Completed").Build()) ==
        "Completed");
  CHECK(PodStatusText(PodBuilder("p").Phase("Running").Running(true).Deleting().Build()) ==
        "Terminating");
}

TEST_CASE("FormatPodList: each column as wide as its longest value plus 8", "[cli][output]") {
  const api::Time now = At("2026-05-01T10:03:20Z");
  std::vector<api::Pod> pods = {
      PodBuilder("train-worker-0").Phase("Running").Running(true, 2).Build(),
      PodBuilder("train-ps-0").Phase("Pending").Build()};
  std::vector<std::string> lines = Lines(FormatPodList(pods, false, now));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "Name                  Ready      Status         Restart  Age          ");
  CHECK(lines[1] == "train-worker-0        1/1        Running        2        3m20s        ");
  CHECK(lines[2] == "train-ps-0            0/1        Pending        0        3m20s        ");
  CHECK(Lines(FormatPodList(pods, true, now))[1].rfind("default          train-worker-0", 0) == 0);
}

TEST_CASE("FormatPodGroupList: phase, members, queue and age", "[cli][output]") {
  const api::Time now = At("2026-05-01T10:00:45Z");
  std::vector<std::string> lines = Lines(FormatPodGroupList(
      {PodGroupBuilder("train").Queue("research").MinMember(4).Phase("Running").Running(4).Build()},
      false, now));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "Name    Phase       MinMember   Running   Succeeded   Failed    Queue      Age       ");
  CHECK(lines[1] ==
        "train   Running     4           4         0           0         research   45s       ");
}

TEST_CASE("FormatJobView: spec, state with reason, and the job's events", "[cli][output]") {
  api::Job job = JobBuilder("train")
                     .Task("worker", 2)
                     .MaxRetry(2)
                     .Phase("Failed")
                     .Reason("PodFailed")
                     .Message("task worker failed")
                     .RetryCount(2)
                     .Build();
  std::vector<api::Event> events = {EventBuilder("train.1", "train")
                                        .Type("Warning")
                                        .Reason("PodGroupPending")
                                        .Message("0/8 nodes are unavailable")
                                        .Last("2026-05-01T10:00:00Z")
                                        .Build()};
  std::string out = FormatJobView(job, events, At("2026-05-01T10:00:30Z"));
  CHECK(out.find("Name:       \ttrain\n") == 0);
  CHECK(out.find("Namespace:  \tdefault\n") != std::string::npos);
  CHECK(out.find("  Max Retry:         \t2\n") != std::string::npos);
  CHECK(out.find("    Name:\tworker\n    Replicas:\t2\n") != std::string::npos);
  CHECK(out.find("      Image:\tbusybox\n") != std::string::npos);
  CHECK(out.find("  RetryCount:   \t2\n") != std::string::npos);
  CHECK(
      out.find("    Phase:\tFailed\n    Reason:\tPodFailed\n    Message:\ttask worker failed\n") !=
      std::string::npos);
  CHECK(out.find("Warning        \tPodGroupPending") != std::string::npos);
  CHECK(out.find("\t30s  ") != std::string::npos);
  CHECK(out.find("0/8 nodes are unavailable\n") != std::string::npos);
  CHECK(FormatJobView(job, {}, At("2026-05-01T10:00:30Z")).find("Events: \t<none>") !=
        std::string::npos);
}

TEST_CASE("FormatJobFlowList and FormatJobTemplateList: Volcano's columns, widths + 4",
          "[cli][output]") {
  api::Object flow = *api::Object::Parse(
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"pipeline",)"
      R"("namespace":"ml","creationTimestamp":"2026-05-01T10:00:00Z"},"status":{"state":{"phase":"Running"}}})");
  std::vector<std::string> lines = Lines(FormatJobFlowList({flow}, At("2026-05-01T10:02:00Z")));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "Name        Namespace    Phase      Age    ");
  CHECK(lines[1] == "pipeline    ml           Running    2m     ");
  api::Object tmpl = *api::Object::Parse(
      R"({"kind":"JobTemplate","metadata":{"name":"pretrain-template","namespace":"ml"}})");
  lines = Lines(FormatJobTemplateList({tmpl}));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "Name                 Namespace    ");
  CHECK(lines[1] == "pretrain-template    ml           ");
}

TEST_CASE("FormatYaml: kubectl's block layout, strings quoted when YAML would retype them",
          "[cli][output]") {
  json::Document d = *json::Parse(
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"f",)"
      R"("labels":{}},"spec":{"flows":[{"name":"a"},{"name":"b","dependsOn":{"targets":["a"]}}],)"
      R"("jobRetainPolicy":"delete"},"x":{"num":3,"t":true,"z":null,"s1":"true","s2":"10",)"
      R"("s3":"","s4":"a: b","s5":"two\nlines","s6":"#c","list":[[1,2]],"e":[]}})");
  CHECK(FormatYaml(d) ==
        "apiVersion: flow.volcano.sh/v1alpha1\n"
        "kind: JobFlow\n"
        "metadata:\n"
        "  name: f\n"
        "  labels: {}\n"
        "spec:\n"
        "  flows:\n"
        "  - name: a\n"
        "  - name: b\n"
        "    dependsOn:\n"
        "      targets:\n"
        "      - a\n"
        "  jobRetainPolicy: delete\n"
        "x:\n"
        "  num: 3\n"
        "  t: true\n"
        "  z: null\n"
        "  s1: \"true\"\n"
        "  s2: \"10\"\n"
        "  s3: \"\"\n"
        "  s4: \"a: b\"\n"
        "  s5: \"two\\nlines\"\n"
        "  s6: \"#c\"\n"
        "  list:\n"
        "  - - 1\n"
        "    - 2\n"
        "  e: []\n");
}

TEST_CASE("FormatJson: two-space indented JSON ending in a newline", "[cli][output]") {
  json::Document d = *json::Parse(R"({"metadata":{"name":"t"},"n":[1]})");
  CHECK(FormatJson(d) ==
        "{\n  \"metadata\": {\n    \"name\": \"t\"\n  },\n  \"n\": [\n    1\n  ]\n}\n");
}

}  // namespace
}  // namespace basalt::cli
