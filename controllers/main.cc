// vc-controller-manager: Basalt's controllers (job, queue, podgroup, gc, cronjob, jobflow) in one
// process, or any subset of them per process (--controllers), each a level-triggered reconcile loop
// over shared informers. With leader election (the default) the informers start and the controllers
// run only while this process holds the Lease named after its controller set. /readyz passes once
// the caches have synced; SIGTERM stops the workers, releases the Lease and exits.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/ctrlkit/default_queue.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/ctrlkit/leader_election.h"
#include "common/ctrlkit/work_queue_metrics.h"
#include "common/informer/informer_factory.h"
#include "common/runtime/flags.h"
#include "common/runtime/runner.h"
#include "common/runtime/version.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "common/util/stop.h"
#include "controllers/app/controller.h"
#include "controllers/app/reconcile_loop.h"
#include "controllers/job/validate/validate.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace basalt::controllers {
namespace {

constexpr char kComponent[] = "vc-controller-manager";

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  runtime::RuntimeOptions runtime_options;
  if (std::optional<int> exit = runtime::HandleRuntimeFlags(kComponent, args, &runtime_options)) {
    return *exit;
  }
  ctrlkit::LeaderElectionFlags le_flags;
  if (std::optional<int> exit = runtime::TakeFlags(kComponent, args, &le_flags)) return *exit;

  client::FlagSet flags(kComponent);
  client::ClientOptions client_options;
  client_options.AddFlags(flags);
  std::vector<std::string> requested = {"*"};
  int workers = 8;
  int max_requeue_num = 15;
  int64_t max_job_pods = kDefaultMaxJobPods;
  std::vector<std::string> scheduler_names = {"volcano"};
  bool create_default_queue = true;
  bool bare_pod_podgroups = true;
  std::string hypernode_discovery_config;
  flags.StringList("controllers", &requested,
                   "controllers to run: comma-separated subset of "
                   "cronjob,gc,hypernode,job,jobflow,podgroup,queue "
                   "('*' = all)");
  flags.Int("worker-threads", &workers,
            "workers per controller (job; podgroup twice as many, others fewer)");
  flags.Int("max-requeue-num", &max_requeue_num,
            "rate-limited retries of a failing job before it is dropped until its next event "
            "(-1 = unlimited)");
  flags.Int64("max-job-pods", &max_job_pods,
              fmt::format("a Job with more pods (replicas summed over its tasks) gets no pods and "
                          "a Warning saying so (default {})",
                          kDefaultMaxJobPods));
  flags.StringList("scheduler-name", &scheduler_names,
                   "pods of these schedulers without a PodGroup get one (podgroup controller)");
  flags.Bool("bare-pod-podgroups", &bare_pod_podgroups,
             "make a PodGroup for bare pods (no controller owner) that declare no gang, as "
             "Volcano does; false: leave them to the scheduler's shadow job (no PodGroup, no "
             "annotation)");
  flags.String("hypernode-discovery-config", &hypernode_discovery_config,
               "volcano-controller.conf with a networkTopologyDiscovery section: the hypernode "
               "controller discovers HyperNodes from node labels (empty: no discovery)");
  flags.Bool("create-default-queue", &create_default_queue,
             "create the 'default' queue at start-up if it is missing");
  if (std::optional<int> exit = runtime::HandleBinaryFlags(kComponent, flags, args,
                                                           ctrlkit::LeaderElectionFlagsUsage())) {
    return *exit;
  }
  if (absl::Status s = runtime::FirstError({
          runtime::CheckAtLeast("worker-threads", workers, 1),
          runtime::CheckAtLeast("max-requeue-num", max_requeue_num, -1),  // -1: unlimited
          runtime::CheckAtLeast("max-job-pods", max_job_pods, 1),
      });
      !s.ok()) {
    return runtime::UsageError(kComponent, MessageOf(s));
  }
  const auto registry = NewControllerRegistry();
  std::vector<std::string> known;
  for (const auto& [name, factory] : registry) known.push_back(name);
  absl::StatusOr<std::vector<std::string>> enabled = ResolveControllers(requested, known);
  if (!enabled.ok()) {
    return runtime::UsageError(kComponent,
                               fmt::format("--controllers: {}", MessageOf(enabled.status())));
  }
  // Without a discovery config the hypernode controller has nothing to do: "*" leaves it out
  // then, so the default set (and its Lease name) is what it was; naming it runs it anyway.
  if (hypernode_discovery_config.empty() &&
      std::find(requested.begin(), requested.end(), "hypernode") == requested.end()) {
    std::erase(*enabled, std::string("hypernode"));
  }

  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::FromOptions(client_options);
  if (!client.ok()) {
    BASALT_LOG_ERROR("Cannot configure the API client", "error", MessageOf(client.status()));
    return 1;
  }
  informer::SharedInformerFactory factory(client->get());
  ctrlkit::EventRecorderOptions recorder_options;
  recorder_options.component = kComponent;
  ctrlkit::EventRecorder recorder(client->get(), std::move(recorder_options));
  runtime::Runner runner(kComponent, runtime_options);
  ReconcileMetrics metrics(*runner.metrics_registry());
  ctrlkit::WorkQueueMetrics queue_metrics(*runner.metrics_registry());

