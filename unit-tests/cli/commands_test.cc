#include "cli/commands.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "catch2/catch.hpp"
#include "cli/wait.h"
#include "common/client/testing/fake_transport.h"
#include "common/util/json.h"
#include "unit-tests/cli/builders.h"

namespace basalt::cli {
namespace {

using client::FakeTransport;
using testing::EventBuilder;
using testing::JobBuilder;
using testing::ListJson;
using testing::PodBuilder;
using testing::QueueBuilder;

constexpr char kJobs[] = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs";
constexpr char kCommands[] = "/apis/bus.volcano.sh/v1alpha1/namespaces/default/commands";

// A Client over a FakeTransport, and what a command printed.
struct Fixture {
  Fixture() {
    auto t = std::make_unique<FakeTransport>();
    transport = t.get();
    client = std::make_unique<client::Client>(std::move(t), "default");
  }
  int Run(std::vector<std::string> args) {
    absl::StatusOr<Options> o = ParseOptions(args);
    REQUIRE(o.ok());
    out.str("");
    err.str("");
    return RunCommand(*o, *client, out, err);
  }
  // The requests with this verb, in order.
  std::vector<client::Request> Sent(std::string_view verb) const {
    std::vector<client::Request> r;
    for (const client::Request& q : transport->requests()) {
      if (q.verb == verb) r.push_back(q);
    }
    return r;
  }

  FakeTransport* transport;
  std::unique_ptr<client::Client> client;
  std::ostringstream out, err;
};

std::string Status(int code, std::string_view reason, std::string_view message) {
  return fmt::format(
      R"({{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"{}","message":"{}","code":{}}})",
      reason, message, code);
}

std::string WatchLine(std::string_view type, const std::string& object) {
  return fmt::format(R"({{"type":"{}","object":{}}})", type, object) + "\n";
}

TEST_CASE("vcctl job list: the table of the namespace's jobs, filtered by --selector",
          "[cli][commands]") {
  Fixture f;
  const std::string list = ListJson("Job", {JobBuilder("bert").Task("w", 2).Phase("Running").Json(),
                                            JobBuilder("resnet").Task("w", 1).Json()});
  f.transport->AddJson("GET", kJobs, 200, list);
  REQUIRE(f.Run({"job", "list"}) == kExitOk);
  CHECK(f.out.str().find("Name     Creation       Phase") == 0);
  CHECK(f.out.str().find("bert     2026-05-01     Running     Batch       2") != std::string::npos);
  CHECK(f.out.str().find("resnet") != std::string::npos);

  f.transport->AddJson("GET", kJobs, 200, list);
  REQUIRE(f.Run({"job", "list", "--selector", "res"}) == kExitOk);
  CHECK(f.out.str().find("bert") == std::string::npos);
  CHECK(f.out.str().find("resnet") != std::string::npos);

  f.transport->AddJson("GET", "/apis/batch.volcano.sh/v1alpha1/namespaces/empty/jobs", 200,
                       ListJson("Job", {}));
  REQUIRE(f.Run({"job", "list", "-n", "empty"}) == kExitOk);
  CHECK(f.out.str() == "No resources found\n");

  f.transport->AddJson("GET", "/apis/batch.volcano.sh/v1alpha1/jobs", 200, list);
  REQUIRE(f.Run({"job", "list", "--all-namespaces"}) == kExitOk);
  CHECK(f.out.str().find("Namespace   Name     Creation") == 0);
}

TEST_CASE("vcctl job view: a missing job is the server's NotFound, exit code 6",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson("GET", std::string(kJobs) + "/nope", 404,
                       Status(404, "NotFound", R"(jobs.batch.volcano.sh \"nope\" not found)"));
  CHECK(f.Run({"job", "view", "-N", "nope"}) == kExitApiError);
  CHECK(f.err.str() == "Error from server (NotFound): jobs.batch.volcano.sh \"nope\" not found\n");
  CHECK(f.out.str().empty());
}

TEST_CASE("vcctl job suspend and resume: an AbortJob / ResumeJob Command owned by the job",
          "[cli][commands]") {
  Fixture f;
  for (const char* verb : {"suspend", "resume"}) {
    f.transport->AddJson("GET", std::string(kJobs) + "/train", 200,
                         JobBuilder("train").Uid("u-1").Task("w", 1).Json());
    f.transport->AddJson("POST", kCommands, 201,
                         R"({"kind":"Command","metadata":{"name":"train-x-abcde"}})");
    REQUIRE(f.Run({"job", verb, "-N", "train"}) == kExitOk);
    CHECK(f.out.str() == fmt::format("{} job train successfully (command train-x-abcde)\n", verb));
  }
  std::vector<client::Request> posts = f.Sent("POST");
  REQUIRE(posts.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    json::Document cmd = *json::Parse(posts[i].body);
    const std::string action = i == 0 ? "AbortJob" : "ResumeJob";
    CHECK(json::GetString(cmd, "apiVersion") == "bus.volcano.sh/v1alpha1");
    CHECK(json::GetString(cmd, "action") == action);
    CHECK(json::GetString(*json::Find(cmd, "target"), "kind") == "Job");
    CHECK(json::GetString(*json::Find(cmd, "target"), "name") == "train");
    CHECK(json::GetString(*json::Find(cmd, "target"), "uid") == "u-1");
    const json::Value& meta = *json::Find(cmd, "metadata");
    CHECK(json::GetString(meta, "generateName") ==
          "train-" + std::string(i == 0 ? "abortjob-" : "resumejob-"));
    CHECK(json::GetString(meta, "namespace") == "default");
    const json::Value& owner = (*json::Find(meta, "ownerReferences"))[0];
    CHECK(json::GetString(owner, "uid") == "u-1");
    CHECK(json::GetBool(owner, "controller"));
  }
}

TEST_CASE("vcctl queue operate: close and open are Commands, update patches the weight",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/q1", 200,
                       QueueBuilder("q1").Json());
  f.transport->AddJson("POST", kCommands, 201, R"({"metadata":{"name":"q1-closequeue-x"}})");
  REQUIRE(f.Run({"queue", "operate", "-n", "q1", "-a", "close"}) == kExitOk);
  CHECK(f.out.str() == "close queue q1 successfully (command q1-closequeue-x)\n");
  json::Document cmd = *json::Parse(f.Sent("POST").at(0).body);
  CHECK(json::GetString(cmd, "action") == "CloseQueue");
  CHECK(json::GetString(*json::Find(cmd, "target"), "kind") == "Queue");
  CHECK(json::GetString(*json::Find(cmd, "target"), "apiVersion") ==
        "scheduling.volcano.sh/v1beta1");
  CHECK(json::GetString(*json::Find(cmd, "target"), "uid") == "q1-uid");

