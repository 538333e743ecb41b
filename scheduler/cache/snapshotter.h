#pragma once
// Snapshotter hands each scheduling cycle its own copy of the cache's ClusterInfo and takes it
// back afterwards (decision 6). A snapshot handed back with Return() is updated in place by the
// next Take() instead of copied again: only the jobs, nodes and foreign tasks marked dirty since
// (by the cache, as informer events and binds touch them), the jobs the session could have
// changed (tasks not yet settled when handed out, or evicted from) and the nodes their tasks sit
// on are copied. Queues, PodGroup statuses and session state are refreshed every time. Every
// `full_every`-th snapshot is a complete copy regardless.
//
// The result must equal a complete copy. Take() checks the counts of jobs, nodes and foreign
// tasks always and, with `verify` (on in debug builds and in the randomized unit test), the
// content too (SnapshotDifference); a reused snapshot that differs is logged as the bug it is,
// counted in SnapshotStats::diverged and replaced by a complete copy.
//
// Thread-compatible: the owner (ClusterState) calls it under the mutex that guards the
// ClusterInfo it copies from. Owns the returned snapshot it keeps between cycles.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "scheduler/api/cluster_info.h"

namespace basalt::sched::cache {

#ifdef NDEBUG
inline constexpr bool kVerifySnapshotsByDefault = false;
#else
inline constexpr bool kVerifySnapshotsByDefault = true;
#endif

struct SnapshotterOptions {
  // false: every snapshot is a complete copy.
  bool incremental = true;
  int full_every = 100;
  // Compare each reused snapshot with a complete copy (costs a complete copy per cycle).
  bool verify = kVerifySnapshotsByDefault;
};

// How the last snapshots were made (for tests, the benchmark and debug logs).
struct SnapshotStats {
  uint64_t full = 0;         // complete copies
  uint64_t incremental = 0;  // updates of a returned snapshot
  uint64_t jobs_copied = 0;  // by the last snapshot
  uint64_t nodes_copied = 0;
  uint64_t foreign_copied = 0;
  uint64_t verified = 0;  // reused snapshots whose content was compared with a complete copy
  uint64_t diverged = 0;  // reused snapshots that differed from the cache (a bug), replaced
};

// Empty when `a` and `b` hold the same jobs, tasks, nodes (accounting, labels, taints and the
// tasks on them, each pointing into its own snapshot), foreign tasks and queues; else a line
// naming the first difference. Session-derived state recomputed at session open
// (never-fit explanations, last transactions) is not compared.
std::string SnapshotDifference(const ClusterInfo& a, const ClusterInfo& b);

class Snapshotter {
 public:
  explicit Snapshotter(SnapshotterOptions options);
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  // Change tracking, called by the owner as the cache changes.
  void MarkJob(const std::string& job_id) { dirty_jobs_.insert(job_id); }
  void MarkNode(const std::string& name) { dirty_nodes_.insert(name); }
  // A task of `job_id` changed; "" marks a foreign task.
  void MarkTask(const std::string& job_id, const std::string& uid);

  struct Handout {
    ClusterInfo cluster;
    uint64_t handout = 0;  // pass back to Return
  };
  // A copy of `cache` without session state (fit errors), incremental when a snapshot was
  // returned (see the file comment). `finish` (may be empty) completes what the owner refreshes
  // on every handout (job priorities); it is applied before the content check, to the complete
  // copy compared with too.
  Handout Take(const ClusterInfo& cache, const std::function<void(ClusterInfo&)>& finish);
  // Takes a session's snapshot back for the next Take to update. A snapshot other than the
  // last one handed out is dropped.
  void Return(ClusterInfo used, uint64_t handout);

  const SnapshotStats& stats() const { return stats_; }

 private:
  // Brings the returned snapshot `s` up to `cache` (what changed since).
  void Update(ClusterInfo& s, const ClusterInfo& cache);
  // Why a reused (and finished) snapshot cannot be handed out ("" if it can).
  std::string Divergence(const ClusterInfo& s, const ClusterInfo& cache,
                         const std::function<void(ClusterInfo&)>& finish);

  const SnapshotterOptions options_;
  std::optional<ClusterInfo> returned_;         // the last session's snapshot, handed back
  uint64_t handouts_ = 0;                       // snapshots handed out
  std::set<std::string> unsettled_at_handout_;  // jobs the session out there may change
  std::set<std::string> dirty_jobs_;
  std::set<std::string> dirty_nodes_;    // node objects (allocatable, labels...) changed
  std::set<std::string> dirty_foreign_;  // foreign task uids
  int since_full_ = 0;
  SnapshotStats stats_;
};

}  // namespace basalt::sched::cache
