#include "controllers/job/controller/job_reconciler.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "common/api/object.h"
#include "common/api/time.h"
#include "common/api/views.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "controllers/job/pods/pod_group.h"
#include "controllers/job/pods/pods.h"
#include "controllers/job/state/state.h"
#include "controllers/job/status/status.h"
#include "controllers/job/validate/validate.h"
#include "fmt/format.h"

namespace basalt::controllers {

namespace {

// How soon a job whose sync left missing pods for later (PodSyncPlan::more_missing) comes back.
constexpr auto kMorePodsRequeue = std::chrono::milliseconds(1);
// A status change of counters only (pods pending, running, ...) waits until this long after
// the job's last status write and goes out with whatever comes next (issue 17: a one-pod job
// wrote pending=1 and then, moments later, Running). Phase, reason, retries, version,
// conditions and controlled resources are written at once. 3 s (was 1 s): in the one-pod
// bench the pod is bound and Running 1-3 s after the job's first write, so with 1 s the
// pending=1 write still went out in about half the jobs, just before the Running write that
// carries the counters anyway; a counter that moves alone is at most 3 s late.
constexpr auto kCounterWriteInterval = std::chrono::seconds(3);

// `a` and `b` differ, if at all, in the pod counters only.
bool OnlyCountersDiffer(const api::JobStatus& a, const api::JobStatus& b) {
  api::JobStatus x = a;
  x.pending = b.pending;
  x.running = b.running;
  x.succeeded = b.succeeded;
  x.failed = b.failed;
  x.terminating = b.terminating;
  x.unknown = b.unknown;
  x.task_status_count = b.task_status_count;
  x.running_duration = b.running_duration;
  return x == b;
}

std::optional<uint64_t> NumericVersion(std::string_view rv) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || p != rv.data() + rv.size()) return std::nullopt;
  return v;
}

// Whether resourceVersion `a` is at least as new as `b` (numeric comparison when both are
// numbers, as etcd's are; otherwise only equality counts).
bool AtLeastAsNew(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto na = NumericVersion(a), nb = NumericVersion(b);
  return na && nb && *na >= *nb;
}

}  // namespace

// What the reconciler remembers about one job between visits.
struct JobReconciler::JobMemory {
  std::mutex mu;  // guards requests only; the rest is touched by the job's worker alone
  std::deque<QueuedRequest> requests;

  std::string job_uid;  // the Job the rest is about
  DelayedActions delayed;
  std::shared_ptr<const json::Document> last_written;  // the Job as our last write left it
  std::string last_written_rv;
  PodExpectations pods;
  PodGroupMemory pod_group;
  int64_t plugins_updated_generation = -1;
  std::string last_action;  // the action of the last Execute, for the retry-limit event
  Clock::TimePoint last_status_write{};    // on the reconciler's clock
  bool all_pods_created_recorded = false;  // volcano_controller_job_e2e_creation_duration
};

// One visit: the Job decoded once, then replaced by what each write left.
struct JobReconciler::Work {
  std::string key;
  std::shared_ptr<JobMemory> memory;
  api::Job job;
  // CountsFromApi(job.status()): the counts the phase table starts from.
  JobCounts counts{};
  // status.controlledResources as this visit has changed it so far (plugins, PVCs).
  std::map<std::string, std::string> controlled{};
  // The job's plugins, created from the spec once per visit (on first use).
  std::optional<absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>> plugins{};
  // Why the job cannot progress (status.state.reason and message); empty when nothing is wrong.
  std::string problem_reason{};
  std::string problem_message{};
  // The spec has problems (ValidateJobSpec, or it does not decode): the sync creates nothing.
  bool spec_invalid = false;
  // The sync created what one visit may and more pods are missing: come back right away.
  bool more_pods_to_create = false;
  // A counters-only status change was held back (kCounterWriteInterval): come back then.
  std::optional<Clock::Duration> status_deferred{};
};

void JobReconciler::SetJob(Work& w, api::Job job) {
  w.job = std::move(job);
  w.counts = CountsFromApi(w.job.status());
  w.controlled = w.job.status().controlled_resources;
}

