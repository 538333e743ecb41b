#pragma once
// A Session is one scheduling cycle over a snapshot (ClusterInfo). Plugins register callbacks
// per extension point in OnSessionOpen; actions call the Session's dispatchers, which walk the
// tiers in order and the plugins in config order, honour each plugin's enable flag, and combine
// the answers with a fixed rule per extension point (reference §8):
//
//   JobOrder, TaskOrder, QueueOrder  first non-zero comparison; then creation time, then uid
//                                    (tasks: pod-name index first)
//   Predicate                        the first non-success outcome wins
//   NodeOrder, BatchNodeOrder        sum of the plugins' scores
//   JobValid                         the first failing result
//   JobReady, Allocatable, Preemptive AND over plugins (no plugin -> true)
//   Overused                         OR over plugins
//   JobPipelined, JobEnqueueable     vote: any Reject -> false; a tier with a Permit -> true;
//                                    all Abstain -> next tier; no decision -> true
//   JobStarving                      AND within the first tier that has any fn; none -> false
//   Preemptable, Reclaimable         intersection of the non-abstaining plugins of a tier; an
//                                    empty result moves to the next tier
//   JobEnqueued, event handlers      call all
//   JobDomains, SubGroupDomains      the first plugin with an answer (flag enabledHyperNodeOrder)
//   QueueHeadroom                    per-dimension min over plugins (flag enabledAllocatable)
//
// State changes (allocate, pipeline, evict and their undo) go through a Statement or the direct
// Allocate() below; every one fires the plugins' allocate/deallocate handlers, so plugin state
// (shares, queue allocations) stays consistent during dry runs.
//
// Implemented in two files: session.cc (opening, plugin registration and the dispatchers) and
// session_state.cc (state changes and Close, which writes job and task status).
//
// Single-threaded: a session and its snapshot belong to the scheduling thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/cycle_report.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/node_sampling.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

// Votes of JobPipelined / JobEnqueueable functions.
inline constexpr int kPermit = 1;
inline constexpr int kAbstain = 0;
inline constexpr int kReject = -1;

struct ValidateResult {
  std::string reason;
  std::string message;
  // True when the job is invalid only because fewer of its pods exist than it needs (it waits
  // for them to be created); `message` then does not depend on how many exist so far.
  bool awaiting_pods = false;
};

// Order functions return < 0 if `l` goes first, > 0 if `r` goes first, 0 for no opinion.
using JobOrderFn = std::function<int(const JobInfo& l, const JobInfo& r)>;
using TaskOrderFn = std::function<int(const TaskInfo& l, const TaskInfo& r)>;
using QueueOrderFn = std::function<int(const QueueInfo& l, const QueueInfo& r)>;
using PredicateFn = std::function<Outcome(const TaskInfo& task, const NodeInfo& node)>;
using NodeOrderFn = std::function<double(const TaskInfo& task, const NodeInfo& node)>;
// Returns one score per node, aligned with `nodes`.
using BatchNodeOrderFn = std::function<std::vector<double>(
    const TaskInfo& task, const std::vector<const NodeInfo*>& nodes)>;
// nullopt: the job is valid.
using JobValidFn = std::function<std::optional<ValidateResult>(const JobInfo& job)>;
using JobPredicateFn = std::function<bool(const JobInfo& job)>;
using JobVoteFn = std::function<int(const JobInfo& job)>;
using JobEnqueuedFn = std::function<void(const JobInfo& job)>;
using AllocatableFn = std::function<bool(const QueueInfo& queue, const TaskInfo& task)>;
using OverusedFn = std::function<bool(const QueueInfo& queue)>;
// How much more a queue may be allocated in this session (e.g. deserved - allocated), or
// nullopt when the plugin does not limit it. Basalt: admission uses it so that admitted work a
// queue may not place does not hold back the other queues (docs/scheduler.md, "Admission").
using QueueHeadroomFn = std::function<std::optional<Resource>(const QueueInfo& queue)>;
using PreemptiveFn = std::function<bool(const QueueInfo& queue, const TaskInfo& task)>;
// Returns the victims this plugin allows among `candidates`, or nullopt to abstain.
using EvictableFn = std::function<std::optional<std::vector<const TaskInfo*>>(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)>;