  f.transport->AddJson("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/q1", 200,
                       QueueBuilder("q1").Weight(7).Json());
  REQUIRE(f.Run({"queue", "operate", "-n", "q1", "-a", "update", "-w", "7"}) == kExitOk);
  client::Request patch = f.Sent("PATCH").at(0);
  CHECK(patch.body == R"({"spec":{"weight":7}})");
  CHECK(client::FindHeader(patch.headers, "Content-Type") == "application/merge-patch+json");

  f.transport->AddJson(
      "GET", "/apis/scheduling.volcano.sh/v1beta1/queues/gone", 404,
      Status(404, "NotFound", R"(queues.scheduling.volcano.sh \"gone\" not found)"));
  CHECK(f.Run({"queue", "operate", "-n", "gone", "-a", "open"}) == kExitApiError);
  CHECK(f.err.str() ==
        "Error from server (NotFound): queues.scheduling.volcano.sh \"gone\" not found\n");
}

TEST_CASE("vcctl job run: the job built from flags, and the webhook's denial verbatim",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson("POST", kJobs, 201, JobBuilder("j1").Json());
  REQUIRE(f.Run({"job", "run", "-N", "j1", "-r", "3", "-m", "2", "-i", "nginx", "-R", "cpu=2"}) ==
          kExitOk);
  CHECK(f.out.str() == "run job j1 successfully\n");
  json::Document job = *json::Parse(f.Sent("POST").at(0).body);
  CHECK(json::GetString(job, "kind") == "Job");
  CHECK(json::GetInt(*json::Find(job, "spec"), "minAvailable") == 2);
  CHECK(json::GetString(*json::Find(job, "spec"), "schedulerName") == "volcano");
  const json::Value& task = (*json::FindPath(job, {"spec", "tasks"}))[0];
  CHECK(json::GetInt(task, "replicas") == 3);
  const json::Value& c = (*json::FindPath(task, {"template", "spec", "containers"}))[0];
  CHECK(json::GetString(c, "image") == "nginx");
  CHECK(json::GetString(*json::FindPath(c, {"resources", "requests"}), "cpu") == "2");
  CHECK(json::GetString(*json::FindPath(c, {"resources", "limits"}), "memory") == "100Mi");

  const std::string denial =
      "admission webhook \\\"validatejob.volcano.sh\\\" denied the request: spec.queue: can only "
      "submit job to queue with state `Open`, queue `q1` status is `Closed`";
  f.transport->AddJson("POST", kJobs, 403, Status(403, "Forbidden", denial));
  CHECK(f.Run({"job", "run", "-N", "j2", "-q", "q1"}) == kExitApiError);
  CHECK(f.err.str() ==
        "Error from server (Forbidden): admission webhook \"validatejob.volcano.sh\" denied the "
        "request: spec.queue: can only submit job to queue with state `Open`, queue `q1` status "
        "is `Closed`\n");

  CHECK(f.Run({"job", "run", "-N", "j3", "-R", "cpu"}) == kExitUsage);
  CHECK(f.err.str() == "vcctl: invalid argument syntax cpu, expected <resource>=<value>\n");
}

TEST_CASE("vcctl job run -f: the file's job, its namespace unless -n, --logs checks the task",
          "[cli][commands]") {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / fmt::format("vcctl-test-{}.yaml", ::getpid());
  std::ofstream(file) << "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: "
                         "fromfile\n  namespace: team\nspec:\n  tasks:\n  - name: worker\n    "
                         "replicas: 1\n";
  Fixture f;
  f.transport->AddJson("POST", "/apis/batch.volcano.sh/v1alpha1/namespaces/team/jobs", 201,
                       JobBuilder("fromfile", "team").Json());
  REQUIRE(f.Run({"job", "run", "-f", file.string()}) == kExitOk);
  CHECK(f.out.str() == "run job fromfile successfully\n");
  json::Document sent = *json::Parse(f.Sent("POST").at(0).body);
  CHECK(json::GetString(*json::Find(sent, "metadata"), "namespace") == "team");

  CHECK(f.Run({"job", "run", "-f", file.string(), "--wait", "--logs", "ps"}) == kExitUsage);
  CHECK(f.err.str() == "vcctl: --logs ps: the job has no such task (tasks: worker)\n");
  CHECK(f.Sent("POST").size() == 1);  // refused before anything was created

  CHECK(f.Run({"job", "run", "-f", "/nonexistent/job.yaml"}) == kExitUsage);
  CHECK(f.err.str().find("/nonexistent/job.yaml") != std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE("vcctl job run --wait: phase changes printed, Failed exits 1 with the reason",
          "[cli][commands]") {
  Fixture f;
  JobBuilder b("crash");
  b.Uid("c-1").Task("w", 1).MaxRetry(1);
  f.transport->AddJson("POST", kJobs, 201, b.Json());
  f.transport->AddJson("GET", std::string(kJobs) + "/crash", 200,
                       b.Rv("2").Phase("Pending").Json());
  FakeTransport::StreamScript watch;
  watch.chunks = {WatchLine("MODIFIED", b.Rv("3").Phase("Running").Json()),
                  WatchLine("BOOKMARK", R"({"kind":"Job","metadata":{"resourceVersion":"4"}})"),
                  WatchLine("MODIFIED", b.Rv("5").Phase("Restarting").RetryCount(1).Json()),
                  WatchLine("MODIFIED", b.Rv("6").Phase("Failed").Json())};
  f.transport->AddStream(std::string(kJobs) + "?watch=true*", watch);
  f.transport->AddJson("GET", "/api/v1/namespaces/default/events*", 200,
                       ListJson("Event", {EventBuilder("crash.1", "crash")
                                              .Type("Warning")
                                              .Reason("PodFailed")
                                              .Message("pod crash-w-0 failed")
                                              .Json()}));
  f.transport->AddJson(
      "GET", "/api/v1/namespaces/default/pods*", 200,
      ListJson("Pod", {PodBuilder("crash-w-0").Phase("Failed").Terminated(3, "Error").Json()}));
  REQUIRE(f.Run({"job", "run", "-N", "crash", "--wait"}) == kExitJobFailed);
  CHECK(f.out.str() ==
        "run job crash successfully\n"
        "job default/crash: Pending\n"
        "job default/crash: Running\n"
        "job default/crash: Restarting (retry 1 of 1)\n"
        "job default/crash: Failed\n");
  CHECK(f.err.str() ==
        "vcctl: job default/crash Failed after 1 of 1 retries: last Warning event PodFailed: pod "
        "crash-w-0 failed; pod default/crash-w-0 failed: container main exited with code 3 "
        "(Error) (exit code 1)\n");
  // The watch asked for this job only, from the version it had read.
  std::vector<client::Request> reqs = f.transport->requests();
  bool watched = false;
  for (const client::Request& r : reqs) {
    if (r.path.find("watch=true") == std::string::npos) continue;
    watched = true;
    CHECK(r.path.find("fieldSelector=metadata.name%3Dcrash") != std::string::npos);
    CHECK(r.path.find("resourceVersion=2") != std::string::npos);
  }
  CHECK(watched);
}

TEST_CASE("vcctl job run --wait: Completed exits 0, a deleted job exits 7", "[cli][commands]") {
  Fixture f;
  JobBuilder ok("ok");
  f.transport->AddJson("POST", kJobs, 201, ok.Json());
  f.transport->AddJson("GET", std::string(kJobs) + "/ok", 200, ok.Rv("2").Phase("Running").Json());
  FakeTransport::StreamScript done;
  done.chunks = {WatchLine("MODIFIED", ok.Rv("3").Phase("Completed").Json())};
  f.transport->AddStream(std::string(kJobs) + "?watch=true*", done);
  REQUIRE(f.Run({"job", "run", "-N", "ok", "--wait"}) == kExitOk);
  CHECK(f.out.str() ==
        "run job ok successfully\njob default/ok: Running\njob default/ok: Completed\n"
        "vcctl: job default/ok Completed\n");

  JobBuilder gone("gone");
  f.transport->AddJson("POST", kJobs, 201, gone.Json());
  f.transport->AddJson("GET", std::string(kJobs) + "/gone", 200, gone.Phase("Running").Json());
  FakeTransport::StreamScript deleted;
  deleted.chunks = {WatchLine("DELETED", gone.Json())};
  f.transport->AddStream(std::string(kJobs) + "?watch=true*", deleted);
  f.transport->AddJson("GET", "/api/v1/namespaces/default/events*", 200, ListJson("Event", {}));
  f.transport->AddJson("GET", "/api/v1/namespaces/default/pods*", 200, ListJson("Pod", {}));
  CHECK(f.Run({"job", "run", "-N", "gone", "--wait"}) == kExitJobDeleted);
  CHECK(f.out.str().find("job default/gone: deleted\n") != std::string::npos);
  CHECK(f.err.str().find("was deleted before it finished (last phase Running)") !=
        std::string::npos);
}

TEST_CASE("vcctl pod list: a job's pods by label, a queue's by label or annotation",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson(
      "GET", "/api/v1/namespaces/default/pods?labelSelector=volcano.sh%2Fjob-name%3Dtrain", 200,
      ListJson("Pod", {PodBuilder("train-w-0")
                           .Label("volcano.sh/queue-name", "q1")
                           .Phase("Running")
                           .Running(true)
                           .Json()}));
  REQUIRE(f.Run({"pod", "list", "-j", "train"}) == kExitOk);
  CHECK(f.out.str().find("train-w-0") != std::string::npos);
  CHECK(f.out.str().find("Running") != std::string::npos);

  f.transport->AddJson(
      "GET", "/api/v1/namespaces/default/pods", 200,
      ListJson("Pod", {PodBuilder("a").Label("volcano.sh/queue-name", "q1").Json(),
                       PodBuilder("b").Label("volcano.sh/queue-name", "q2").Json()}));
  REQUIRE(f.Run({"pod", "list", "-q", "q1"}) == kExitOk);
  CHECK(f.out.str().find("\na ") != std::string::npos);
  CHECK(f.out.str().find("\nb ") == std::string::npos);

  f.transport->AddJson(
      "GET", "/api/v1/namespaces/default/pods?labelSelector=volcano.sh%2Fjob-name%3Dtrain", 200,
      ListJson("Pod", {PodBuilder("train-w-0").Label("volcano.sh/queue-name", "q1").Json()}));
  CHECK(f.Run({"pod", "list", "-j", "train", "-q", "q2"}) == kExitUsage);
  CHECK(f.err.str() == "the input vcjob train does not match the queue q2\n");
}

TEST_CASE("vcctl jobflow list: the flows of the namespace, a hint when the CRD is missing",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson(
      "GET", "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows", 200,
      ListJson(
          "JobFlow",
          {R"({"metadata":{"name":"f1","namespace":"default"},"status":{"state":{"phase":"Succeed"}}})"}));
  REQUIRE(f.Run({"jobflow", "list"}) == kExitOk);
  CHECK(f.out.str().find("Name    Namespace    Phase      Age") == 0);
  CHECK(f.out.str().find("f1      default      Succeed") != std::string::npos);

  f.transport->AddJson("GET", "/apis/flow.volcano.sh/v1alpha1/namespaces/ml/jobtemplates", 404,
                       "404 page not found\n");
  CHECK(f.Run({"jobtemplate", "list", "-n", "ml"}) == kExitApiError);
  CHECK(f.err.str() ==
        "Error from server: 404 page not found (is the jobtemplates.flow.volcano.sh CRD "
        "installed?)\n");
}

constexpr char kFlows[] = "/apis/flow.volcano.sh/v1alpha1/namespaces/default/jobflows";
constexpr char kTemplates[] = "/apis/flow.volcano.sh/v1alpha1/namespaces/ml/jobtemplates";

std::filesystem::path WriteTemp(std::string_view name, std::string_view text) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / fmt::format("vcctl-{}-{}.yaml", name, ::getpid());
  std::ofstream(file) << text;
  return file;
}

TEST_CASE("vcctl jobtemplate create -f: every document of the file, in its namespace",
          "[cli][commands]") {
  const std::filesystem::path file = WriteTemp(
      "templates",
      "# two templates\n---\napiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n"
      "  name: a\n  namespace: ml\nspec:\n  tasks: []\n---\n---\nkind: JobTemplate\nmetadata:\n"
      "  name: b\n  namespace: ml\n");
  Fixture f;
  f.transport->AddJson("POST", kTemplates, 201, R"({"metadata":{"name":"a","namespace":"ml"}})");
  f.transport->AddJson(
      "POST", kTemplates, 409,
      Status(409, "AlreadyExists", "jobtemplates.flow.volcano.sh \\\"b\\\" already exists"));
  CHECK(f.Run({"jobtemplate", "create", "-f", file.string()}) == kExitApiError);
  CHECK(f.out.str() == "Created JobTemplate: ml/a\n");
  CHECK(f.err.str() ==
        "create JobTemplate ml/b: Error from server (AlreadyExists): "
        "jobtemplates.flow.volcano.sh \"b\" already exists\n");
  REQUIRE(f.Sent("POST").size() == 2);
  json::Document b = *json::Parse(f.Sent("POST").at(1).body);
  CHECK(json::GetString(b, "apiVersion") == "flow.volcano.sh/v1alpha1");
  CHECK(json::GetString(b, "kind") == "JobTemplate");
  std::filesystem::remove(file);

  const std::filesystem::path wrong = WriteTemp("wrong", "kind: Job\nmetadata:\n  name: j\n");
  CHECK(f.Run({"jobflow", "create", "-f", wrong.string()}) == kExitUsage);
  CHECK(f.err.str() == fmt::format("vcctl: {}: the object is a Job, not a JobFlow "
                                   "(flow.volcano.sh/v1alpha1)\n",
                                   wrong.string()));
  std::filesystem::remove(wrong);
  CHECK(f.Run({"jobflow", "create", "-f", "/nonexistent/flow.yaml"}) == kExitUsage);
  CHECK(f.err.str().find("/nonexistent/flow.yaml") != std::string::npos);
  CHECK(f.Sent("POST").size() == 2);
}

TEST_CASE("vcctl jobflow create: the webhook's denial verbatim, default namespace",
          "[cli][commands]") {
  const std::filesystem::path file =
      WriteTemp("flow", "kind: JobFlow\nmetadata:\n  name: bad\nspec:\n  flows:\n  - name: x\n");
  Fixture f;
  f.transport->AddJson(
      "POST", kFlows, 422,
      Status(422, "Invalid",
             "admission webhook \\\"validatejobflow.volcano.sh\\\" denied the request: "
             "spec.flows[0].name: jobtemplate x not found"));
  CHECK(f.Run({"jobflow", "create", "-f", file.string()}) == kExitApiError);
  CHECK(f.err.str() ==
        "create JobFlow default/bad: Error from server (Invalid): admission webhook "
        "\"validatejobflow.volcano.sh\" denied the request: spec.flows[0].name: jobtemplate x "
        "not found\n");
  std::filesystem::remove(file);
}

TEST_CASE("vcctl jobflow get: a table row, -o yaml or json, a missing flow named",
          "[cli][commands]") {
  const std::string flow =
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"pipe",)"
      R"("namespace":"default"},"status":{"state":{"phase":"Running"}}})";
  Fixture f;
  f.transport->AddJson("GET", std::string(kFlows) + "/pipe", 200, flow);
  REQUIRE(f.Run({"jobflow", "get", "-N", "pipe"}) == kExitOk);
  CHECK(f.out.str().find("Name    Namespace    Phase      Age") == 0);
  CHECK(f.out.str().find("pipe    default      Running") != std::string::npos);

  f.transport->AddJson("GET", std::string(kFlows) + "/pipe", 200, flow);
  REQUIRE(f.Run({"jobflow", "get", "-N", "pipe", "-o", "yaml"}) == kExitOk);
  CHECK(f.out.str() ==
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: pipe\n  "
        "namespace: default\nstatus:\n  state:\n    phase: Running\n");

  f.transport->AddJson("GET", std::string(kFlows) + "/pipe", 200, flow);
  REQUIRE(f.Run({"jobflow", "get", "-N", "pipe", "-o", "json"}) == kExitOk);
  CHECK(json::GetString(*json::Parse(f.out.str()), "kind") == "JobFlow");

  f.transport->AddJson("GET", std::string(kFlows) + "/nope", 404,
                       Status(404, "NotFound", "jobflows.flow.volcano.sh \\\"nope\\\" not found"));
  CHECK(f.Run({"jobflow", "get", "-N", "nope"}) == kExitApiError);
  CHECK(f.err.str() ==
        "Error from server (NotFound): jobflows.flow.volcano.sh \"nope\" not found\n");
}

TEST_CASE("vcctl jobflow describe: one flow as YAML without managedFields, or all with separators",
          "[cli][commands]") {
  Fixture f;
  f.transport->AddJson(
      "GET", std::string(kFlows) + "/pipe", 200,
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"pipe",)"
      R"("namespace":"default","managedFields":[{"manager":"kubectl"}]},"spec":{"jobRetainPolicy":"retain"}})");
  REQUIRE(f.Run({"jobflow", "describe", "-N", "pipe"}) == kExitOk);
  CHECK(f.out.str() ==
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: pipe\n  "
        "namespace: default\nspec:\n  jobRetainPolicy: retain\n");