JobReconciler::JobReconciler(client::Client* client, JobListers listers,
                             JobReconcilerOptions options)
    : client_(client),
      listers_(listers),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      plugins_(NewJobPluginRegistry()),
      pool_(options.pod_concurrency),
      real_pods_(client, &pool_, PodControl::Options{clock_, options.pod_concurrency}),
      real_pod_groups_(client, listers.pod_groups),
      real_volumes_(client),
      real_plugin_objects_(client),
      real_status_(client),
      pod_control_(options.controls.pods != nullptr ? options.controls.pods : &real_pods_),
      pod_group_control_(options.controls.pod_groups != nullptr ? options.controls.pod_groups
                                                                : &real_pod_groups_),
      volume_control_(options.controls.volumes != nullptr ? options.controls.volumes
                                                          : &real_volumes_),
      plugin_objects_(options.controls.plugin_objects != nullptr ? options.controls.plugin_objects
                                                                 : &real_plugin_objects_),
      status_writer_(options.controls.status != nullptr ? options.controls.status : &real_status_) {
}

std::shared_ptr<JobReconciler::JobMemory> JobReconciler::MemoryFor(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto& m = memory_[key];
  if (!m) m = std::make_shared<JobMemory>();
  return m;
}

void JobReconciler::AddRequest(const std::string& key, QueuedRequest request) {
  std::shared_ptr<JobMemory> m = MemoryFor(key);
  std::lock_guard<std::mutex> l(m->mu);
  // A plain sync request adds nothing to a queue that already holds one: every visit ends with
  // a sync anyway. This keeps a burst of pod updates from growing the list.
  if (request.request.event == Event::kOutOfSync && !request.request.action &&
      !m->requests.empty() && m->requests.back().request.event == Event::kOutOfSync &&
      !m->requests.back().request.action) {
    return;
  }
  m->requests.push_back(std::move(request));
}

size_t JobReconciler::PendingRequests(const std::string& key) const {
  std::shared_ptr<JobMemory> m;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = memory_.find(key);
    if (it == memory_.end()) return 0;
    m = it->second;
  }
  std::lock_guard<std::mutex> l(m->mu);
  return m->requests.size();
}

bool JobReconciler::DeletedByController(const std::string& uid) const {
  return pod_control_->DeletedByController(uid);
}

void JobReconciler::RecordEvent(const Work& w, ctrlkit::EventType type, std::string_view reason,
                                std::string_view message) {
  if (options_.recorder != nullptr) options_.recorder->Event(w.job, type, reason, message);
}

std::vector<JobPodInfo> JobReconciler::PodsOf(const Work& w) const {
  std::vector<JobPodInfo> out;
  absl::StatusOr<std::vector<informer::Object>> objs =
      listers_.pods->ByIndex(kPodsByJobIndex, w.key);
  if (objs.ok()) {
    for (const informer::Object& o : *objs) {
      const json::Document* doc = o.TryAs<json::Document>();
      if (doc == nullptr) continue;
      std::optional<JobPodInfo> info = ReadJobPod(*doc);
      if (!info || info->job_uid != w.job.uid()) continue;
      out.push_back(std::move(*info));
    }
  }
  w.memory->pods.Observe(w.job, clock_->Now(), out);
  return out;
}

const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& JobReconciler::PluginsOf(
    Work& w) const {
  if (!w.plugins) w.plugins.emplace(plugins_.CreatePlugins(w.job.spec()));
  return *w.plugins;
}

