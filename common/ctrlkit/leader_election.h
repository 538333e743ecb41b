#pragma once
// LeaderElector makes one process of several replicas the active one, through a
// coordination.k8s.io/v1 Lease, with the semantics of client-go's leaderelection package:
//
//  - Acquire: create the Lease if it is absent, or take it over once the holder stopped
//    renewing it for the lease duration (holder empty, i.e. released: at once). A takeover
//    sets acquireTime and increments leaseTransitions.
//  - Renew: the leader rewrites renewTime every retry period. Every write is a PUT carrying the
//    resourceVersion that was read, so two candidates racing for the Lease cannot both win:
//    the loser gets 409 Conflict.
//  - Expiry is judged on the local monotonic clock: a candidate starts the lease duration when
//    it *observes* the record change, never from the remote renewTime, so skew between the
//    machines' wall clocks cannot make a candidate take over early.
//  - Safety: a leader that has not renewed successfully for renew_deadline (< lease_duration)
//    stops acting — its stop_token is signalled and on_stopped_leading is called — by a
//    watchdog that does not wait for the hung request. Others cannot take the Lease over until
//    lease_duration after they last saw it renewed, which is after our last successful write
//    was sent, so we stop before any successor may start.
//  - Release: when Run()'s stop_token fires and release_on_cancel is set, the leader first
//    stops acting (joins its on_started_leading thread), then writes an empty holderIdentity
//    with leaseDurationSeconds 1, so a successor takes over on its next retry.
//
// Wiring in a binary (common/runtime/runner.h):
//
//   LeaderElectionConfig config;
//   config.lease_namespace = "volcano-system";
//   config.lease_name = "vc-controller-manager";
//   config.callbacks.on_started_leading = [&](std::stop_token stop) { RunControllers(stop); };
//   BASALT_ASSIGN_OR_RETURN(auto elector, LeaderElector::New(client.get(), std::move(config)));
//   runner.health().AddHealthzCheck("leader-election", [&] { return elector->Check(); });
//   runner.AddRunnable("leader-election", [&](std::stop_token s) { return elector->Run(s); });
//
// Run() returns kAborted when leadership is lost, which makes the Runner shut the process
// down: a replica that lost the Lease restarts as a candidate with fresh caches, as
// client-go-based controllers do (they exit in OnStoppedLeading).
//
// Thread-safety: Run() once, from one thread; IsLeader(), leader(), Check() from any thread.
// Ownership: the Client and the Clock must outlive the elector; Run() must have returned
// before the elector is destroyed. The elector owns the leader-callback and watchdog threads.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/core.h"
#include "common/client/client.h"
#include "common/util/clock.h"
#include "common/util/flags.h"

namespace basalt::ctrlkit {

struct LeaderCallbacks {
  // Runs on a thread of its own once the Lease is acquired. It should keep working until
  // `stop` fires (lost lease or shutdown) and then return promptly: Run() joins it before it
  // releases the Lease. Required.
  std::function<void(std::stop_token stop)> on_started_leading;
  // Called once after the elector stopped leading (lost the Lease or shutting down), after
  // the stop_token of on_started_leading was signalled. May run on the watchdog thread.
  // Unlike client-go, not called when this candidate never led. Optional.
  std::function<void()> on_stopped_leading;
  // Called on the elector thread when the observed holder changes (including to ourselves
  // and to "" when the Lease was released). Must not block. Optional.
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  // Unique per replica; empty means DefaultLeaderIdentity().
  std::string identity;
  // How long non-leaders wait after last observing a renewal before taking over. Written to
  // the Lease as whole seconds (rounded up).
  Clock::Duration lease_duration = std::chrono::seconds(15);
  // How long the leader keeps acting without a successful renewal. < lease_duration.
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  // Time between attempts to acquire or renew.
  Clock::Duration retry_period = std::chrono::seconds(2);
  // Acquire attempts wait retry_period * (1 + rand[0, jitter_factor)) so candidates spread.
  double jitter_factor = 1.2;
  // On shutdown, release the Lease so a successor does not wait for it to expire.
  bool release_on_cancel = true;
  // Bound of each API request (0: renew_deadline / 2, at most the transport's default).
  Clock::Duration request_timeout{0};
  LeaderCallbacks callbacks;
  // nullptr means Clock::Real().
  Clock* clock = nullptr;
};

// kInvalidArgument unless: namespace, name and on_started_leading are set; every duration is
// positive; lease_duration >= 1s and > renew_deadline; renew_deadline >
// jitter_factor * retry_period (as client-go requires).
absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& config);

// "<hostname>_<random UUID>", unique per process, as client-go-based components use.
std::string DefaultLeaderIdentity();

