#include "common/ctrlkit/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/client/errors.h"
#include "common/client/resource.h"
#include "common/util/duration.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::ctrlkit {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

// Upper bound of one request when request_timeout is not set.
constexpr milliseconds kMaxRequestTimeout{10000};

// One Lease request's timeout: the configured one, else half the renew deadline (at most
// kMaxRequestTimeout), never under 1 ms.
milliseconds RequestTimeout(const LeaderElectionConfig& config) {
  Clock::Duration timeout = config.request_timeout;
  if (timeout <= Clock::Duration::zero()) {
    timeout = std::min<Clock::Duration>(config.renew_deadline / 2, kMaxRequestTimeout);
  }
  return std::max(milliseconds(1), duration_cast<milliseconds>(timeout));
}

double Seconds(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

absl::Status ValidateLeaderElectionConfig(const LeaderElectionConfig& c) {
  auto invalid = [](std::string msg) {
    return absl::InvalidArgumentError(fmt::format("leader election: {}", msg));
  };
  if (c.lease_namespace.empty()) {
    return invalid("the Lease namespace is required (--leader-elect-resource-namespace)");
  }
  if (c.lease_name.empty()) {
    return invalid("the Lease name is required (--leader-elect-resource-name)");
  }
  if (!c.callbacks.on_started_leading) return invalid("on_started_leading is required");
  if (c.lease_duration < std::chrono::seconds(1)) {
    return invalid(fmt::format("lease duration {}s is below 1s", Seconds(c.lease_duration)));
  }
  if (c.renew_deadline <= Clock::Duration::zero() || c.retry_period <= Clock::Duration::zero()) {
    return invalid("renew deadline and retry period must be positive");
  }
  if (c.jitter_factor < 0) return invalid("jitter factor must not be negative");
  if (c.lease_duration <= c.renew_deadline) {
    return invalid(fmt::format("lease duration {}s must be greater than renew deadline {}s",
                               Seconds(c.lease_duration), Seconds(c.renew_deadline)));
  }
  if (Seconds(c.renew_deadline) <= std::max(1.0, c.jitter_factor) * Seconds(c.retry_period)) {
    return invalid(
        fmt::format("renew deadline {}s must be greater than max(1, jitter {}) * retry period {}s",
                    Seconds(c.renew_deadline), c.jitter_factor, Seconds(c.retry_period)));
  }
  return absl::OkStatus();
}

std::string DefaultLeaderIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof(host), "unknown");
  }
  std::random_device rd;
  std::uniform_int_distribution<uint32_t> dist;
  uint8_t b[16];
  for (int i = 0; i < 16; i += 4) {
    uint32_t v = dist(rd);
    for (int j = 0; j < 4; ++j) b[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return fmt::format(
      "{}_{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      host, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
      b[14], b[15]);
}

// --- LeaderElector --------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::New(client::Client* client,
                                                                  LeaderElectionConfig config) {
  if (client == nullptr) return absl::InvalidArgumentError("leader election: no client");
  BASALT_RETURN_IF_ERROR(ValidateLeaderElectionConfig(config));
  return std::unique_ptr<LeaderElector>(new LeaderElector(client, std::move(config)));
}

LeaderElector::LeaderElector(client::Client* client, LeaderElectionConfig config)
    : client_(client),
      config_(std::move(config)),
      identity_(config_.identity.empty() ? DefaultLeaderIdentity() : config_.identity),
      clock_(config_.clock != nullptr ? config_.clock : Clock::Real()),
      rng_(std::random_device{}()) {}

LeaderElector::~LeaderElector() {
  {
    std::lock_guard<std::mutex> l(mu_);
    finished_ = true;
  }
  cond_.notify_all();
  leader_stop_.request_stop();
  if (leader_thread_.joinable()) leader_thread_.join();
  if (watchdog_thread_.joinable()) watchdog_thread_.join();
}

bool LeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> l(mu_);
  return leading_;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> l(mu_);
  return observed_holder_;
}

absl::Status LeaderElector::Check(Clock::Duration slack) const {
  std::lock_guard<std::mutex> l(mu_);
  // A leader callback that still runs after we stopped leading is as dangerous as a stuck
  // leader: both may act while another replica holds the Lease.
  if (!leading_ && !callback_running_) return absl::OkStatus();
  const Clock::Duration since = clock_->Now() - last_renew_;
  if (since > config_.lease_duration + slack) {
    return absl::UnavailableError(
        fmt::format("leader election: Lease {}/{} not renewed for {:.1f}s (lease duration {}s)",
                    config_.lease_namespace, config_.lease_name, Seconds(since),
                    Seconds(config_.lease_duration)));
  }
  return absl::OkStatus();
}