ReconcileResult JobReconciler::Reconcile(const std::string& key) {
  std::shared_ptr<JobMemory> memory = MemoryFor(key);
  informer::Object cached = listers_.jobs->Get(key);
  if (!cached) {
    // Commands for a Job that does not exist are consumed all the same, so they do not linger
    // and act on a later Job of the same name.
    std::deque<QueuedRequest> orphans;
    {
      std::lock_guard<std::mutex> l(memory->mu);
      orphans.swap(memory->requests);
    }
    for (const QueuedRequest& q : orphans) ConsumeCommand(q);
    if (options_.metrics != nullptr) {
      const size_t slash = key.find('/');
      if (slash != std::string::npos) {
        options_.metrics->Remove(key.substr(0, slash), key.substr(slash + 1));
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    memory_.erase(key);
    return std::optional<Clock::Duration>();
  }
  const json::Document* doc = &cached.doc();
  if (memory->last_written) {
    if (AtLeastAsNew(cached.resource_version(), memory->last_written_rv) ||
        api::view::Uid(*memory->last_written) != api::view::Uid(cached.doc())) {
      memory->last_written.reset();
    } else {
      doc = memory->last_written.get();
    }
  }
  std::string spec_problem;
  BASALT_ASSIGN_OR_RETURN(api::Job job, DecodeJob(*doc, &spec_problem));
  if (job.deletion_timestamp()) return std::optional<Clock::Duration>();
  if (spec_problem.empty()) {
    std::vector<std::string> problems = ValidateJobSpec(job.spec());
    for (std::string& p : ValidateJobSize(job.spec(), options_.max_job_pods)) {
      problems.push_back(std::move(p));
    }
    spec_problem = JoinProblems(problems);
  }
  if (memory->job_uid != job.uid()) {
    // A new Job under a name seen before: what was remembered about the old one is void
    // (e.g. its pods expected by name would hide the new Job's missing pods).
    memory->job_uid = std::string(job.uid());
    memory->delayed = DelayedActions();
    memory->pods.Clear();
    memory->plugins_updated_generation = -1;
    memory->pod_group.uid.clear();
  }
  Work w{key, memory, std::move(job)};
  w.counts = CountsFromApi(w.job.status());
  w.controlled = w.job.status().controlled_resources;
  if (!spec_problem.empty()) {
    w.spec_invalid = true;
    // Recorded when first seen (the status does not say it yet); the spec changes before the
    // job can move, and each change brings a visit.
    const api::JobState& state = w.job.status().state;
    if (state.reason != "InvalidJobSpec" || state.message != spec_problem) {
      BASALT_LOG_WARNING("Job spec is invalid", "job", key, "problems", spec_problem);
      SetProblem(w, "InvalidJobSpec", spec_problem);
    } else {
      w.problem_reason = "InvalidJobSpec";
      w.problem_message = spec_problem;
    }
  }
  ReconcileResult result = Visit(w);
  if (!result.ok() && !w.problem_reason.empty()) {
    // The visit failed for a reason the user should see: say it in the status (the phase set
    // to Pending if the job had none yet), then retry with backoff.
    absl::Status s = WriteStatus(w, w.job.phase(), w.counts, /*kill_path=*/false);
    if (!s.ok())
      BASALT_VLOG(2, "Cannot write the job's problem", "job", key, "error", MessageOf(s));
  }
  return result;
}

void JobReconciler::SetProblem(Work& w, std::string_view reason, std::string message) {
  RecordEvent(w, ctrlkit::EventType::kWarning, reason, message);
  w.problem_reason = std::string(reason);
  w.problem_message = std::move(message);
}

void JobReconciler::RetriesExhausted(const std::string& key, int retries,
                                     const absl::Status& error) {
  informer::Object cached = listers_.jobs->Get(key);
  if (!cached || options_.recorder == nullptr) return;
  absl::StatusOr<api::Object> obj = api::Object::CopyOf(cached.doc());
  if (!obj.ok()) return;
  std::string action = "SyncJob";
  {
    std::shared_ptr<JobMemory> m = MemoryFor(key);
    if (!m->last_action.empty()) action = m->last_action;
  }
  std::string_view phase = api::view::JobPhase(cached.doc());
  options_.recorder->Event(
      *obj, ctrlkit::EventType::kWarning, "ExecuteAction",
      fmt::format("Job failed on action {} for retry limit reached ({} retries): {}; the job "
                  "stays {} and is handled again at the next change of the job, its pods, "
                  "PodGroup or queue",
                  action, retries, MessageOf(error), phase.empty() ? "Pending" : phase));
}

ReconcileResult JobReconciler::Visit(Work& w) {
  const std::string& key = w.key;
  const std::shared_ptr<JobMemory>& memory = w.memory;
  std::deque<QueuedRequest> requests;
  {
    std::lock_guard<std::mutex> l(memory->mu);
    requests.swap(memory->requests);
  }
  auto requeue_rest = [&](size_t from) {
    std::lock_guard<std::mutex> l(memory->mu);
    for (size_t i = requests.size(); i > from; --i) {
      memory->requests.push_front(std::move(requests[i - 1]));
    }
  };

  for (size_t i = 0; i < requests.size(); ++i) {
    const QueuedRequest& q = requests[i];
    if (!q.command_uid.empty()) {
      std::lock_guard<std::mutex> l(mu_);
      if (consumed_commands_.count(q.command_uid) > 0) continue;
    }
    if (!q.pod_uid.empty()) memory->delayed.OnPodEvent(q.request, q.pod_uid);
    ResolvedAction resolved = ResolvePolicy(w.job, q.request);
    if (resolved.delay.count() > 0) {
      if (memory->delayed.Arm(q.request, q.pod_uid, q.partition, resolved, clock_->Now())) {
        RecordEvent(w, ctrlkit::EventType::kNormal, resolved.event_reason(),
                    resolved.event_message());
      }
      continue;
    }
    if (resolved.action == Action::kSyncJob) {
      ConsumeCommand(q);
      continue;
    }
    BASALT_VLOG(2, "Executing action", "job", key, "action", resolved.action_name, "cause",
                resolved.cause);
    if (absl::Status s = Execute(w, resolved, q); !s.ok()) {
      requeue_rest(i);
      return s;
    }
    ConsumeCommand(q);
  }

  for (DelayedAction& due : memory->delayed.TakeDue(clock_->Now())) {
    QueuedRequest q;
    q.request.job_uid = w.job.uid();
    q.request.task = due.task;
    q.request.pod = due.pod;
    q.request.event = due.event;
    q.pod_uid = due.pod_uid;
    q.partition = due.partition;
    ResolvedAction action = due.action;
    action.delay = std::chrono::milliseconds(0);
    if (absl::Status s = Execute(w, action, q); !s.ok()) {
      // Due now: re-armed so the retry of this visit runs it again.
      memory->delayed.Arm(q.request, q.pod_uid, q.partition, due.action,
                          clock_->Now() - due.action.delay);
      return s;
    }
  }

  // Every visit ends with a sync: the level-triggered part.
  ResolvedAction sync;
  BASALT_RETURN_IF_ERROR(Execute(w, sync, QueuedRequest{}));

  std::optional<Clock::Duration> requeue;
  if (std::optional<Clock::TimePoint> next = memory->delayed.NextDue()) {
    requeue = std::max<Clock::Duration>(*next - clock_->Now(), std::chrono::milliseconds(1));
  }
  if (w.more_pods_to_create && (!requeue || *requeue > kMorePodsRequeue)) {
    requeue = kMorePodsRequeue;
  }
  if (w.status_deferred && (!requeue || *requeue > *w.status_deferred)) {
    requeue = w.status_deferred;
  }
  return requeue;
}

void JobReconciler::ConsumeCommand(const QueuedRequest& q) {
  if (q.command_uid.empty()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!consumed_commands_.insert(q.command_uid).second) return;
  }
  client::DeleteOptions o;
  o.precondition_uid = q.command_uid;
  absl::Status s = client_->Delete(client::Commands(), q.command_namespace, q.command_name, o);
  if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) {
    BASALT_LOG_WARNING("Cannot delete consumed Command", "command",
                       fmt::format("{}/{}", q.command_namespace, q.command_name), "error",
                       MessageOf(s));
  }
}

