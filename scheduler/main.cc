// vc-scheduler: Basalt's gang scheduler (Volcano-compatible flags, config file and behaviour).
//
// Start-up: flags -> API client -> informers feeding the ClusterState -> (leader election) ->
// wait for the caches -> ensure the default queue -> scheduling loop. The config file is
// re-read every second. /readyz passes once the caches have synced. SIGTERM stops the loop,
// finishes the binds and status writes in flight, flushes events and exits.

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/ctrlkit/default_queue.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/ctrlkit/leader_election.h"
#include "common/informer/informer_factory.h"
#include "common/runtime/flags.h"
#include "common/runtime/runner.h"
#include "common/runtime/version.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/actions/registry.h"
#include "scheduler/app/options.h"
#include "scheduler/app/scheduler.h"
#include "scheduler/cache/binder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/evictor.h"
#include "scheduler/cache/informers.h"
#include "scheduler/cache/status_writer.h"
#include "scheduler/framework/config_store.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sched::app {
namespace {

constexpr char kComponent[] = "vc-scheduler";

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  runtime::RuntimeOptions runtime_options;
  if (std::optional<int> exit = runtime::HandleRuntimeFlags(kComponent, args, &runtime_options)) {
    return *exit;
  }
  ctrlkit::LeaderElectionFlags le_flags;
  if (std::optional<int> exit = runtime::TakeFlags(kComponent, args, &le_flags)) return *exit;
  SchedulerOptions options;
  client::FlagSet flags(kComponent);
  client::ClientOptions client_options;
  // A scheduler binds and patches in bursts; Volcano's defaults are 2000/2000.
  client_options.kube_api_qps = 2000;
  client_options.kube_api_burst = 2000;
  client_options.AddFlags(flags);
  options.AddFlags(flags);
  if (std::optional<int> exit = runtime::HandleBinaryFlags(kComponent, flags, args,
                                                           ctrlkit::LeaderElectionFlagsUsage())) {
    return *exit;
  }
  if (absl::Status s = options.Finish(); !s.ok()) {
    return runtime::UsageError(kComponent, MessageOf(s));
  }
  if (le_flags.resource_name.empty()) {
    // Volcano names the Lease after the scheduler ("volcano" when there are several names).
    le_flags.resource_name =
        options.scheduler_names.size() == 1 ? options.scheduler_names[0] : "volcano";
  }
  if (!options.node_selector.empty()) {
    BASALT_LOG_INFO("Ignoring the node selector flag (see docs/scheduler.md)");
  }

  // Everything the process owns; the Runner (declared last) is destroyed first.
  const PluginRegistry plugins = NewInTreeRegistry();
  const ActionRegistry actions = NewInTreeActionRegistry();
  ConfigStore config(&plugins, &actions);
  std::mutex config_mu;  // see LoopDeps::config_mu
  std::string initial_conf;
  if (!options.scheduler_conf.empty()) {
    absl::StatusOr<std::string> text = ReadFile(options.scheduler_conf);
    absl::Status s = text.ok() ? config.Reload(*text) : text.status();
    if (s.ok()) {
      initial_conf = *std::move(text);
      BASALT_LOG_INFO("Loaded the scheduler configuration", "path", options.scheduler_conf);
    } else {
      // As Volcano: an unreadable or invalid file at start leaves the built-in default in force.
      BASALT_LOG_ERROR("Cannot load the scheduler configuration; using the built-in default",
                       "path", options.scheduler_conf, "error", MessageOf(s));
    }
  }
  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::FromOptions(client_options);
  if (!client.ok()) {
    BASALT_LOG_ERROR("Cannot configure the API client", "error", MessageOf(client.status()));
    return 1;
  }
  // The one source of time for the cache, the loop and the writers (the seam tests replace).
  Clock* const clock = Clock::Real();
  cache::ClusterStateOptions state_options;
  state_options.clock = clock;
  state_options.scheduler_names.insert(options.scheduler_names.begin(),
                                       options.scheduler_names.end());
  state_options.default_queue = options.default_queue;
  cache::ClusterState state(std::move(state_options));
  informer::SharedInformerFactory factory(client->get());
  // HyperNodes only where their CRD is installed (a cluster with Volcano's older CRDs, or none,
  // must not wait forever for an informer that cannot list): a 404 now leaves them out.
  cache::InformerSet informer_set;
  client::ListOptions probe;
  probe.limit = 1;
  if (absl::StatusOr<client::ObjectList> hn = client->get()->List(client::HyperNodes(), "", probe);
      !hn.ok() && absl::IsNotFound(hn.status())) {
    BASALT_LOG_WARNING(
        "No HyperNode CRD (topology.volcano.sh/v1alpha1): network-topology-aware sees no "
        "HyperNodes until the scheduler restarts with it installed");
    informer_set.hypernodes = false;
  }
  std::vector<const informer::SharedInformer*> informers =
      cache::RegisterInformers(&factory, &state, informer_set);