int32_t LeaderElector::LeaseDurationSeconds() const {
  return static_cast<int32_t>(std::ceil(Seconds(config_.lease_duration)));
}

Clock::Duration LeaderElector::LeaseDurationOf(const api::LeaseSpec& spec) const {
  // The holder says how long its Lease lasts; a record without it falls back to ours.
  if (spec.lease_duration_seconds.has_value() && *spec.lease_duration_seconds > 0) {
    return std::chrono::seconds(*spec.lease_duration_seconds);
  }
  return config_.lease_duration;
}

absl::StatusOr<api::Lease> LeaderElector::GetLease() {
  client::Request request;
  request.verb = "GET";
  request.path =
      client::ResourcePath(client::Leases(), config_.lease_namespace, config_.lease_name);
  request.timeout = RequestTimeout(config_);
  // The elector retries on its own schedule; transport retries would overrun the deadline.
  request.max_retries = 0;
  BASALT_ASSIGN_OR_RETURN(client::Response response, client_->Raw(request));
  if (response.status_code < 200 || response.status_code >= 300) {
    return client::ApiError(response.status_code, response.body,
                            fmt::format("GET {}", request.path));
  }
  return api::Lease::Parse(response.body);
}

absl::StatusOr<api::Lease> LeaderElector::WriteLease(const api::Lease& lease, bool create) {
  client::Request request;
  request.verb = create ? "POST" : "PUT";
  request.path =
      create ? client::ResourcePath(client::Leases(), config_.lease_namespace)
             : client::ResourcePath(client::Leases(), config_.lease_namespace, config_.lease_name);
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = lease.ToJson();
  request.timeout = RequestTimeout(config_);
  request.max_retries = 0;
  BASALT_ASSIGN_OR_RETURN(client::Response response, client_->Raw(request));
  if (response.status_code < 200 || response.status_code >= 300) {
    return client::ApiError(response.status_code, response.body,
                            fmt::format("{} {}", request.verb, request.path));
  }
  return api::Lease::Parse(response.body);
}

void LeaderElector::Observe(api::Lease lease, Clock::TimePoint when) {
  const bool changed = !observed_lease_.has_value() || observed_lease_->spec() != lease.spec();
  if (!changed) {
    // Same record: keep the time we first saw it, but carry the newest resourceVersion.
    observed_lease_ = std::move(lease);
    return;
  }
  const std::string holder = lease.spec().holder_identity;
  observed_lease_ = std::move(lease);
  observed_time_ = when;
  bool new_holder = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (observed_holder_ != holder) {
      observed_holder_ = holder;
      new_holder = true;
    }
  }
  if (new_holder) {
    BASALT_LOG_INFO("Observed a new Lease holder", "lease",
                    fmt::format("{}/{}", config_.lease_namespace, config_.lease_name), "holder",
                    holder, "identity", identity_);
    if (config_.callbacks.on_new_leader) config_.callbacks.on_new_leader(holder);
  }
}

bool LeaderElector::TryAcquireOrRenew() {
  const Clock::TimePoint now = clock_->Now();
  const api::Time wall_now = clock_->WallNow();
  const std::string lease_key = fmt::format("{}/{}", config_.lease_namespace, config_.lease_name);
  last_attempt_ = now;

  absl::StatusOr<api::Lease> current = GetLease();
  if (absl::IsNotFound(current.status())) {
    api::Lease lease = api::Lease::Make(config_.lease_namespace, config_.lease_name);
    api::LeaseSpec spec;
    spec.holder_identity = identity_;
    spec.lease_duration_seconds = LeaseDurationSeconds();
    spec.acquire_time = wall_now;
    spec.renew_time = wall_now;
    spec.lease_transitions = 0;
    lease.SetSpec(spec);
    absl::StatusOr<api::Lease> created = WriteLease(lease, /*create=*/true);
    if (!created.ok()) {
      BASALT_VLOG(2, "Could not create the Lease", "lease", lease_key, "error",
                  MessageOf(created.status()));
      return false;
    }
    Observe(*std::move(created), now);
    std::lock_guard<std::mutex> l(mu_);
    last_renew_ = now;
    return true;
  }
  if (!current.ok()) {
    BASALT_VLOG(2, "Could not read the Lease", "lease", lease_key, "error",
                MessageOf(current.status()));
    return false;
  }
  Observe(*current, now);
  const api::LeaseSpec old = current->spec();
  const bool ours = old.holder_identity == identity_;
  if (!old.holder_identity.empty() && !ours && now < observed_time_ + LeaseDurationOf(old)) {
    return false;  // Held by another candidate whose Lease has not expired (as we observe it).
  }

  api::LeaseSpec spec;
  spec.holder_identity = identity_;
  spec.lease_duration_seconds = LeaseDurationSeconds();
  spec.renew_time = wall_now;
  if (ours) {
    spec.acquire_time = old.acquire_time.value_or(wall_now);
    spec.lease_transitions = old.lease_transitions.value_or(0);
  } else {
    spec.acquire_time = wall_now;
    spec.lease_transitions = old.lease_transitions.value_or(0) + 1;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (lost_) return false;  // Stopped acting meanwhile (a slow read): do not renew.
  }
  api::Lease next = *std::move(current);
  next.SetSpec(spec);
  absl::StatusOr<api::Lease> written = WriteLease(next, /*create=*/false);
  if (!written.ok()) {
    // 409: another candidate wrote first (or our previous write raced); re-read next round.
    BASALT_VLOG(2, "Could not write the Lease", "lease", lease_key, "error",
                MessageOf(written.status()), "conflict", client::IsConflict(written.status()));
    return false;
  }
  if (!ours) {
    BASALT_LOG_INFO("Acquired the Lease", "lease", lease_key, "identity", identity_,
                    "previous_holder", old.holder_identity, "transitions", *spec.lease_transitions);
  }
  Observe(*std::move(written), now);
  std::lock_guard<std::mutex> l(mu_);
  last_renew_ = now;
  return true;
}