absl::Status JobReconciler::Execute(Work& w, const ResolvedAction& resolved,
                                    const QueuedRequest& request) {
  const JobPhase phase = w.job.phase();
  const Plan plan = PlanAction(phase, resolved.action, w.job.spec(), w.counts);
  const bool finished = IsFinishedPhase(phase) && plan.rule == PhaseRule::kKeep;
  if (resolved.action != Action::kSyncJob && !finished) {
    RecordEvent(w, ctrlkit::EventType::kNormal, resolved.event_reason(), resolved.event_message());
  }
  JobCounts counts;
  bool kill_path = false;
  w.memory->last_action = resolved.action_name;
  if (plan.effect == PodEffect::kSync) {
    BASALT_ASSIGN_OR_RETURN(counts, SyncJob(w));
    counts = ApplyBookkeeping(plan, counts);
  } else {
    kill_path = true;
    bool deleted_any = false;
    BASALT_ASSIGN_OR_RETURN(counts, KillPods(w, plan, resolved.action, request, &deleted_any));
    if (!deleted_any && (finished || resolved.action == Action::kSyncJob)) {
      kill_path = false;
      // Deliberate difference: Volcano bumps status.version on every re-kill (each visit of a
      // finished or draining job), even when nothing is left to kill; Basalt bumps it only
      // when a kill deletes pods or a user action asks for it, so a finished job's pod events
      // do not rewrite the Job over and over.
      Plan quiet = plan;
      quiet.bump_version = false;
      counts = ApplyBookkeeping(quiet, counts);
    } else {
      counts = ApplyBookkeeping(plan, counts);
    }
  }
  // An invalid spec moves nothing by itself: its sync created nothing to count.
  const JobPhase next = w.spec_invalid && plan.effect == PodEffect::kSync
                            ? phase
                            : NextPhase(plan, phase, counts, w.job.spec());
  BASALT_RETURN_IF_ERROR(WriteStatus(w, next, counts, kill_path));
  if (resolved.action != Action::kSyncJob) {
    w.memory->delayed.OnActionExecuted(resolved.action, request.request, request.partition);
  }
  return absl::OkStatus();
}

