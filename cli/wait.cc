#include "cli/wait.h"

#include <algorithm>

#include "common/api/time.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace basalt::cli {
namespace {

std::string Describe(std::string_view reason, std::string_view message) {
  std::string out;
  if (!reason.empty()) out += fmt::format("reason \"{}\"", reason);
  if (!message.empty()) {
    if (!out.empty()) out += ", ";
    out += fmt::format("message \"{}\"", message);
  }
  return out;
}

std::optional<api::Time> When(const api::Event& e) {
  const api::EventFields& f = e.fields();
  if (f.last_timestamp) return f.last_timestamp;
  if (f.first_timestamp) return f.first_timestamp;
  return e.creation_timestamp();
}

// The newest of `events` for which `want` holds, or null.
template <typename Pred>
const api::Event* Newest(const std::vector<api::Event>& events, Pred want) {
  const api::Event* best = nullptr;
  for (const api::Event& e : events) {
    if (!want(e)) continue;
    if (best == nullptr || When(e).value_or(api::Time{}) >= When(*best).value_or(api::Time{})) {
      best = &e;
    }
  }
  return best;
}

}  // namespace

std::optional<ExitCode> ExitCodeForPhase(std::string_view phase) {
  if (phase == "Completed") return kExitOk;
  if (phase == "Failed") return kExitJobFailed;
  if (phase == "Aborted") return kExitJobAborted;
  if (phase == "Terminated") return kExitJobTerminated;
  return std::nullopt;
}

std::vector<std::string> JobWaiter::Observe(const api::Job& job) {
  std::vector<std::string> lines;
  if (outcome_) return lines;
  if (!uid_.empty() && !job.uid().empty() && job.uid() != uid_) {
    return ObserveDeleted();
  }
  key_ = job.Key();
  const api::JobState& st = job.status().state;
  const int32_t retries = job.status().retry_count;
  // An empty phase is a Job the controller has not seen yet: nothing to report.
  if (st.phase.empty()) return lines;
  const bool phase_changed = st.phase != phase_;
  const bool why_changed = st.reason != reason_ || st.message != message_;
  const bool retried = retries > retry_count_;
  if (phase_changed || why_changed || retried) {
    std::string line = fmt::format("job {}: {}", key_, st.phase);
    if (st.phase == "Restarting" || (retried && !phase_changed)) {
      line += fmt::format(" (retry {} of {})", retries, job.spec().max_retry);
    }
    if (std::string why = Describe(st.reason, st.message); !why.empty()) line += ": " + why;
    lines.push_back(std::move(line));
  }
  phase_ = st.phase;
  reason_ = st.reason;
  message_ = st.message;
  retry_count_ = std::max(retry_count_, retries);
  outcome_ = ExitCodeForPhase(phase_);
  return lines;
}

std::vector<std::string> JobWaiter::ObserveDeleted() {
  std::vector<std::string> lines;
  if (outcome_) return lines;
  outcome_ = kExitJobDeleted;
  lines.push_back(fmt::format("job {}: deleted", key_.empty() ? "(unknown)" : key_));
  return lines;
}

std::string DescribeFailedPod(const api::Pod& pod) {
  const api::PodStatus& st = pod.status();
  if (st.phase != "Failed") return "";
  std::vector<std::string> why;
  for (const api::ContainerStatus& c : st.container_statuses) {
    if (c.state != "terminated" || c.exit_code.value_or(0) == 0) continue;
    std::string w = fmt::format("container {} exited with code {}", c.name, *c.exit_code);
    if (!c.reason.empty()) w += fmt::format(" ({})", c.reason);
    why.push_back(std::move(w));
  }
  if (!st.reason.empty() || !st.message.empty()) {
    why.push_back(Describe(st.reason, st.message));
  }
  if (why.empty()) why.push_back("no reason recorded");
  return fmt::format("pod {} failed: {}", pod.Key(), fmt::join(why, "; "));
}

std::string FinalSummary(ExitCode code, const api::Job* job, const std::vector<api::Event>& events,
                         const std::vector<api::Pod>& pods) {
  if (job == nullptr) return "vcctl: the job was deleted before it finished";
  const api::JobStatus& s = job->status();
  std::string head;
  switch (code) {
    case kExitOk:
      return fmt::format("vcctl: job {} Completed", job->Key());
    case kExitJobDeleted:
      head = fmt::format("vcctl: job {} was deleted before it finished (last phase {})", job->Key(),
                         s.state.phase.empty() ? "unknown" : s.state.phase);
      break;
    case kExitJobFailed:
      head = fmt::format("vcctl: job {} Failed after {} of {} retries", job->Key(), s.retry_count,
                         job->spec().max_retry);
      break;
    default:
      head = fmt::format("vcctl: job {} {}", job->Key(), s.state.phase);
      break;
  }
  std::string why = Describe(s.state.reason, s.state.message);
  if (why.empty()) {
    const api::Event* e =
        Newest(events, [](const api::Event& ev) { return ev.fields().type == "Warning"; });
    if (e == nullptr) e = Newest(events, [](const api::Event&) { return true; });
    if (e != nullptr) {
      why = fmt::format("last {} event {}: {}", e->fields().type, e->fields().reason,
                        e->fields().message);
    }
  }
  if (code != kExitOk) {
    const api::Pod* failed = nullptr;
    for (const api::Pod& p : pods) {
      if (p.status().phase == "Failed" && (failed == nullptr || p.name() < failed->name())) {
        failed = &p;
      }
    }
    if (failed != nullptr) why += (why.empty() ? "" : "; ") + DescribeFailedPod(*failed);
  }
  if (why.empty()) why = "no reason recorded";
  return fmt::format("{}: {} (exit code {})", head, why, static_cast<int>(code));
}

std::string TimeoutSummary(std::string_view key, std::string_view phase, std::string_view timeout) {
  return fmt::format("vcctl: timed out after {} waiting for job {} (phase {}) (exit code {})",
                     timeout, key, phase.empty() ? "unknown" : phase,
                     static_cast<int>(kExitTimeout));
}

}  // namespace basalt::cli
