#include "common/api/vocabulary.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <iterator>
#include <string>
#include <string_view>

namespace {

using basalt::api::Action;
using basalt::api::JobEvent;
using basalt::api::JobPhase;

TEST_CASE("Vocabulary: every job phase name parses back to its phase", "[api][vocabulary]") {
  for (JobPhase phase : basalt::api::kAllJobPhases) {
    CHECK(basalt::api::ParseJobPhase(basalt::api::JobPhaseName(phase)) == phase);
  }
  CHECK(basalt::api::ParseJobPhase("") == JobPhase::kPending);
  CHECK(basalt::api::ParseJobPhase("running") == JobPhase::kPending);
}

TEST_CASE("Vocabulary: action names parse back and unknown strings are kOther",
          "[api][vocabulary]") {
  for (Action action : basalt::api::kAllActions) {
    if (action == Action::kOther) continue;
    CHECK(basalt::api::ParseAction(basalt::api::ActionName(action)) == action);
  }
  CHECK(basalt::api::ParseAction("Unknown") == Action::kOther);
  CHECK(basalt::api::ParseAction("Explode") == Action::kOther);
  CHECK(basalt::api::ActionName(Action::kCloseQueue) == "CloseQueue");
}

TEST_CASE("Vocabulary: policies may name user events but not the internal ones",
          "[api][vocabulary]") {
  const auto& events = basalt::api::kPolicyEvents;
  for (JobEvent e : events) {
    CHECK(basalt::api::ParseEvent(basalt::api::EventName(e)) == e);
  }
  for (JobEvent internal :
       {JobEvent::kNone, JobEvent::kOutOfSync, JobEvent::kCommandIssued, JobEvent::kPodRunning}) {
    CHECK(std::find(std::begin(events), std::end(events), internal) == std::end(events));
  }
  CHECK(basalt::api::EventName(JobEvent::kAny) == "*");
  CHECK_FALSE(basalt::api::ParseEvent("PodExploded").has_value());
}

TEST_CASE("Vocabulary: policies may name job actions but not internal or queue actions",
          "[api][vocabulary]") {
  const auto& actions = basalt::api::kPolicyActions;
  for (Action internal : {Action::kSyncJob, Action::kEnqueueJob, Action::kSyncQueue,
                          Action::kOpenQueue, Action::kCloseQueue, Action::kOther}) {
    CHECK(std::find(std::begin(actions), std::end(actions), internal) == std::end(actions));
  }
  CHECK(std::size(actions) == 8);
}

TEST_CASE("Vocabulary: every Volcano job plugin is supported", "[api][vocabulary]") {
  const auto& supported = basalt::api::kJobPlugins;
  CHECK(std::is_sorted(std::begin(supported), std::end(supported)));
  for (std::string_view p : supported) CHECK(basalt::api::IsSupportedJobPlugin(p));
  for (std::string_view p :
       {"env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank"}) {
    CHECK(basalt::api::IsSupportedJobPlugin(p));
  }
  CHECK(std::size(supported) == 8);
  CHECK_FALSE(basalt::api::IsSupportedJobPlugin("horovod"));
}

TEST_CASE("Vocabulary: a PodGroup is admitted from Inqueue on", "[api][vocabulary]") {
  for (std::string_view phase : {"Inqueue", "Running", "Unknown", "Completed"}) {
    CHECK(basalt::api::IsPodGroupAdmitted(phase));
  }
  CHECK_FALSE(basalt::api::IsPodGroupAdmitted("Pending"));
  CHECK_FALSE(basalt::api::IsPodGroupAdmitted(""));
}

}  // namespace
