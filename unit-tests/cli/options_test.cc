#include "cli/options.h"

#include <chrono>

#include "catch2/catch.hpp"
#include "common/util/status.h"

namespace basalt::cli {
namespace {

absl::StatusOr<Options> Parse(std::vector<std::string> args) { return ParseOptions(args); }
std::string ErrorOf(std::vector<std::string> args) {
  absl::StatusOr<Options> o = ParseOptions(args);
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(MessageOf(o.status()));
}

TEST_CASE("vcctl options: job run takes Volcano's short and long flags", "[cli][options]") {
  absl::StatusOr<Options> o =
      Parse({"job", "run",   "-N", "train",   "-n", "team-a",        "-i", "nginx",
             "-m",  "2",     "-r", "4",       "-R", "cpu=2",         "-L", "cpu=4",
             "-S",  "other", "-k", "/tmp/kc", "-s", "https://h:6443"});
  REQUIRE(o.ok());
  CHECK(o->group == "job");
  CHECK(o->verb == "run");
  CHECK(o->name == "train");
  CHECK(o->namespace_name == "team-a");
  CHECK(o->image == "nginx");
  CHECK(o->min_available == 2);
  CHECK(o->replicas == 4);
  CHECK(o->requests == "cpu=2");
  CHECK(o->limits == "cpu=4");
  CHECK(o->scheduler == "other");
  CHECK(o->client.kubeconfig == "/tmp/kc");
  CHECK(o->client.master == "https://h:6443");

  absl::StatusOr<Options> l = Parse(
      {"job", "run", "--name=train", "--namespace=x", "--kubeconfig=/k", "--filename", "job.yaml"});
  REQUIRE(l.ok());
  CHECK(l->name == "train");
  CHECK(l->namespace_name == "x");
  CHECK(l->client.kubeconfig == "/k");
  CHECK(l->filename == "job.yaml");
}

TEST_CASE("vcctl options: job run defaults are Volcano's", "[cli][options]") {
  absl::StatusOr<Options> o = Parse({"job", "run", "-N", "j"});
  REQUIRE(o.ok());
  CHECK(o->image == "busybox");
  CHECK(o->min_available == 1);
  CHECK(o->replicas == 1);
  CHECK(o->requests == "cpu=1000m,memory=100Mi");
  CHECK(o->limits == "cpu=1000m,memory=100Mi");
  CHECK(o->scheduler == "volcano");
  CHECK(o->namespace_name.empty());  // the kubeconfig context's namespace
  CHECK_FALSE(o->wait);
}

TEST_CASE("vcctl options: --wait with --timeout and --logs", "[cli][options]") {
  absl::StatusOr<Options> o =
      Parse({"job", "run", "-f", "j.yaml", "--wait", "--timeout", "2h", "--logs", "worker"});
  REQUIRE(o.ok());
  CHECK(o->wait);
  CHECK(o->timeout == std::chrono::hours(2));
  CHECK(o->timeout_text == "2h");
  CHECK(o->logs_task == "worker");

  CHECK(ErrorOf({"job", "run", "-f", "j.yaml", "--timeout", "5m"})
            .find("--timeout and --logs need --wait") != std::string::npos);
  CHECK(ErrorOf({"job", "run", "-f", "j.yaml", "--wait", "--timeout", "soon"})
            .find("invalid value \"soon\" for flag --timeout") != std::string::npos);
}

TEST_CASE("vcctl options: a job command without a name names the missing flag", "[cli][options]") {
  CHECK(ErrorOf({"job", "view"}).find("job name (--name/-N) is mandatory to view a job") !=
        std::string::npos);
  CHECK(ErrorOf({"job", "suspend", "-n", "ns"}).find("mandatory to suspend") != std::string::npos);
  CHECK(ErrorOf({"job", "run"}).find("cannot be left blank") != std::string::npos);
  // A positional argument is the name.
  absl::StatusOr<Options> o = Parse({"job", "delete", "j1", "-n", "ns"});
  REQUIRE(o.ok());
  CHECK(o->name == "j1");
  CHECK(ErrorOf({"job", "list", "extra"}).find("unexpected argument \"extra\"") !=
        std::string::npos);
}

TEST_CASE("vcctl options: queue commands take -n as the queue name", "[cli][options]") {
  absl::StatusOr<Options> c = Parse({"queue", "create", "-n", "q1", "-w", "3", "-S", "Closed"});
  REQUIRE(c.ok());
  CHECK(c->name == "q1");
  CHECK(c->weight == 3);
  CHECK(c->state == "Closed");
  absl::StatusOr<Options> d = Parse({"queue", "create"});
  REQUIRE(d.ok());
  CHECK(d->name == "test");  // Volcano's default
  CHECK(d->weight == 1);
  CHECK(d->state == "Open");

  absl::StatusOr<Options> op = Parse({"queue", "operate", "-n", "q1", "-a", "close"});
  REQUIRE(op.ok());
  CHECK(op->action == "close");
  CHECK(ErrorOf({"queue", "operate", "-n", "q1"}).find("action (--action/-a) can not be null") !=
        std::string::npos);
  CHECK(ErrorOf({"queue", "operate", "-n", "q1", "-a", "drain"})
            .find("action drain invalid, valid actions are open, close and update") !=
        std::string::npos);
  CHECK(ErrorOf({"queue", "operate", "-n", "q1", "-a", "update"})
            .find("when update queue q1, weight must be specified") != std::string::npos);
  CHECK(ErrorOf({"queue", "get"}).find("queue name (--name/-n) is mandatory") != std::string::npos);
  CHECK(ErrorOf({"queue", "create", "-S", "Paused"}).find("--state must be Open or Closed") !=
        std::string::npos);
}

TEST_CASE("vcctl options: pod and podgroup list filters", "[cli][options]") {
  absl::StatusOr<Options> o = Parse({"pod", "list", "-j", "j1", "-q", "q1", "--all-namespaces"});
  REQUIRE(o.ok());
  CHECK(o->job == "j1");
  CHECK(o->queue == "q1");
  CHECK(o->all_namespaces);
  absl::StatusOr<Options> g = Parse({"podgroup", "list", "-n", "ns", "--job", "j2"});
  REQUIRE(g.ok());
  CHECK(g->namespace_name == "ns");
  CHECK(g->job == "j2");
  absl::StatusOr<Options> l = Parse({"job", "list", "-S", "volcano", "--selector", "bert"});
  REQUIRE(l.ok());
  CHECK(l->scheduler == "volcano");
  CHECK(l->selector == "bert");
  absl::StatusOr<Options> all = Parse({"job", "list"});
  REQUIRE(all.ok());
  CHECK(all->scheduler.empty());  // list filters on a scheduler only when asked
}

TEST_CASE("vcctl options: unknown commands and flags are usage errors with the usage",
          "[cli][options]") {
  std::string e = ErrorOf({"jobs", "list"});
  CHECK(e.find("unknown command \"jobs\"") != std::string::npos);
  CHECK(e.find("job run") != std::string::npos);
  e = ErrorOf({"job", "lsit"});
  CHECK(e.find("unknown command \"job lsit\"") != std::string::npos);
  CHECK(e.find("suspend") != std::string::npos);
  e = ErrorOf({"job", "list", "--bogus"});
  CHECK(e.find("unknown flag --bogus") != std::string::npos);
  CHECK(e.find("-n, --namespace") != std::string::npos);
  CHECK(ErrorOf({"queue"}).find("which command?") != std::string::npos);
}

TEST_CASE("vcctl options: --help prints the command's flags with their aliases", "[cli][options]") {
  absl::StatusOr<Options> o = Parse({"job", "run", "--help"});
  REQUIRE(o.ok());
  CHECK(o->help.find("Usage: vcctl job run [flags]") != std::string::npos);
  CHECK(o->help.find("-f, --filename value") != std::string::npos);
  CHECK(o->help.find("-N, --name value") != std::string::npos);
  CHECK(o->help.find("alias of") == std::string::npos);
  absl::StatusOr<Options> top = Parse({});
  REQUIRE(top.ok());
  CHECK(top->help.find("queue operate") != std::string::npos);
}

TEST_CASE("vcctl options: jobflow and jobtemplate create, get, delete take Volcano's flags",
          "[cli][options]") {
  absl::StatusOr<Options> c = Parse({"jobflow", "create", "-f", "flow.yaml"});
  REQUIRE(c.ok());
  CHECK(c->filename == "flow.yaml");
  c = Parse({"jobtemplate", "create", "--file=t.yaml"});
  REQUIRE(c.ok());
  CHECK(c->filename == "t.yaml");

  absl::StatusOr<Options> g = Parse({"jobflow", "get", "-N", "pipe", "-n", "ml", "-o", "yaml"});
  REQUIRE(g.ok());
  CHECK(g->name == "pipe");
  CHECK(g->namespace_name == "ml");
  CHECK(g->output == "yaml");
  g = Parse({"jobtemplate", "get", "tmpl", "--output", "json"});
  REQUIRE(g.ok());
  CHECK(g->name == "tmpl");

  absl::StatusOr<Options> d = Parse({"jobtemplate", "delete", "-N", "t", "-n", "ml"});
  REQUIRE(d.ok());
  CHECK(d->name == "t");
  d = Parse({"jobflow", "delete", "-f", "flow.yaml"});
  REQUIRE(d.ok());
  CHECK(d->filename == "flow.yaml");

  absl::StatusOr<Options> l = Parse({"jobflow", "list", "--all-namespaces"});
  REQUIRE(l.ok());
  CHECK(l->all_namespaces);
}

TEST_CASE("vcctl options: jobflow and jobtemplate refusals name the flag", "[cli][options]") {
  CHECK(ErrorOf({"jobtemplate", "describe", "-N", "t", "-o", "table"})
            .find("--format must be yaml or json, not \"table\"") == 0);
  CHECK(ErrorOf({"jobflow", "create"})
            .find("the file (--file/-f) is mandatory to create "
                  "jobflows") == 0);
  CHECK(ErrorOf({"jobtemplate", "get", "-n", "ml"})
            .find("name (--name/-N) is mandatory to get the particular job template details") == 0);
  CHECK(ErrorOf({"jobflow", "delete"})
            .find("jobflow name (--name/-N) or a file (--file/-f) must be specified") == 0);
  CHECK(ErrorOf({"jobflow", "delete", "-N", "a", "-f", "x.yaml"})
            .find("jobflow name (--name/-N) or a file (--file/-f) must be specified, not both") ==
        0);
  CHECK(ErrorOf({"jobflow", "get", "-N", "a", "-o", "wide"})
            .find("--output must be table, yaml or json, not \"wide\"") == 0);
  CHECK(ErrorOf({"jobflow", "create", "-f", "a.yaml", "extra"}).find("unexpected argument") == 0);
  CHECK(ErrorOf({"jobtemplate", "list", "-A"}).find("-A") != std::string::npos);
}

}  // namespace
}  // namespace basalt::cli