// A set of nodes a gang is placed in as a whole (a HyperNode), for JobDomainsFn.
struct NodeDomain {
  std::string name;
  int32_t tier = 0;
  std::vector<NodeInfo*> nodes;  // in node-name order; point into the session
};
// Where a job's gang may go: the allocate action tries the domains in order, each on its own
// statement, and keeps the first in which the gang becomes ready (or pipelined); a gang that
// fits in none is not placed at all and `unsatisfied` becomes its job fit error.
struct JobDomains {
  std::vector<NodeDomain> domains;
  std::string unsatisfied;
};
// nullopt: no constraint for this job (every node, as without the plugin).
using JobDomainsFn = std::function<std::optional<JobDomains>(const JobInfo& job)>;
// Where one sub-group of a job (spec.subGroupPolicy) may go, as JobDomainsFn does for the
// sub-group's own networkTopology, restricted to nodes of `bound` (the job's own domain; null:
// any node). nullopt: the sub-group has no constraint of its own (any node of `bound`).
using SubGroupDomainsFn = std::function<std::optional<JobDomains>(
    const JobInfo& job, const SubGroup& group, const NodeDomain* bound)>;
// Names of nodes that a sampled predicate pass (the allocate action in a cluster of more than
// --minimum-feasible-nodes nodes) must check for `task` in addition to its sample, because the
// plugin's score prefers them (e.g. task-topology: the nodes the task's affine peers are on).
// Empty: nothing to add. Keep the list short: each node costs one predicate call per task.
using PreferredNodesFn = std::function<std::vector<std::string>(const TaskInfo& task)>;

struct EventHandler {
  std::function<void(const TaskInfo& task)> on_allocate;
  std::function<void(const TaskInfo& task)> on_deallocate;
};

struct SessionOptions {
  std::string uid;  // the session's id, used as the condition transitionID
  Timestamp now{};
  Binder* binder = nullptr;    // not owned; may be null (nothing is bound)
  Evictor* evictor = nullptr;  // not owned; may be null
  // Node sampling of the allocate action, with its start index kept across cycles. Not owned;
  // null: the session uses its own sampler with the default options.
  NodeSampler* node_sampler = nullptr;
  // Not owned; may be null. Close() fills it (cycle_report.h); RunCycleOn adds action timings.
  CycleReport* report = nullptr;
};