  // Without -N: every flow of the namespace, each with its kind, Volcano's separator between.
  f.transport->AddJson("GET", kFlows, 200,
                       ListJson("JobFlow", {R"({"metadata":{"name":"a","namespace":"default"}})",
                                            R"({"metadata":{"name":"b","namespace":"default"}})"}));
  REQUIRE(f.Run({"jobflow", "describe", "-o", "json"}) == kExitOk);
  const std::string out = f.out.str();
  const size_t sep = out.find("\n---------------------------------\n");
  REQUIRE(sep != std::string::npos);
  json::Document first = *json::Parse(out.substr(0, sep + 1));
  json::Document second = *json::Parse(out.substr(sep + 35));
  CHECK(json::GetString(first, "kind") == "JobFlow");
  CHECK(json::GetString(*json::FindPath(first, {"metadata"}), "name") == "a");
  CHECK(json::GetString(*json::FindPath(second, {"metadata"}), "name") == "b");
}

TEST_CASE("vcctl jobtemplate delete: by -N, or each object of -f", "[cli][commands]") {
  Fixture f;
  f.transport->AddJson("DELETE", std::string(kTemplates) + "/a", 200, R"({"kind":"Status"})");
  REQUIRE(f.Run({"jobtemplate", "delete", "-N", "a", "-n", "ml"}) == kExitOk);
  CHECK(f.out.str() == "Deleted JobTemplate: ml/a\n");

  const std::filesystem::path file = WriteTemp(
      "del",
      "kind: JobTemplate\nmetadata:\n  name: a\n---\nkind: JobTemplate\nmetadata:\n  name: b\n");
  f.transport->AddJson("DELETE", std::string(kTemplates) + "/a", 404,
                       Status(404, "NotFound", "jobtemplates.flow.volcano.sh \\\"a\\\" not found"));
  f.transport->AddJson("DELETE", std::string(kTemplates) + "/b", 200, R"({"kind":"Status"})");
  CHECK(f.Run({"jobtemplate", "delete", "-f", file.string(), "-n", "ml"}) == kExitApiError);
  CHECK(f.out.str() == "Deleted JobTemplate: ml/b\n");
  CHECK(f.err.str() ==
        "delete JobTemplate ml/a: Error from server (NotFound): jobtemplates.flow.volcano.sh "
        "\"a\" not found\n");
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace basalt::cli