absl::StatusOr<JobCounts> JobReconciler::SyncJob(Work& w) {
  const JobPhase phase = w.job.phase();
  const bool initiating = w.job.status().state.phase.empty() || phase == JobPhase::kPending;
  if (w.spec_invalid) {
    // Nothing is created from a spec the webhook would have rejected; existing pods are
    // counted (a running job whose spec was edited into an invalid one keeps its pods).
    std::vector<PodSnapshot> snapshots;
    for (const JobPodInfo& p : PodsOf(w)) snapshots.push_back(ToSnapshot(p));
    return CountPods(snapshots, w.counts);
  }
  if (initiating && listers_.queues != nullptr && !listers_.queues->Get(w.job.spec().queue)) {
    // As in Volcano, a job is not initiated into a queue that does not exist; the queue's
    // creation brings the job back (job controller's Queue handler).
    std::string message =
        fmt::format("queue \"{}\" does not exist: the job stays Pending until the queue is created",
                    w.job.spec().queue);
    SetProblem(w, "QueueNotFound", message);
    return absl::FailedPreconditionError(message);
  }
  if (initiating) {
    BASALT_RETURN_IF_ERROR(RunPluginsOnJobAdd(w));
    BASALT_RETURN_IF_ERROR(EnsureVolumes(w));
  } else {
    BASALT_RETURN_IF_ERROR(RunPluginsOnJobUpdate(w));
  }
  // The PodGroup exists from initiation while the job runs. A Restarting job has none: its
  // whole-job kill deleted it, and it is recreated when the job is re-initiated (Pending), so
  // the scheduler admits the new gang only once the old pods are gone.
  std::string pg_phase;
  if (initiating || phase == JobPhase::kRunning) {
    BASALT_ASSIGN_OR_RETURN(pg_phase, EnsurePodGroup(w));
  }

  std::vector<JobPodInfo> pods = PodsOf(w);
  std::vector<PodSnapshot> snapshots;
  snapshots.reserve(pods.size());
  for (const JobPodInfo& p : pods) snapshots.push_back(ToSnapshot(p));
  if (!api::IsPodGroupAdmitted(pg_phase)) {
    RecordPodGroupPending(w);
    return CountPods(snapshots, w.counts);
  }

  // Decision 4: pods only once the PodGroup has been admitted.
  PodSyncPlan plan = PlanPodSync(w.job, snapshots, [&](const api::TaskSpec& task) {
    return TaskDependenciesMet(w.job, task, snapshots);
  });

  const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& plugins = PluginsOf(w);
  if (!plugins.ok()) {
    SetProblem(w, "PluginError", std::string(MessageOf(plugins.status())));
    return plugins.status();
  }

  // Only plan.create (at most kMaxPodCreatesPerSync) is ever held; more_missing brings the job
  // back for the rest.
  std::vector<PodCreation> creations;
  creations.reserve(plan.create.size());
  for (const auto& c : plan.create) {
    creations.push_back(PodCreation{MakePodName(w.job.name(), c.task, c.index), c.task, c.index});
  }
  const api::Job& job = w.job;
  PodCreationResult created = pod_control_->CreatePods(
      job.namespace_name(), creations,
      [&](const PodCreation& c) -> absl::StatusOr<json::Document> {
        const api::TaskSpec* task = job.spec().FindTask(c.task);
        if (task == nullptr) return absl::CancelledError("skipped");
        BASALT_ASSIGN_OR_RETURN(json::Document pod, BuildPod(job, *task, c.index));
        for (const auto& p : *plugins) {
          BASALT_RETURN_IF_ERROR(p->OnPodCreate(pod, job, *task, c.index));
        }
        return pod;
      },
      w.memory->pods);
  if (plan.more_missing && !created.stopped) w.more_pods_to_create = true;
  absl::Status first_error;
  std::string first_error_pod;
  int count = 0;
  for (size_t i = 0; i < creations.size(); ++i) {
    const PodCreation& c = creations[i];
    const absl::Status& r = created.results[i];
    if (absl::IsCancelled(r)) continue;  // skipped or never attempted
    if (r.ok()) {
      ++count;
      if (options_.metrics != nullptr && job.creation_timestamp()) {
        options_.metrics->PodCreated(clock_->WallNow() - *job.creation_timestamp());
      }
      PodSnapshot s;
      s.name = c.name;
      s.task = c.task;
      s.phase = "Pending";
      snapshots.push_back(std::move(s));
    } else if (first_error.ok()) {
      first_error = r;
      first_error_pod = fmt::format("pod {} of task {}", c.name, c.task);
    }
  }
  if (!first_error.ok()) {
    SetProblem(w, "FailedCreate",
               fmt::format("Error creating {}: {}", first_error_pod, MessageOf(first_error)));
  }
  if (count > 0) BASALT_VLOG(2, "Created pods", "job", w.key, "count", count);
  if (options_.metrics != nullptr && !w.memory->all_pods_created_recorded && !plan.more_missing &&
      first_error.ok() && count == static_cast<int>(creations.size()) && count > 0 &&
      job.creation_timestamp()) {
    // This visit created the last missing pods.
    options_.metrics->AllPodsCreated(job.namespace_name(), job.name(), job.spec().queue,
                                     clock_->WallNow() - *job.creation_timestamp());
    w.memory->all_pods_created_recorded = true;
  }

  for (const std::string& name : plan.remove) {
    for (const JobPodInfo& p : pods) {
      if (p.name != name || p.terminating) continue;
      absl::Status s = pod_control_->DeletePod(p, w.memory->pods);
      if (!s.ok()) {
        RecordEvent(w, ctrlkit::EventType::kWarning, "FailedDelete",
                    fmt::format("Error deleting pod {}: {}", name, MessageOf(s)));
        if (first_error.ok()) first_error = s;
        continue;
      }
      for (PodSnapshot& snap : snapshots) {
        if (snap.name == name) snap.terminating = true;
      }
    }
  }
  if (!first_error.ok()) return first_error;
  return CountPods(snapshots, w.counts);
}