absl::Status LeaderElector::Release() {
  if (!observed_lease_.has_value() || observed_lease_->spec().holder_identity != identity_) {
    return absl::OkStatus();
  }
  const api::Time wall_now = clock_->WallNow();
  api::LeaseSpec spec;
  spec.lease_duration_seconds = 1;
  spec.acquire_time = wall_now;
  spec.renew_time = wall_now;
  spec.lease_transitions = observed_lease_->spec().lease_transitions;
  api::Lease next = *observed_lease_;
  next.SetSpec(spec);
  absl::StatusOr<api::Lease> written = WriteLease(next, /*create=*/false);
  if (!written.ok()) {
    return Annotate(written.status(), "leader election: releasing the Lease");
  }
  BASALT_LOG_INFO("Released the Lease", "lease",
                  fmt::format("{}/{}", config_.lease_namespace, config_.lease_name), "identity",
                  identity_);
  Observe(*std::move(written), clock_->Now());
  return absl::OkStatus();
}

bool LeaderElector::WaitUntil(Clock::TimePoint deadline, const std::stop_token& stop) {
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> l(mu_);
    cond_.notify_all();
  });
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (stop.stop_requested() || lost_ || finished_) return false;
    if (clock_->Now() >= deadline) return true;
    clock_->WaitUntil(l, cond_, deadline);
  }
}

Clock::Duration LeaderElector::JitteredRetryPeriod() {
  if (config_.jitter_factor <= 0) return config_.retry_period;
  std::uniform_real_distribution<double> dist(0.0, config_.jitter_factor);
  return config_.retry_period + duration_cast<Clock::Duration>(std::chrono::duration<double>(
                                    Seconds(config_.retry_period) * dist(rng_)));
}

void LeaderElector::StartLeading() {
  {
    std::lock_guard<std::mutex> l(mu_);
    leading_ = true;
    callback_running_ = true;
  }
  BASALT_LOG_INFO("Started leading", "lease",
                  fmt::format("{}/{}", config_.lease_namespace, config_.lease_name), "identity",
                  identity_);
  leader_thread_ = std::thread([this, token = leader_stop_.get_token()] {
    config_.callbacks.on_started_leading(token);
    std::lock_guard<std::mutex> l(mu_);
    callback_running_ = false;
  });
  watchdog_thread_ = std::thread([this] { WatchdogLoop(); });
}

void LeaderElector::StopActing(std::string_view reason) {
  if (stopped_acting_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    leading_ = false;
  }
  cond_.notify_all();
  leader_stop_.request_stop();
  BASALT_LOG_INFO("Stopped leading", "lease",
                  fmt::format("{}/{}", config_.lease_namespace, config_.lease_name), "identity",
                  identity_, "reason", reason);
  if (config_.callbacks.on_stopped_leading) config_.callbacks.on_stopped_leading();
}

void LeaderElector::WatchdogLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!finished_ && !lost_) {
    const Clock::TimePoint deadline = last_renew_ + config_.renew_deadline;
    if (clock_->Now() >= deadline) {
      lost_ = true;
      lost_reason_ = fmt::format("not renewed within the renew deadline of {}s",
                                 Seconds(config_.renew_deadline));
      l.unlock();
      BASALT_LOG_WARNING("Lease not renewed within the renew deadline", "lease",
                         fmt::format("{}/{}", config_.lease_namespace, config_.lease_name),
                         "renew_deadline_s", Seconds(config_.renew_deadline));
      StopActing("renew deadline passed");
      return;
    }
    clock_->WaitUntil(l, cond_, deadline);
  }
}

