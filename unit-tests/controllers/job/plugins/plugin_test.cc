#include "controllers/job/plugins/plugin.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;

struct Flags {
  std::string s = "default";
  int64_t i = 7;
  bool b = false;
  bool t = true;
};

absl::Status ParseInto(Flags& f, const std::vector<std::string>& args) {
  FlagSet set("test");
  set.String("str", &f.s);
  set.Int("num", &f.i);
  set.Bool("flag", &f.b);
  set.Bool("on", &f.t);
  return set.Parse(args);
}

TEST_CASE("JobPlugin: arguments parse like Go flags", "[controllers][job][plugins]") {
  struct Case {
    std::vector<std::string> args;
    std::string s;
    int64_t i;
    bool b;
    bool t;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "default", 7, false, true},
           {{"--str=x", "--num=3"}, "x", 3, false, true},
           {{"-str=y", "-num", "4"}, "y", 4, false, true},
           {{"--str", "z=1"}, "z=1", 7, false, true},
           {{"--flag"}, "default", 7, true, true},
           {{"--flag=true", "--on=false"}, "default", 7, true, false},
           {{"-on=0", "-flag=1"}, "default", 7, true, false},
           {{"--num=5", "positional", "--str=ignored"}, "default", 5, false, true},
           {{"--", "--str=ignored"}, "default", 7, false, true},
           {{"--str="}, "", 7, false, true},
       }) {
    INFO(c.args.size());
    Flags f;
    REQUIRE(ParseInto(f, c.args).ok());
    CHECK(f.s == c.s);
    CHECK(f.i == c.i);
    CHECK(f.b == c.b);
    CHECK(f.t == c.t);
  }
}

TEST_CASE("JobPlugin: bad arguments name the plugin and the flag", "[controllers][job][plugins]") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--nope=1"}, {"--num=abc"}, {"--num"}, {"--flag=maybe"}, {"---str=x"}}) {
    INFO(args[0]);
    Flags f;
    absl::Status s = ParseInto(f, args);
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()).rfind("plugin test: ", 0) == 0);
  }
}

TEST_CASE("JobPlugin: task hosts use the pod name or the template hostname",
          "[controllers][job][plugins]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("worker").Replicas(2))
                     .Task(MakeTask("ps").Replicas(3).Hostname("ps-host").Subdomain("sub"))
                     .Task(MakeTask("none").Replicas(0))
                     .ControlledResource("plugin-svc", "svc")
                     .Build();
  CHECK(TaskHosts(job, job.spec().tasks[0]) ==
        std::vector<std::string>{"j-worker-0.j", "j-worker-1.j"});
  CHECK(TaskHosts(job, job.spec().tasks[1]) == std::vector<std::string>{"ps-host.sub"});
  CHECK(TaskHosts(job, job.spec().tasks[2]).empty());
  CHECK(ControlledResourceKey("svc") == "plugin-svc");
  CHECK_FALSE(NeedsOnJobAdd(job, "svc"));
  CHECK(NeedsOnJobAdd(job, "ssh"));
}

}  // namespace
}  // namespace basalt::controllers