void JobReconciler::RecordPodGroupPending(const Work& w) {
  // Why the gang waits, on the Job (kubectl describe vcjob): the newest True condition of the
  // PodGroup, unless it is Scheduled. The recorder aggregates repeats into one Event.
  std::optional<api::Condition> c = pod_group_control_->PendingCondition(w.job);
  if (!c) return;
  std::string type = c->type;
  for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  RecordEvent(w, ctrlkit::EventType::kWarning, "PodGroupPending",
              fmt::format("PodGroup {}:{} {}, reason: {}", w.job.namespace_name(), w.job.name(),
                          type, c->message));
}

absl::StatusOr<JobCounts> JobReconciler::KillPods(Work& w, const Plan& plan, Action action,
                                                  const QueuedRequest& request, bool* deleted_any) {
  std::vector<JobPodInfo> pods = PodsOf(w);
  std::vector<PodSnapshot> snapshots;
  snapshots.reserve(pods.size());
  for (const JobPodInfo& p : pods) snapshots.push_back(ToSnapshot(p));
  const KillTarget target{request.request.task, request.request.pod, request.partition};

  std::vector<const JobPodInfo*> victims;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].uid.empty()) continue;  // expected, not yet seen: nothing to delete
    if (ShouldKill(plan, action, snapshots[i], target)) victims.push_back(&pods[i]);
  }
  std::vector<absl::Status> results = pod_control_->DeletePods(victims, w.memory->pods);
  // A kill makes every expected creation moot.
  w.memory->pods.ForgetCreations();
  std::vector<std::string> deleted;
  absl::Status first_error;
  for (size_t i = 0; i < victims.size(); ++i) {
    if (results[i].ok()) {
      deleted.push_back(victims[i]->name);
    } else if (first_error.ok()) {
      first_error = results[i];
    }
  }
  *deleted_any = !deleted.empty();
  if (!first_error.ok()) {
    RecordEvent(
        w, ctrlkit::EventType::kWarning, "FailedDelete",
        fmt::format("Error deleting pods of job {}: {}", w.job.name(), MessageOf(first_error)));
  }
  JobCounts counts = AccountKill(snapshots, deleted, w.counts);
  if (plan.run_plugins_on_job_delete) BASALT_RETURN_IF_ERROR(RunPluginsOnJobDelete(w));
  if (plan.delete_pod_group) {
    BASALT_RETURN_IF_ERROR(pod_group_control_->Delete(w.job, w.memory->pod_group));
  }
  // The whole action is retried (its bookkeeping applied once, when every deletion worked).
  if (!first_error.ok()) return first_error;
  return counts;
}