  ControllerContext ctx;
  ctx.client = client->get();
  ctx.informers = &factory;
  ctx.recorder = &recorder;
  ctx.metrics = &metrics;
  ctx.queue_metrics = &queue_metrics;
  ctx.metrics_registry = runner.metrics_registry().get();
  ctx.workers = workers;
  ctx.max_requeue_num = max_requeue_num;
  ctx.max_job_pods = max_job_pods;
  ctx.scheduler_names = scheduler_names;
  ctx.bare_pod_podgroups = bare_pod_podgroups;
  ctx.hypernode_discovery_config = hypernode_discovery_config;
  std::vector<std::unique_ptr<Controller>> controllers;
  for (const std::string& name : *enabled) {
    absl::StatusOr<std::unique_ptr<Controller>> c = registry.at(name)(ctx);
    if (!c.ok()) {
      BASALT_LOG_ERROR("Cannot create controller", "controller", name, "error",
                       MessageOf(c.status()));
      return 1;
    }
    controllers.push_back(*std::move(c));
  }
  BASALT_LOG_INFO("Starting", "version", runtime::VersionLine(kComponent), "controllers",
                  fmt::format("{}", fmt::join(*enabled, ",")), "workers", workers, "leader_elect",
                  le_flags.leader_elect);

  std::atomic<bool> running{false};
  auto run_controllers = [&](std::stop_token stop) {
    factory.Start();
    if (!factory.WaitForCacheSync(stop, std::chrono::minutes(5))) {
      if (!stop.stop_requested()) {
        BASALT_LOG_ERROR("Caches did not sync within 5 minutes");
        runner.RequestStop();
      }
      return;
    }
    BASALT_LOG_INFO("Caches synced");
    // In the background: the controllers need not wait for the webhook to admit the create.
    std::jthread default_queue;
    if (create_default_queue) {
      default_queue = std::jthread(
          [&](std::stop_token st) { ctrlkit::EnsureDefaultQueueWithRetry(st, **client); });
    }
    running = true;
    std::vector<std::jthread> threads;
    for (auto& c : controllers) {
      Controller* raw = c.get();
      threads.emplace_back([raw, stop] { raw->Run(stop); });
    }
    for (auto& t : threads) t.join();
    running = false;
    BASALT_LOG_INFO("Controllers stopped");
  };

  std::unique_ptr<client::Client> le_client;  // outlives the elector (declared first)
  std::unique_ptr<ctrlkit::LeaderElector> elector;
  if (le_flags.leader_elect) {
    ctrlkit::LeaderElectionConfig config;
    ctrlkit::LeaderElectionFlags f = le_flags;
    if (f.resource_name.empty()) f.resource_name = LeaseNameFor(*enabled);
    f.ApplyTo(config);
    config.callbacks.on_started_leading = run_controllers;
    config.callbacks.on_new_leader = [](const std::string& id) {
      BASALT_LOG_INFO("Leader observed", "identity", id);
    };
    // Its own client (connection pool and rate limiter), as kube-controller-manager does: on
    // the workers' client (the controllers' default is QPS 50, burst 100), a burst of writes
    // after an API server restart can queue the renewals behind it past the renew deadline
    // (the chaos suite's leaders missed theirs 20-40 s after a restart at load ~20).
    absl::StatusOr<std::unique_ptr<client::Client>> le =
        client::Client::FromOptions(client_options);
    if (!le.ok()) {
      BASALT_LOG_ERROR("Cannot configure the leader election client", "error",
                       MessageOf(le.status()));
      return 1;
    }
    le_client = *std::move(le);
    absl::StatusOr<std::unique_ptr<ctrlkit::LeaderElector>> e =
        ctrlkit::LeaderElector::New(le_client.get(), std::move(config));
    if (!e.ok()) {
      BASALT_LOG_ERROR("Invalid leader election settings", "error", MessageOf(e.status()));
      return 2;
    }
    elector = *std::move(e);
    BASALT_LOG_INFO("Campaigning for leadership", "lease",
                    fmt::format("{}/{}", f.resource_namespace, f.resource_name), "identity",
                    elector->identity());
    runner.health().AddHealthzCheck("leader-election", [&] { return elector->Check(); });
    runner.AddRunnable("leader-election", [&](std::stop_token stop) { return elector->Run(stop); });
  } else {
    runner.AddRunnable("controllers", [&](std::stop_token stop) {
      run_controllers(stop);
      return absl::OkStatus();
    });
  }
  runner.health().AddReadyzCheck("informers", [&]() -> absl::Status {
    if (elector && !elector->IsLeader()) return absl::OkStatus();  // standby replica
    std::vector<std::string> unsynced;
    for (const auto& c : controllers) {
      if (!c->HasSynced()) unsynced.emplace_back(c->Name());
    }
    if (!unsynced.empty()) {
      return absl::UnavailableError(
          fmt::format("caches not synced for: {}", fmt::join(unsynced, ",")));
    }
    if (!running.load()) return absl::UnavailableError("controllers not started");
    return absl::OkStatus();
  });
  runner.AddComponent(
      "informers", [] { return absl::OkStatus(); }, [&factory] { factory.Shutdown(); });

  absl::Status s = runner.Run();
  recorder.Shutdown();
  return runtime::ExitCode(s);
}

}  // namespace
}  // namespace basalt::controllers

int main(int argc, char** argv) { return basalt::controllers::Main(argc, argv); }
