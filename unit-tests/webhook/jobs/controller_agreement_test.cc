// The webhook admits exactly what the job controller implements: every job plugin, lifecycle
// policy event and action a Job may name at admission is one the controller's plugin registry,
// policy resolver and phase table handle. A Job admitted otherwise would be stuck (PluginError)
// or have a policy that never fires.

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/api/vocabulary.h"
#include "common/util/json.h"
#include "controllers/job/model.h"
#include "controllers/job/plugins/registry.h"
#include "controllers/job/policy/policy.h"
#include "controllers/job/state/state.h"
#include "fmt/format.h"
#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"
#include "webhook/jobs/policies.h"
#include "webhook/jobs/validate_job.h"

namespace basalt::webhook {
namespace {

using testing::JsonBuilder;
using testing::MutatedBertJob;

ErrorList Validate(const std::string& job) {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  json::Document doc = *json::Parse(job);
  return ValidateJobCreate(doc, lister);
}

// The bert job with spec.plugins {name: args}; mpi's master is the job's only task.
std::string JobWithPlugin(std::string_view name) {
  // The bert job has a single task, worker: mpi and ray must be told it is their master/head.
  std::string args = name == api::kMpiPlugin   ? R"(["--master=worker"])"
                     : name == api::kRayPlugin ? R"(["--head=worker"])"
                                               : "[]";
  return MutatedBertJob().Set("/spec/plugins", fmt::format(R"({{"{}":{}}})", name, args));
}

TEST_CASE("Webhook and job controller: a plugin is admitted exactly when the registry has it",
          "[webhook][jobs][agreement]") {
  const controllers::JobPluginRegistry registry = controllers::NewJobPluginRegistry();
  const std::vector<std::string> registered = registry.Names();
  std::set<std::string> candidates(KnownJobPlugins().begin(), KnownJobPlugins().end());
  candidates.insert(registered.begin(), registered.end());
  candidates.insert("horovod");
  for (const std::string& name : candidates) {
    INFO("plugin " << name);
    ErrorList errors = Validate(JobWithPlugin(name));
    INFO(errors.Message());
    CHECK(errors.empty() == registry.Has(name));
    if (registry.Has(name)) {
      CHECK(registry
                .Create(name, name == api::kMpiPlugin ? std::vector<std::string>{"--master=worker"}
                              : name == api::kRayPlugin ? std::vector<std::string>{"--head=worker"}
                                                        : std::vector<std::string>{})
                .ok());
    }
  }
  CHECK(std::set<std::string>(KnownJobPlugins().begin(), KnownJobPlugins().end()) ==
        std::set<std::string>(registered.begin(), registered.end()));
}

TEST_CASE("Webhook: the ray plugin needs its head task", "[webhook][jobs][agreement]") {
  ErrorList errors = Validate(MutatedBertJob().Set("/spec/plugins", R"({"ray":[],"svc":[]})"));
  CHECK(errors.Message() ==
        "spec.plugins[ray]: the ray head task was not found (no task named \"head\")");
  CHECK(Validate(MutatedBertJob().Set("/spec/plugins", R"({"ray":["--head=worker"],"svc":[]})"))
            .empty());
}

// The bert job with one job-level policy, as the user writes it.
std::string JobWithPolicy(std::string_view policy) {
  return MutatedBertJob().Set("/spec/policies", fmt::format("[{}]", policy));
}

TEST_CASE("Webhook and job controller: every admitted policy action is executed",
          "[webhook][jobs][agreement]") {
  for (api::Action action : api::kAllActions) {
    std::string name(api::ActionName(action));
    INFO("action " << name);
    std::string job = JobWithPolicy(fmt::format(R"({{"event":"PodFailed","action":"{}"}})", name));
    if (!Validate(job).empty()) continue;
    // Admitted: the controller parses the same document into a policy that resolves to this
    // action, and its phase table has a row for it.
    auto view = api::Job::Parse(job);
    REQUIRE(view.ok());
    controllers::JobRequest request;
    request.task = "worker";
    request.pod = "bert-pretrain-worker-0";
    request.event = controllers::Event::kPodFailed;
    request.exit_code = 1;
    controllers::ResolvedAction resolved = controllers::ResolvePolicy(*view, request);
    CHECK(resolved.source == controllers::PolicySource::kJobPolicy);
    CHECK(resolved.action == action);
    CHECK(resolved.action != api::Action::kOther);
    CHECK(controllers::HandlesAction(action));
  }
  // What the webhook lists to users is what it admits.
  std::vector<std::string> admitted;
  for (api::Action action : api::kAllActions) {
    std::string name(api::ActionName(action));
    if (Validate(JobWithPolicy(fmt::format(R"({{"event":"PodFailed","action":"{}"}})", name)))
            .empty()) {
      admitted.push_back(name);
    }
  }
  CHECK(admitted == ValidPolicyActions());
}

TEST_CASE("Webhook and job controller: every admitted policy event matches its requests",
          "[webhook][jobs][agreement]") {
  std::vector<api::JobEvent> all = {
      api::JobEvent::kAny,           api::JobEvent::kPodFailed,  api::JobEvent::kPodEvicted,
      api::JobEvent::kPodPending,    api::JobEvent::kPodRunning, api::JobEvent::kUnknown,
      api::JobEvent::kTaskCompleted, api::JobEvent::kTaskFailed, api::JobEvent::kOutOfSync,
      api::JobEvent::kCommandIssued, api::JobEvent::kJobUpdated};
  std::vector<std::string> admitted;
  for (api::JobEvent event : all) {
    std::string name(api::EventName(event));
    INFO("event " << name);
    // PodPending only counts with a timeout; the timeout does not change admission.
    std::string job = JobWithPolicy(
        fmt::format(R"({{"event":"{}","action":"RestartJob","timeout":"1m"}})", name));
    if (!Validate(job).empty()) continue;
    admitted.push_back(name);
    auto view = api::Job::Parse(job);
    REQUIRE(view.ok());
    controllers::JobRequest request;
    request.task = "worker";
    request.pod = "bert-pretrain-worker-0";
    // "*" matches any event the controller raises; take PodFailed.
    request.event = event == api::JobEvent::kAny ? controllers::Event::kPodFailed : event;
    controllers::ResolvedAction resolved = controllers::ResolvePolicy(*view, request);
    CHECK(resolved.source == controllers::PolicySource::kJobPolicy);
    CHECK(resolved.action == api::Action::kRestartJob);
  }
  CHECK(admitted == ValidPolicyEvents());
}

}  // namespace
}  // namespace basalt::webhook