class LeaderElector {
 public:
  // Validates `config` (see ValidateLeaderElectionConfig). `client` must outlive the elector.
  static absl::StatusOr<std::unique_ptr<LeaderElector>> New(client::Client* client,
                                                            LeaderElectionConfig config);
  ~LeaderElector();

  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Campaigns until the Lease is acquired, then leads until `stop` fires (returns OK after
  // stopping the leader callback and, with release_on_cancel, releasing the Lease) or until a
  // renewal misses the renew deadline (returns kAborted). Call once.
  absl::Status Run(std::stop_token stop);

  // True between acquiring the Lease and stopping acting.
  bool IsLeader() const;
  // The holder identity last observed in the Lease ("" if none or not yet read).
  std::string leader() const;
  const std::string& identity() const { return identity_; }

  // Liveness: fails when this replica leads, or its on_started_leading callback still runs,
  // and the Lease has not been renewed for longer than lease_duration + slack: others may
  // lead by now, so the process must be restarted. OK for non-leaders. Fast, non-blocking.
  absl::Status Check(Clock::Duration slack = std::chrono::seconds(20)) const;

  // One acquire-or-renew round: read the Lease; create it, take it over or renew it if
  // allowed; returns true if we hold it afterwards. Used by Run(); public for tests, which
  // call it from one thread while Run() is not running.
  bool TryAcquireOrRenew();
  // Writes an empty holder with leaseDurationSeconds 1 if we hold the Lease (as observed).
  // Used by Run(); public for tests.
  absl::Status Release();

 private:
  LeaderElector(client::Client* client, LeaderElectionConfig config);

  absl::StatusOr<api::Lease> GetLease();
  absl::StatusOr<api::Lease> WriteLease(const api::Lease& lease, bool create);
  // Remembers `lease` as the observed record, seen at `when`; notifies on a new holder.
  void Observe(api::Lease lease, Clock::TimePoint when);
  Clock::Duration LeaseDurationOf(const api::LeaseSpec& spec) const;
  int32_t LeaseDurationSeconds() const;

  // Waits until `deadline` on the clock, or until `stop` fires or lost_ is set. Returns
  // false if it returned early.
  bool WaitUntil(Clock::TimePoint deadline, const std::stop_token& stop);
  Clock::Duration JitteredRetryPeriod();
  void StartLeading();
  // Signals the leader thread and calls on_stopped_leading, once (any thread).
  void StopActing(std::string_view reason);
  void WatchdogLoop();

  client::Client* const client_;
  const LeaderElectionConfig config_;
  const std::string identity_;
  Clock* const clock_;
  std::mt19937_64 rng_;

  // Only the thread running TryAcquireOrRenew/Release touches these.
  std::optional<api::Lease> observed_lease_;
  Clock::TimePoint observed_time_{};
  Clock::TimePoint last_attempt_{};  // start of the last TryAcquireOrRenew

  mutable std::mutex mu_;
  // Woken when a renewal succeeds, leadership is lost or Run() is asked to stop.
  std::condition_variable cond_;
  std::string observed_holder_ ABSL_GUARDED_BY(mu_);
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  bool lost_ ABSL_GUARDED_BY(mu_) = false;
  std::string lost_reason_ ABSL_GUARDED_BY(mu_);
  bool callback_running_ ABSL_GUARDED_BY(mu_) = false;  // on_started_leading has not returned
  bool finished_ ABSL_GUARDED_BY(mu_) = false;          // tells the watchdog to exit
  // Monotonic start time of the last successful acquire or renew request.
  Clock::TimePoint last_renew_ ABSL_GUARDED_BY(mu_){};

  std::atomic<bool> stopped_acting_{false};
  std::stop_source leader_stop_;
  std::thread leader_thread_;
  std::thread watchdog_thread_;
};

// Leader-election command-line flags shared by vc-scheduler and vc-controller-manager:
//
//   --leader-elect[=true|false]             campaign before running       default true
//   --leader-elect-lease-duration=15s       Go duration syntax (1m30s, 500ms)
//   --leader-elect-renew-deadline=10s
//   --leader-elect-retry-period=2s
//   --leader-elect-resource-name=NAME       Lease name (the binary's default)
//   --leader-elect-resource-namespace=NS    Lease namespace (the binary's default)
struct LeaderElectionFlags {
  bool leader_elect = true;
  Clock::Duration lease_duration = std::chrono::seconds(15);
  Clock::Duration renew_deadline = std::chrono::seconds(10);
  Clock::Duration retry_period = std::chrono::seconds(2);
  std::string resource_name;
  std::string resource_namespace = "volcano-system";

  // Copies the Lease name, namespace and durations into `config`.
  void ApplyTo(LeaderElectionConfig& config) const;
  // Registers the flags above, writing into this struct. Durations must be positive and
  // names non-empty.
  void AddFlags(FlagSet& flags);
};

// Removes the leader-election flags from `args` (argv without argv[0]) and returns them
// applied over `defaults`; other arguments stay, in order (FlagSet::ParseKnown, as
// runtime::ParseRuntimeFlags). `--flag=value` and `--flag value` are accepted for the valued
// flags; --leader-elect takes only the `=` form. kInvalidArgument for a missing or malformed
// value.
absl::StatusOr<LeaderElectionFlags> ParseLeaderElectionFlags(std::vector<std::string>& args,
                                                             LeaderElectionFlags defaults = {});

// Help text for the flags above (FlagSet::FlagsUsage).
std::string LeaderElectionFlagsUsage();

}  // namespace basalt::ctrlkit