  runtime::Runner runner(kComponent, runtime_options);
  SchedulerMetrics metrics(*runner.metrics_registry());
  metrics.ObserveConfig(config.Current());
  ctrlkit::EventRecorderOptions recorder_options;
  recorder_options.component = kComponent;
  ctrlkit::EventRecorder recorder(client->get(), std::move(recorder_options));
  cache::ApiBinder binder(
      client->get(), &state, &recorder, options.bind_workers,
      [&metrics](const cache::BindResult& r) { metrics.ObserveBind(r); }, clock,
      options.bare_pod_podgroups);
  cache::ApiStatusWriter status_writer(client->get(), &state, &recorder, options.status_workers,
                                       runner.metrics_registry().get(), clock);
  cache::ApiEvictor evictor(client->get(), &state, &recorder,
                            cache::ApiEvictorOptions{options.scheduler_names[0], clock});
  BASALT_LOG_INFO("Starting", "version", runtime::VersionLine(kComponent), "schedulerNames",
                  fmt::format("{}", fmt::join(options.scheduler_names, ",")), "period",
                  options.schedule_period, "leaderElect", le_flags.leader_elect);

  runner.health().AddReadyzCheck("informers", [&informers]() -> absl::Status {
    for (const informer::SharedInformer* i : informers) {
      if (!i->HasSynced()) {
        return absl::UnavailableError(
            fmt::format("cache of {} not synced", i->options().source.resource.resource));
      }
    }
    return absl::OkStatus();
  });
  runner.AddComponent(
      "informers",
      [&factory] {
        factory.Start();
        return absl::OkStatus();
      },
      [&factory] { factory.Shutdown(); });
  runner.AddComponent(
      "events", [] { return absl::OkStatus(); }, [&recorder] { recorder.Shutdown(); });
  runner.AddComponent(
      "binder", [] { return absl::OkStatus(); }, [&binder] { binder.Shutdown(); });
  runner.AddComponent(
      "evictor", [] { return absl::OkStatus(); }, [&evictor] { evictor.Shutdown(); });
  runner.AddComponent(
      "status-writer", [] { return absl::OkStatus(); },
      [&status_writer] { status_writer.Shutdown(); });
  if (!options.scheduler_conf.empty()) {
    runner.AddRunnable("config-watcher", [&](std::stop_token stop) {
      return RunConfigWatcher(stop, options.scheduler_conf, &config, &config_mu, &state, &metrics,
                              std::chrono::seconds(1), initial_conf, clock);
    });
  }

  // Lives across cycles: the rotating start index of the allocate action's node sampling.
  NodeSampler node_sampler(NodeSamplingOptions{options.percentage_nodes_to_find,
                                               options.minimum_feasible_nodes,
                                               options.minimum_percentage_nodes_to_find});
  LoopDeps loop;
  loop.state = &state;
  loop.config = &config;
  loop.config_mu = &config_mu;
  loop.cycle = CycleDeps{&plugins, &actions, &binder, &evictor, &status_writer, &node_sampler};
  loop.metrics = &metrics;
  loop.period = options.period;
  loop.arrival_delay = options.arrival_delay;
  loop.clock = clock;
  auto schedule = [&](std::stop_token stop) -> absl::Status {
    if (!informer::WaitForCacheSync(stop, std::chrono::minutes(5), informers)) {
      if (stop.stop_requested()) return absl::OkStatus();
      return absl::DeadlineExceededError("informer caches did not sync within 5 minutes");
    }
    BASALT_LOG_INFO("Caches synced; scheduling");
    // Volcano's own PodGroup CRD has no status subresource: find out how to write status before
    // the first cycle (an error keeps /status; a 404 there asks again).
    (void)status_writer.DetectPodGroupStatusSubresource();
    // In the background, retried until the webhook admits it (Volcano's scheduler creates it
    // too); PodGroups in a missing queue just wait.
    std::jthread default_queue([&](std::stop_token st) {
      ctrlkit::EnsureDefaultQueueWithRetry(st, **client, options.default_queue);
    });
    return RunSchedulingLoop(stop, loop);
  };

  std::unique_ptr<client::Client> le_client;  // outlives the elector (declared first)
  std::unique_ptr<ctrlkit::LeaderElector> elector;
  if (le_flags.leader_elect) {
    ctrlkit::LeaderElectionConfig le_config;
    le_flags.ApplyTo(le_config);
    // le_config ends with this block: the callback keeps its own copy of the lease's name.
    le_config.callbacks.on_started_leading =
        [&, lease = le_config.lease_namespace + "/" + le_config.lease_name](std::stop_token stop) {
          BASALT_LOG_INFO("Leading; starting the scheduling loop", "lease", lease);
          if (absl::Status s = schedule(stop); !s.ok()) {
            BASALT_LOG_ERROR("Scheduling loop failed", "error", MessageOf(s));
            runner.RequestStop();
          }
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
        ctrlkit::LeaderElector::New(le_client.get(), le_config);
    if (!e.ok()) {
      BASALT_LOG_ERROR("Invalid leader election settings", "error", MessageOf(e.status()));
      return 2;
    }
    elector = *std::move(e);
    runner.health().AddHealthzCheck("leader-election", [&elector] { return elector->Check(); });
    runner.AddRunnable("leader-election",
                       [&elector](std::stop_token stop) { return elector->Run(stop); });
  } else {
    runner.AddRunnable("scheduler", schedule);
  }

  return runtime::ExitCode(runner.Run());
}

}  // namespace
}  // namespace basalt::sched::app

int main(int argc, char** argv) { return basalt::sched::app::Main(argc, argv); }