absl::StatusOr<std::string> JobReconciler::EnsurePodGroup(Work& w) {
  PriorityClassValues priorities;
  if (listers_.priority_classes != nullptr) {
    for (const informer::Object& o : listers_.priority_classes->List()) {
      if (const json::Document* d = o.TryAs<json::Document>()) {
        priorities[std::string(o.name())] = static_cast<int32_t>(api::view::PriorityClassValue(*d));
      }
    }
  }
  absl::StatusOr<json::Document> desired = BuildPodGroup(w.job, priorities);
  if (!desired.ok()) {
    SetProblem(w, "PodGroupError", std::string(MessageOf(desired.status())));
    return desired.status();
  }
  std::string problem;
  const bool running = w.job.Initiated() && w.job.phase() == JobPhase::kRunning;
  absl::StatusOr<PodGroupControl::Ensured> ensured =
      pod_group_control_->Ensure(w.job, *desired, running, w.memory->pod_group, &problem);
  if (!ensured.ok()) {
    if (!problem.empty()) SetProblem(w, "PodGroupError", std::move(problem));
    return ensured.status();
  }
  if (ensured->recreated) {
    const std::string key = JobKey(w.job.namespace_name(), w.job.name());
    RecordEvent(w, ctrlkit::EventType::kWarning, "PodGroupRecreated",
                fmt::format("PodGroup {} of the job was deleted while the job was {}; "
                            "created it again",
                            key, JobPhaseName(w.job.phase())));
    BASALT_LOG_INFO("Re-created a PodGroup deleted by someone else", "podgroup", key);
  }
  return ensured->phase;
}

absl::Status JobReconciler::EnsureVolumes(Work& w) {
  if (w.job.spec().volumes.empty()) return absl::OkStatus();
  std::string problem;
  absl::StatusOr<std::optional<json::Document>> patched =
      volume_control_->NameClaims(w.job, &problem);
  if (!patched.ok()) {
    SetProblem(w, "PVCError", std::move(problem));
    return patched.status();
  }
  if (patched->has_value()) {
    // Later writes (the status) go on top of the patched Job, whose volumes now name their
    // claims; the controlled resources recorded so far in this visit are kept.
    auto shared = std::make_shared<json::Document>(std::move(**patched));
    BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::CopyOf(*shared));
    BASALT_ASSIGN_OR_RETURN(w.job, api::Job::FromObject(std::move(obj)));
    w.memory->last_written_rv = std::string(api::view::ResourceVersion(*shared));
    w.memory->last_written = std::move(shared);
  }
  if (absl::Status s = volume_control_->EnsureClaims(w.job, w.controlled, &problem); !s.ok()) {
    SetProblem(w, "PVCError", std::move(problem));
    return s;
  }
  return absl::OkStatus();
}

