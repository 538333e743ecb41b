#include "controllers/job/policy/delayed_actions.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace basalt::controllers {
namespace {

using std::chrono::seconds;

const Clock::TimePoint kT0{};

JobRequest Req(std::string task, std::string pod, Event event) {
  JobRequest r;
  r.task = std::move(task);
  r.pod = std::move(pod);
  r.event = event;
  return r;
}

ResolvedAction Delayed(Action a, int s) {
  ResolvedAction r;
  r.action = a;
  r.action_name = std::string(ActionName(a));
  r.delay = seconds(s);
  return r;
}

std::vector<std::string> Pods(const DelayedActions& d) {
  std::vector<std::string> out;
  for (const auto& a : d.pending()) out.push_back(a.pod + ":" + a.action.action_name);
  return out;
}

TEST_CASE("DelayedActions: armed once per pod and action, due in order",
          "[controllers][job][policy]") {
  DelayedActions d;
  CHECK(d.Arm(Req("w", "p1", Event::kPodPending), "u1", {}, Delayed(Action::kRestartJob, 60), kT0));
  CHECK_FALSE(d.Arm(Req("w", "p1", Event::kPodPending), "u1", {}, Delayed(Action::kRestartJob, 30),
                    kT0 + seconds(5)));
  CHECK(d.Arm(Req("w", "p2", Event::kPodFailed), "u2", {}, Delayed(Action::kRestartPod, 10), kT0));
  CHECK(d.NextDue() == kT0 + seconds(10));
  CHECK(d.TakeDue(kT0 + seconds(9)).empty());
  auto due = d.TakeDue(kT0 + seconds(60));
  REQUIRE(due.size() == 2);
  CHECK(due[0].pod == "p2");
  CHECK(due[1].pod == "p1");
  CHECK_FALSE(d.NextDue());
}

TEST_CASE("DelayedActions: later pod events cancel moot delays", "[controllers][job][policy]") {
  DelayedActions d;
  d.Arm(Req("w", "p1", Event::kPodPending), "u1", {}, Delayed(Action::kRestartJob, 60), kT0);
  d.Arm(Req("w", "p2", Event::kPodFailed), "u2", {}, Delayed(Action::kRestartPod, 60), kT0);
  d.Arm(Req("w", "p3", Event::kPodEvicted), "u3", {}, Delayed(Action::kAbortJob, 60), kT0);

  // Still pending: nothing changes. Another pod's events do not touch p1.
  d.OnPodEvent(Req("w", "p1", Event::kPodPending), "u1");
  d.OnPodEvent(Req("w", "p9", Event::kPodRunning), "u9");
  CHECK(d.pending().size() == 3);
  // A recreated pod (other UID) running does not cancel the old pod's PodPending delay.
  d.OnPodEvent(Req("w", "p1", Event::kPodRunning), "u1-new");
  CHECK(Pods(d) == std::vector<std::string>{"p1:RestartJob", "p2:RestartPod", "p3:AbortJob"});
  d.OnPodEvent(Req("w", "p1", Event::kPodRunning), "u1");
  CHECK(Pods(d) == std::vector<std::string>{"p2:RestartPod", "p3:AbortJob"});
  // PodRunning cancels PodFailed / PodEvicted delays of that pod.
  d.OnPodEvent(Req("w", "p2", Event::kPodRunning), "u2");
  d.OnPodEvent(Req("w", "p3", Event::kTaskCompleted), "u3");
  CHECK(Pods(d) == std::vector<std::string>{"p3:AbortJob"});
  d.OnPodEvent(Req("w", "p3", Event::kPodRunning), "u3");
  CHECK(d.pending().empty());
}

TEST_CASE("DelayedActions: an executed action cancels delays of its scope",
          "[controllers][job][policy]") {
  auto armed = [] {
    DelayedActions d;
    d.Arm(Req("a", "a-0", Event::kPodFailed), "", {}, Delayed(Action::kRestartJob, 60), kT0);
    d.Arm(Req("a", "a-1", Event::kPodFailed), "", {}, Delayed(Action::kAbortJob, 60), kT0);
    d.Arm(Req("a", "a-2", Event::kPodFailed), "", {}, Delayed(Action::kRestartTask, 60), kT0);
    d.Arm(Req("b", "b-0", Event::kPodFailed), "", {}, Delayed(Action::kRestartTask, 60), kT0);
    d.Arm(Req("b", "b-1", Event::kPodFailed), "", {}, Delayed(Action::kRestartPod, 60), kT0);
    d.Arm(Req("b", "b-2", Event::kPodFailed), "", 1, Delayed(Action::kRestartPartition, 60), kT0);
    return d;
  };
  struct Case {
    std::string name;
    Action action;
    JobRequest request;
    std::optional<int32_t> partition;
    std::vector<std::string> left;
  };
  const std::vector<Case> cases = {
      {"job scope",
       Action::kTerminateJob,
       Req("", "", Event::kNone),
       {},
       {"a-2:RestartTask", "b-0:RestartTask", "b-1:RestartPod", "b-2:RestartPartition"}},
      {"task scope",
       Action::kRestartTask,
       Req("b", "b-9", Event::kPodFailed),
       {},
       {"a-0:RestartJob", "a-1:AbortJob", "a-2:RestartTask", "b-1:RestartPod",
        "b-2:RestartPartition"}},
      {"pod scope",
       Action::kRestartPod,
       Req("b", "b-1", Event::kPodFailed),
       {},
       {"a-0:RestartJob", "a-1:AbortJob", "a-2:RestartTask", "b-0:RestartTask",
        "b-2:RestartPartition"}},
      {"partition scope",
       Action::kRestartPartition,
       Req("b", "b-3", Event::kPodFailed),
       1,
       {"a-0:RestartJob", "a-1:AbortJob", "a-2:RestartTask", "b-0:RestartTask", "b-1:RestartPod"}},
      {"internal actions cancel nothing",
       Action::kSyncJob,
       Req("", "", Event::kNone),
       {},
       {"a-0:RestartJob", "a-1:AbortJob", "a-2:RestartTask", "b-0:RestartTask", "b-1:RestartPod",
        "b-2:RestartPartition"}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    DelayedActions d = armed();
    d.OnActionExecuted(c.action, c.request, c.partition);
    CHECK(Pods(d) == c.left);
  }
}

}  // namespace
}  // namespace basalt::controllers