class Session {
 public:
  // Opens a session: builds every configured plugin (in config order) from `registry` and calls
  // its OnSessionOpen. Returns kInvalidArgument if a plugin is unknown or its arguments are bad.
  static absl::StatusOr<std::unique_ptr<Session>> Open(ClusterInfo cluster,
                                                       const SchedulerConfig& config,
                                                       const PluginRegistry& registry,
                                                       SessionOptions options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // Calls OnSessionClose of every plugin (config order), then writes what changed to `sink`:
  // PodGroup status (phase, counts, conditions) with its event, pod PodScheduled conditions with
  // a FailedScheduling event, and queue status.allocated. `sink` may be null.
  void Close(StatusSink* sink);

  // ---- Snapshot ----
  ClusterInfo& cluster() { return cluster_; }
  std::map<std::string, JobInfo>& jobs() { return cluster_.jobs(); }
  std::map<std::string, NodeInfo>& nodes() { return cluster_.nodes(); }
  std::map<std::string, QueueInfo>& queues() { return cluster_.queues(); }
  JobInfo* FindJob(const std::string& id) { return cluster_.FindJob(id); }
  NodeInfo* FindNode(const std::string& name) { return cluster_.FindNode(name); }
  QueueInfo* FindQueue(const std::string& name) { return cluster_.FindQueue(name); }
  const JobInfo* FindJob(const std::string& id) const { return cluster_.FindJob(id); }
  const NodeInfo* FindNode(const std::string& name) const { return cluster_.FindNode(name); }
  const QueueInfo* FindQueue(const std::string& name) const { return cluster_.FindQueue(name); }
  // Sum of allocatable over all nodes.
  const Resource& total_resource() const { return total_resource_; }
  const std::string& uid() const { return options_.uid; }
  Timestamp now() const { return options_.now; }
  const SchedulerConfig& config() const { return config_; }
  // Node names in a stable order (the iteration order of actions).
  const std::vector<NodeInfo*>& node_list() const { return node_list_; }
  // The allocate action's node sampling (options and rotating start).
  NodeSampler& node_sampler() const {
    return options_.node_sampler != nullptr ? *options_.node_sampler : own_node_sampler_;
  }

  // ---- Registration (from Plugin::OnSessionOpen) ----
  void AddJobOrderFn(std::string_view plugin, JobOrderFn fn);
  void AddTaskOrderFn(std::string_view plugin, TaskOrderFn fn);
  void AddQueueOrderFn(std::string_view plugin, QueueOrderFn fn);
  void AddPredicateFn(std::string_view plugin, PredicateFn fn);
  void AddNodeOrderFn(std::string_view plugin, NodeOrderFn fn);
  void AddBatchNodeOrderFn(std::string_view plugin, BatchNodeOrderFn fn);
  void AddJobValidFn(std::string_view plugin, JobValidFn fn);
  void AddJobReadyFn(std::string_view plugin, JobPredicateFn fn);
  void AddJobPipelinedFn(std::string_view plugin, JobVoteFn fn);
  void AddJobStarvingFn(std::string_view plugin, JobPredicateFn fn);
  void AddJobEnqueueableFn(std::string_view plugin, JobVoteFn fn);
  void AddJobEnqueuedFn(std::string_view plugin, JobEnqueuedFn fn);
  void AddAllocatableFn(std::string_view plugin, AllocatableFn fn);
  void AddOverusedFn(std::string_view plugin, OverusedFn fn);
  void AddPreemptiveFn(std::string_view plugin, PreemptiveFn fn);
  void AddPreemptableFn(std::string_view plugin, EvictableFn fn);
  void AddReclaimableFn(std::string_view plugin, EvictableFn fn);
  void AddJobDomainsFn(std::string_view plugin, JobDomainsFn fn);
  void AddSubGroupDomainsFn(std::string_view plugin, SubGroupDomainsFn fn);
  void AddPreferredNodesFn(std::string_view plugin, PreferredNodesFn fn);
  void AddQueueHeadroomFn(std::string_view plugin, QueueHeadroomFn fn);
  void AddEventHandler(EventHandler handler);

  // ---- Dispatch (from actions) ----
  // True if `l` goes before `r`.
  bool JobOrder(const JobInfo& l, const JobInfo& r) const;
  bool TaskOrder(const TaskInfo& l, const TaskInfo& r) const;
  bool QueueOrder(const QueueInfo& l, const QueueInfo& r) const;
  Outcome Predicate(const TaskInfo& task, const NodeInfo& node) const;
  double NodeOrder(const TaskInfo& task, const NodeInfo& node) const;
  // One summed score per node, aligned with `nodes`.
  std::vector<double> BatchNodeOrder(const TaskInfo& task,
                                     const std::vector<const NodeInfo*>& nodes) const;
  std::optional<ValidateResult> JobValid(const JobInfo& job) const;
  bool JobReady(const JobInfo& job) const;
  bool JobPipelined(const JobInfo& job) const;
  bool JobStarving(const JobInfo& job) const;
  bool JobEnqueueable(const JobInfo& job) const;
  void JobEnqueued(const JobInfo& job);
  bool Allocatable(const QueueInfo& queue, const TaskInfo& task) const;
  bool Overused(const QueueInfo& queue) const;
  bool Preemptive(const QueueInfo& queue, const TaskInfo& task) const;
  std::vector<const TaskInfo*> Preemptable(const TaskInfo& preemptor,
                                           const std::vector<const TaskInfo*>& candidates) const;
  std::vector<const TaskInfo*> Reclaimable(const TaskInfo& reclaimer,
                                           const std::vector<const TaskInfo*>& candidates) const;
  // Preemptable / Reclaimable for the gang-level actions (gangpreempt, gangreclaim): the gang
  // plugin's function counts as allowing every candidate, since those actions keep each victim
  // job's minAvailable themselves (victim bundles), as Volcano's gang permits all there.
  std::vector<const TaskInfo*> GangPreemptable(
      const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const;
  std::vector<const TaskInfo*> GangReclaimable(
      const TaskInfo& reclaimer, const std::vector<const TaskInfo*>& candidates) const;
  std::optional<JobDomains> JobDomainsFor(const JobInfo& job) const;
  // While set (the eviction actions, around their domain queries), JobDomainsFor and
  // SubGroupDomainsFor answer which domains could hold the gang once victims are evicted: a
  // domain is judged on its allocatable resources, not its idle ones, and the domains with the
  // most idle come first (fewest evictions). Off by default.
  void set_domains_by_capacity(bool on) { domains_by_capacity_ = on; }
  bool domains_by_capacity() const { return domains_by_capacity_; }
  std::optional<JobDomains> SubGroupDomainsFor(const JobInfo& job, const SubGroup& group,
                                               const NodeDomain* bound) const;
  // The union of the enabled plugins' PreferredNodesFn for `task` (every tier), each node once,
  // in node-name order; names of nodes not in the session are dropped.
  std::vector<NodeInfo*> PreferredNodes(const TaskInfo& task) const;
  // Per-dimension min of the plugins' headrooms; nullopt if no plugin limits the queue.
  // Dimensions absent from the result are unlimited.
  std::optional<Resource> QueueHeadroom(const QueueInfo& queue) const;

  // ---- State changes ----
  // Allocates `task` on `node` outside any statement (backfill). Once the job is ready, every
  // Allocated task of it is dispatched to the Binder. kFailedPrecondition if it does not fit.
  absl::Status Allocate(TaskInfo* task, NodeInfo* node);

  // Low-level operations used by Statement. Each updates task, job and node accounting and
  // fires the event handlers; the Un* variants exactly reverse their counterpart.
  absl::Status DoAllocate(TaskInfo* task, NodeInfo* node);
  absl::Status DoPipeline(TaskInfo* task, NodeInfo* node);
  absl::Status DoEvict(TaskInfo* task);
  void UndoAllocate(TaskInfo* task);
  void UndoPipeline(TaskInfo* task);
  void UndoEvict(TaskInfo* task, TaskStatus previous);
  // Moves Allocated tasks to Binding and hands them to the Binder, grouped by job.
  void Dispatch(const std::vector<TaskInfo*>& tasks);
  // Sends an eviction to the Evictor (the task is already Releasing in the session).
  void SendEviction(const TaskInfo& task, const EvictionCause& cause);
  // Records an event to be emitted at Close (e.g. an enqueue rejection on a PodGroup).
  void RecordEvent(EventRecord event) { events_.push_back(std::move(event)); }

  // ---- Report (for the scheduler's metrics; no effect on decisions) ----
  // A plugin's view of a queue this cycle (deserved share, real capability); the last report
  // of a queue wins. Kept in the CycleReport when SessionOptions::report is set.
  void ReportQueue(const std::string& queue, QueueShareReport report);
  // A plugin's share of a job this cycle (drf's dominant resource share); call from
  // OnSessionClose. Kept in the CycleReport when SessionOptions::report is set.
  void ReportJobShare(const std::string& job_uid, double share);
  // The preempt action tried to place one preemptor task.
  void NotePreemptionAttempt() { ++preemption_attempts_; }

 private:
  Session(ClusterInfo cluster, SchedulerConfig config, SessionOptions options);

  template <typename Fn>
  using FnMap = std::map<std::string, Fn, std::less<>>;

  // One extension point: the fns registered per plugin name, and the dispatch plan resolved
  // once the plugins are open: per tier, the fns of enabled plugins in config order (so hot
  // dispatch does no name lookups).
  template <typename Fn>
  struct Extension {
    explicit Extension(std::string_view f) : flag(f) {}
    std::string_view flag;  // empty: no enable flag
    FnMap<Fn> fns;
    std::vector<std::vector<const Fn*>> plan;
  };

  template <typename Fn>
  void Register(Extension<Fn>& ext, std::string_view plugin, Fn fn);
  template <typename Fn>
  void Plan(Extension<Fn>& ext);
  void PlanAll();
  // Calls `visit(fn)` tier by tier until it returns false; `tier_end()` runs after each tier
  // and returns false to stop.
  template <typename Fn, typename Visit, typename TierEnd>
  static void ForEach(const Extension<Fn>& ext, Visit visit, TierEnd tier_end);
  template <typename Fn, typename T>
  static int CompareBy(const Extension<Fn>& ext, const T& l, const T& r);
  // `permit_all`: a plugin whose function is taken as returning every candidate (none: "").
  static std::vector<const TaskInfo*> Evictable(const Extension<EvictableFn>& ext,
                                                const TaskInfo& preemptor,
                                                const std::vector<const TaskInfo*>& candidates,
                                                std::string_view permit_all = {});
  static bool Vote(const Extension<JobVoteFn>& ext, const JobInfo& job);
  void FireAllocate(const TaskInfo& task);
  void FireDeallocate(const TaskInfo& task);
  void WriteJobStatus(JobInfo& job, StatusSink* sink);
  // Gives every waiting job (Pending or Inqueue PodGroup) the condition QueuePosition with
  // message "<position>/<waiting jobs of its queue>" in the session's job order, and removes it
  // from the others; unchanged positions stay as they were, so nothing is written for them.
  // A job gets its first position once its PodGroup is kQueuePositionDelay old; a moved
  // position is rewritten when the job's phase changes or when the one it shows is
  // kQueuePositionRefresh old (it may lag the queue by that much).
  void SetQueuePositions();
  // Fills options_.report at the end of Close (cycle_report.cc).
  void FillReport();

  ClusterInfo cluster_;
  SchedulerConfig config_;
  SessionOptions options_;
  Resource total_resource_;
  std::vector<NodeInfo*> node_list_;
  mutable NodeSampler own_node_sampler_;  // when options_.node_sampler is null
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<EventRecord> events_;
  std::map<std::string, QueueShareReport> queue_reports_;
  int64_t preemption_attempts_ = 0;
  bool domains_by_capacity_ = false;
  int64_t evictions_ = 0;
  int64_t dispatched_ = 0;
  std::vector<std::chrono::nanoseconds> task_latencies_;
  std::chrono::steady_clock::time_point opened_at_{};
  // PodGroup status at open, to write only what changed at close.
  std::map<std::string, PodGroupStatus> old_status_;

  bool opened_ = false;
  Extension<JobOrderFn> job_order_{flag::kJobOrder};
  Extension<TaskOrderFn> task_order_{flag::kTaskOrder};
  Extension<QueueOrderFn> queue_order_{flag::kQueueOrder};
  Extension<PredicateFn> predicate_{flag::kPredicate};
  Extension<NodeOrderFn> node_order_{flag::kNodeOrder};
  Extension<BatchNodeOrderFn> batch_node_order_{flag::kNodeOrder};
  Extension<JobValidFn> job_valid_{""};
  Extension<JobPredicateFn> job_ready_{flag::kJobReady};
  Extension<JobVoteFn> job_pipelined_{flag::kJobPipelined};
  Extension<JobPredicateFn> job_starving_{flag::kJobStarving};
  Extension<JobVoteFn> job_enqueueable_{flag::kJobEnqueued};
  Extension<JobEnqueuedFn> job_enqueued_{flag::kJobEnqueued};
  Extension<AllocatableFn> allocatable_{flag::kAllocatable};
  Extension<OverusedFn> overused_{flag::kOverused};
  Extension<PreemptiveFn> preemptive_{flag::kPreemptive};
  Extension<EvictableFn> preemptable_{flag::kPreemptable};
  Extension<EvictableFn> reclaimable_{flag::kReclaimable};
  Extension<JobDomainsFn> job_domains_{flag::kHyperNodeOrder};
  Extension<SubGroupDomainsFn> sub_group_domains_{flag::kHyperNodeOrder};
  // Under the node-order flag: the preference only matters to a plugin that scores nodes.
  Extension<PreferredNodesFn> preferred_nodes_{flag::kNodeOrder};
  Extension<QueueHeadroomFn> queue_headroom_{flag::kAllocatable};
  std::vector<EventHandler> event_handlers_;
};

}  // namespace basalt::sched