absl::Status JobReconciler::RunPluginsOnJobAdd(Work& w) {
  if (w.job.spec().plugins.empty()) return absl::OkStatus();
  const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& plugins = PluginsOf(w);
  if (!plugins.ok()) {
    SetProblem(w, "PluginError", std::string(MessageOf(plugins.status())));
    return plugins.status();
  }
  for (const auto& p : *plugins) {
    if (!NeedsOnJobAdd(w.job, p->Name())) continue;
    absl::StatusOr<std::vector<json::Document>> objects = p->OnJobAdd(w.job);
    if (!objects.ok()) {
      SetProblem(w, "PluginError", std::string(MessageOf(objects.status())));
      return objects.status();
    }
    if (absl::Status s = plugin_objects_->Create(w.job.namespace_name(), *objects); !s.ok()) {
      SetProblem(w, "PluginError", fmt::format("plugin {}: {}", p->Name(), MessageOf(s)));
      return s;
    }
    w.controlled[ControlledResourceKey(p->Name())] = std::string(p->Name());
  }
  return absl::OkStatus();
}

absl::Status JobReconciler::RunPluginsOnJobUpdate(Work& w) {
  if (w.job.spec().plugins.empty()) return absl::OkStatus();
  // Only when the spec changed (metadata.generation): the objects depend on the spec alone.
  const int64_t generation = w.job.generation();
  if (w.memory->plugins_updated_generation == generation) return absl::OkStatus();
  const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& plugins = PluginsOf(w);
  if (!plugins.ok()) {
    SetProblem(w, "PluginError", std::string(MessageOf(plugins.status())));
    return plugins.status();
  }
  for (const auto& p : *plugins) {
    absl::StatusOr<std::vector<json::Document>> objects = p->OnJobUpdate(w.job);
    if (!objects.ok()) return objects.status();
    BASALT_RETURN_IF_ERROR(plugin_objects_->Apply(w.job.namespace_name(), *std::move(objects)));
  }
  w.memory->plugins_updated_generation = generation;
  return absl::OkStatus();
}

absl::Status JobReconciler::RunPluginsOnJobDelete(Work& w) {
  if (w.job.spec().plugins.empty()) return absl::OkStatus();
  const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& plugins = PluginsOf(w);
  if (!plugins.ok()) return absl::OkStatus();  // nothing of theirs was created
  for (const auto& p : *plugins) {
    const std::string key = ControlledResourceKey(p->Name());
    if (w.controlled.count(key) == 0) continue;
    BASALT_RETURN_IF_ERROR(plugin_objects_->Delete(p->OnJobDelete(w.job)));
    w.controlled.erase(key);
  }
  w.memory->plugins_updated_generation = -1;
  return absl::OkStatus();
}

absl::Status JobReconciler::WriteStatus(Work& w, JobPhase next, const JobCounts& counts,
                                        bool kill_path) {
  StatusUpdate update;
  update.phase = next;
  update.counts = counts;
  update.spec_min_available = w.job.spec().min_available;
  update.controlled_resources = w.controlled;
  update.reason = w.problem_reason;
  update.message = w.problem_message;
  if (kill_path) update.creation_timestamp = w.job.creation_timestamp();
  const api::Time now = clock_->WallNow();
  std::optional<api::JobStatus> status = NextJobStatus(w.job.status(), update, now);
  if (!status) return absl::OkStatus();
  const Clock::TimePoint at = clock_->Now();
  if (w.memory->last_status_write != Clock::TimePoint() &&
      at - w.memory->last_status_write < kCounterWriteInterval &&
      OnlyCountersDiffer(w.job.status(), *status)) {
    w.status_deferred = kCounterWriteInterval - (at - w.memory->last_status_write);
    return absl::OkStatus();
  }
  BASALT_ASSIGN_OR_RETURN(JobStatusWriter::Written written, status_writer_->Write(w.job, *status));
  w.memory->last_status_write = at;
  w.status_deferred.reset();
  if (std::string_view(w.job.status().state.phase) != JobPhaseName(next)) {
    BASALT_VLOG(1, "Job phase changed", "job", w.key, "from", w.job.status().state.phase, "to",
                JobPhaseName(next));
    if (options_.metrics != nullptr) {
      options_.metrics->PhaseReached(w.job.namespace_name(), w.job.name(), w.job.spec().queue,
                                     next);
    }
  }
  // The Job is now what we wrote, at the version the API server gave it (no second decode);
  // the written document is what the next visit starts from while the cache lags.
  w.memory->last_written_rv = std::string(written.job.resource_version());
  w.memory->last_written = std::move(written.doc);
  SetJob(w, std::move(written.job));
  return absl::OkStatus();
}

}  // namespace basalt::controllers