absl::Status LeaderElector::Run(std::stop_token stop) {
  const std::string lease_key = fmt::format("{}/{}", config_.lease_namespace, config_.lease_name);
  BASALT_LOG_INFO("Campaigning for the Lease", "lease", lease_key, "identity", identity_);
  while (true) {
    if (stop.stop_requested()) return absl::OkStatus();
    if (TryAcquireOrRenew()) break;
    WaitUntil(last_attempt_ + JitteredRetryPeriod(), stop);
  }
  StartLeading();
  while (true) {
    // Renewals start every retry period, counted from the start of the previous attempt.
    if (!WaitUntil(last_attempt_ + config_.retry_period, stop)) break;
    if (!TryAcquireOrRenew()) {
      std::lock_guard<std::mutex> l(mu_);
      if (!observed_holder_.empty() && observed_holder_ != identity_ && !lost_) {
        lost_ = true;  // Someone else holds the Lease now: stop at once.
        lost_reason_ = fmt::format("the Lease is held by {}", observed_holder_);
      }
      if (lost_) break;
      // A later round within the renew deadline may still succeed; the watchdog stops us
      // once the deadline passes, even while a request hangs.
      continue;
    }
    // The Lease record we read may show someone else if we were too slow; TryAcquireOrRenew
    // never overwrites a valid foreign holder, so success means we still hold it.
    cond_.notify_all();  // The watchdog recomputes its deadline.
  }
  bool lost;
  std::string lost_reason;
  {
    std::lock_guard<std::mutex> l(mu_);
    lost = lost_;
    lost_reason = lost_reason_;
    finished_ = true;
  }
  cond_.notify_all();
  StopActing(lost ? lost_reason : "shutting down");
  if (leader_thread_.joinable()) leader_thread_.join();
  if (watchdog_thread_.joinable()) watchdog_thread_.join();
  if (lost) {
    return absl::AbortedError(
        fmt::format("leader election: lost the Lease {}: {}", lease_key, lost_reason));
  }
  if (config_.release_on_cancel) {
    absl::Status s = Release();
    if (!s.ok()) BASALT_LOG_WARNING("Could not release the Lease", "error", MessageOf(s));
  }
  return absl::OkStatus();
}

// --- Flags ----------------------------------------------------------------------------

void LeaderElectionFlags::ApplyTo(LeaderElectionConfig& config) const {
  config.lease_namespace = resource_namespace;
  config.lease_name = resource_name;
  config.lease_duration = lease_duration;
  config.renew_deadline = renew_deadline;
  config.retry_period = retry_period;
}

namespace {

absl::Status SetPositiveDuration(std::string_view text, Clock::Duration* target) {
  absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(text);
  if (!d.ok()) return absl::InvalidArgumentError("want a duration such as 15s or 1m30s");
  if (*d <= std::chrono::nanoseconds::zero()) {
    return absl::InvalidArgumentError("must be positive");
  }
  *target = duration_cast<Clock::Duration>(*d);
  return absl::OkStatus();
}

absl::Status SetNonEmpty(std::string_view text, std::string* target) {
  if (text.empty()) return absl::InvalidArgumentError("must not be empty");
  *target = std::string(text);
  return absl::OkStatus();
}

}  // namespace

void LeaderElectionFlags::AddFlags(FlagSet& flags) {
  flags.Bool("leader-elect", &leader_elect, "campaign for a Lease before running");
  flags.Func("leader-elect-lease-duration", "how long candidates wait for an unrenewed Lease",
             FormatGoDuration(lease_duration),
             [this](std::string_view v) { return SetPositiveDuration(v, &lease_duration); });
  flags.Func("leader-elect-renew-deadline", "how long the leader acts without renewing",
             FormatGoDuration(renew_deadline),
             [this](std::string_view v) { return SetPositiveDuration(v, &renew_deadline); });
  flags.Func("leader-elect-retry-period", "time between acquire/renew attempts",
             FormatGoDuration(retry_period),
             [this](std::string_view v) { return SetPositiveDuration(v, &retry_period); });
  flags.Func("leader-elect-resource-name", "name of the Lease", resource_name,
             [this](std::string_view v) { return SetNonEmpty(v, &resource_name); });
  flags.Func("leader-elect-resource-namespace", "namespace of the Lease", resource_namespace,
             [this](std::string_view v) { return SetNonEmpty(v, &resource_namespace); });
}

absl::StatusOr<LeaderElectionFlags> ParseLeaderElectionFlags(std::vector<std::string>& args,
                                                             LeaderElectionFlags defaults) {
  return ParseKnownFlags(args, std::move(defaults));
}

std::string LeaderElectionFlagsUsage() { return FlagsUsageOf<LeaderElectionFlags>(); }

}  // namespace basalt::ctrlkit
