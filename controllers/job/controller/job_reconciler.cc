#include "controllers/job/controller/job_reconciler.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <utility>

#include "common/api/object.h"
#include "common/api/time.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "controllers/app/controller.h"
#include "controllers/job/pods/pod_group.h"
#include "controllers/job/pods/pods.h"
#include "controllers/job/state/state.h"
#include "controllers/job/status/status.h"
#include "controllers/job/validate/validate.h"
#include "fmt/format.h"

namespace basalt::controllers {

namespace {

constexpr auto kCreatedExpectation = std::chrono::seconds(60);
constexpr auto kOwnDeletionMemory = std::chrono::minutes(30);
// How soon a job whose sync left missing pods for later (PodSyncPlan::more_missing) comes back.
constexpr auto kMorePodsRequeue = std::chrono::milliseconds(1);

absl::Status NotAttempted() { return absl::CancelledError("not attempted"); }

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

std::string_view StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* p = json::FindPath(v, path);
  return p != nullptr ? json::AsView(*p) : std::string_view();
}

// The REST resource of a namespaced object a job plugin owns.
client::ResourceRef ResourceOf(std::string_view api_version, std::string_view kind) {
  client::ResourceRef r;
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    r.version = std::string(api_version);
  } else {
    r.group = std::string(api_version.substr(0, slash));
    r.version = std::string(api_version.substr(slash + 1));
  }
  std::string plural;
  for (char c : kind) plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!plural.empty() && plural.back() == 'y') {
    plural.back() = 'i';
    plural += "es";
  } else if (!plural.empty() && plural.back() == 's') {
    plural += "es";
  } else {
    plural += 's';
  }
  r.resource = plural;
  r.kind = std::string(kind);
  r.namespaced = true;
  return r;
}

// Whether every member of `want` is present and equal in `have` (objects compared member by
// member, so fields the API server defaulted in `have` do not count as differences).
bool IsSubset(const json::Value& want, const json::Value& have) {
  if (want.IsObject()) {
    if (!have.IsObject()) return false;
    for (auto it = want.MemberBegin(); it != want.MemberEnd(); ++it) {
      const json::Value* h = json::Find(have, json::AsView(it->name));
      if (h == nullptr || !IsSubset(it->value, *h)) return false;
    }
    return true;
  }
  return want == have;
}

// The Job in `doc`, decoded once. Only the spec can fail to decode in ways the CRD schema does
// not catch (e.g. a policy timeout that is not a Go duration): then `spec_problem` says why and
// the Job is decoded without its spec, the rest of it (metadata, status) being still usable.
absl::StatusOr<api::Job> DecodeJob(const json::Value& doc, std::string* spec_problem) {
  BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::CopyOf(doc));
  const std::string described = fmt::format("Job {}/{}: ", obj.namespace_name(), obj.name());
  absl::StatusOr<api::Job> job = api::Job::FromObject(std::move(obj));
  if (job.ok() || json::Find(doc, "spec") == nullptr) return job;
  std::string_view message = MessageOf(job.status());
  if (message.substr(0, described.size()) == described) message.remove_prefix(described.size());
  if (message.substr(0, 5) == "spec.") message.remove_prefix(5);
  *spec_problem = fmt::format("spec: {}", message);
  BASALT_ASSIGN_OR_RETURN(api::Object without_spec, api::Object::CopyOf(doc));
  json::Remove(without_spec.mutable_doc(), "spec");
  return api::Job::FromObject(std::move(without_spec));
}

}  // namespace

// What the reconciler remembers about one job between visits.
struct JobReconciler::JobMemory {
  std::mutex mu;  // guards requests only; the rest is touched by the job's worker alone
  std::deque<QueuedRequest> requests;

  std::string job_uid;  // the Job the rest is about
  DelayedActions delayed;
  std::shared_ptr<const json::Document> last_written;  // the Job as our last status write left it
  std::string last_written_rv;
  std::set<std::string> deleted_pod_groups;              // UIDs
  std::map<std::string, Clock::TimePoint> created_pods;  // name -> created at
  std::map<std::string, std::string> deleted_pods;       // name -> UID
  int64_t plugins_updated_generation = -1;
  // UID of the job's PodGroup as last seen or created ("" after we deleted it): a PodGroup
  // that disappears otherwise was deleted by someone else.
  std::string pod_group_uid;
  std::string last_action;  // the action of the last Execute, for the retry-limit event
};

// One visit: the Job as currently known, re-parsed after each status write.
struct JobReconciler::Work {
  std::string key;
  std::shared_ptr<JobMemory> memory;
  api::Job job;
  // CountsFromApi(job.status()): the counts the phase table starts from.
  JobCounts counts{};
  // status.controlledResources as this visit has changed it so far (plugins, PVCs).
  std::map<std::string, std::string> controlled{};
  // Why the job cannot progress (status.state.reason and message); empty when nothing is wrong.
  std::string problem_reason{};
  std::string problem_message{};
  // The spec has problems (ValidateJobSpec, or it does not parse): the sync creates nothing.
  bool spec_invalid = false;
  // The sync created what one visit may and more pods are missing: come back right away.
  bool more_pods_to_create = false;
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
      plugins_(NewJobPluginRegistry()) {}

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
  std::lock_guard<std::mutex> l(mu_);
  return own_deletions_.count(uid) > 0;
}

void JobReconciler::RememberOwnDeletion(const std::string& uid) {
  const Clock::TimePoint now = clock_->Now();
  std::lock_guard<std::mutex> l(mu_);
  own_deletions_[uid] = now;
  if (++own_deletions_since_prune_ >= 1024) {
    own_deletions_since_prune_ = 0;
    std::erase_if(own_deletions_,
                  [&](const auto& kv) { return now - kv.second > kOwnDeletionMemory; });
  }
}

void JobReconciler::RecordEvent(const Work& w, controller::EventType type, std::string_view reason,
                                std::string_view message) {
  if (options_.recorder != nullptr) options_.recorder->Event(w.job, type, reason, message);
}

std::vector<JobPodInfo> JobReconciler::PodsOf(const Work& w) const {
  std::vector<JobPodInfo> out;
  absl::StatusOr<std::vector<informer::Object>> objs =
      listers_.pods->ByIndex(kPodsByJobIndex, w.key);
  if (!objs.ok()) return out;
  for (const informer::Object& o : *objs) {
    const json::Document* doc = o.TryAs<json::Document>();
    if (doc == nullptr) continue;
    std::optional<JobPodInfo> info = ReadJobPod(*doc);
    if (!info || info->job_uid != w.job.uid()) continue;
    out.push_back(std::move(*info));
  }
  // Pods we deleted count as terminating until the cache sees them go; pods we created and the
  // cache has not seen yet count as Pending.
  JobMemory& m = *w.memory;
  std::set<std::string> seen;
  for (JobPodInfo& p : out) {
    seen.insert(p.name);
    auto d = m.deleted_pods.find(p.name);
    if (d != m.deleted_pods.end() && d->second == p.uid) p.terminating = true;
    m.created_pods.erase(p.name);
  }
  std::erase_if(m.deleted_pods, [&](const auto& kv) { return seen.count(kv.first) == 0; });
  const Clock::TimePoint now = clock_->Now();
  for (auto it = m.created_pods.begin(); it != m.created_pods.end();) {
    if (now - it->second > kCreatedExpectation) {
      it = m.created_pods.erase(it);
      continue;
    }
    JobPodInfo p;
    p.name = it->first;
    p.namespace_name = w.job.namespace_name();
    p.job_name = w.job.name();
    p.job_uid = w.job.uid();
    p.phase = "Pending";
    // The task is the one whose pod names match; names are <job>-<task>-<index>.
    for (const api::TaskSpec& t : w.job.spec().tasks) {
      const std::string prefix = fmt::format("{}-{}-", w.job.name(), t.name);
      if (it->first.rfind(prefix, 0) == 0) p.task = t.name;
    }
    out.push_back(std::move(p));
    ++it;
  }
  return out;
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
    std::lock_guard<std::mutex> l(mu_);
    memory_.erase(key);
    return std::optional<Clock::Duration>();
  }
  const json::Document* doc = &cached.doc();
  if (memory->last_written) {
    if (AtLeastAsNew(cached.resource_version(), memory->last_written_rv) ||
        StringAt(*memory->last_written, {"metadata", "uid"}) !=
            StringAt(cached.doc(), {"metadata", "uid"})) {
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
    memory->created_pods.clear();
    memory->deleted_pods.clear();
    memory->plugins_updated_generation = -1;
    memory->pod_group_uid.clear();
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
  RecordEvent(w, controller::EventType::kWarning, reason, message);
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
  std::string_view phase = StringAt(cached.doc(), {"status", "state", "phase"});
  options_.recorder->Event(
      *obj, controller::EventType::kWarning, "ExecuteAction",
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
        RecordEvent(w, controller::EventType::kNormal, resolved.event_reason(),
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
    RecordEvent(w, controller::EventType::kNormal, resolved.event_reason(),
                resolved.event_message());
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

  absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> plugins =
      plugins_.CreatePlugins(w.job.spec());
  if (!plugins.ok()) {
    SetProblem(w, "PluginError", std::string(MessageOf(plugins.status())));
    return plugins.status();
  }

  // Creation in slow-start batches (1, 2, 4, ... pods, as Kubernetes' ReplicaSet controller
  // does): a template the API server rejects, a quota or an outage costs a few requests, not
  // one per missing pod. A batch in which a create failed ends the visit's creations, except
  // for 422 Invalid: that task's other pods would be rejected the same way and are skipped,
  // while the other tasks carry on. Only plan.create (at most kMaxPodCreatesPerSync) is ever
  // held; more_missing brings the job back for the rest.
  std::vector<absl::Status> results(plan.create.size(), NotAttempted());
  std::mutex rejected_mu;
  std::set<std::string> rejected_tasks;
  const absl::Status kSkipped = absl::CancelledError("skipped");
  auto create_one = [&](size_t i) {
    const auto& c = plan.create[i];
    const api::TaskSpec* task = w.job.spec().FindTask(c.task);
    if (task == nullptr) {
      results[i] = kSkipped;
      return;
    }
    {
      std::lock_guard<std::mutex> l(rejected_mu);
      if (rejected_tasks.count(c.task) > 0) {
        results[i] = kSkipped;
        return;
      }
    }
    absl::StatusOr<json::Document> pod = BuildPod(w.job, *task, c.index);
    if (!pod.ok()) {
      results[i] = pod.status();
      return;
    }
    for (const auto& p : *plugins) {
      if (absl::Status s = p->OnPodCreate(*pod, w.job, *task, c.index); !s.ok()) {
        results[i] = s;
        return;
      }
    }
    absl::StatusOr<json::Document> created =
        client_->Create(client::Pods(), w.job.namespace_name(), json::Serialize(*pod));
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
      results[i] = created.status();
      if (client::IsInvalid(created.status())) {
        std::lock_guard<std::mutex> l(rejected_mu);
        rejected_tasks.insert(c.task);
      }
      return;
    }
    results[i] = absl::OkStatus();
  };
  bool stopped = false;
  for (size_t begin = 0, batch = 1; begin < plan.create.size() && !stopped; batch *= 2) {
    const size_t n = std::min(batch, plan.create.size() - begin);
    ParallelFor(n, options_.pod_concurrency, [&](size_t k) { create_one(begin + k); });
    for (size_t i = begin; i < begin + n; ++i) {
      if (!results[i].ok() && !absl::IsCancelled(results[i]) && !client::IsInvalid(results[i])) {
        stopped = true;
      }
    }
    begin += n;
  }
  if (plan.more_missing && !stopped) w.more_pods_to_create = true;
  absl::Status first_error;
  std::string first_error_pod;
  int created = 0;
  const Clock::TimePoint now = clock_->Now();
  for (size_t i = 0; i < plan.create.size(); ++i) {
    const auto& c = plan.create[i];
    if (absl::IsCancelled(results[i])) continue;  // skipped or never attempted
    const std::string name = MakePodName(w.job.name(), c.task, c.index);
    if (results[i].ok()) {
      ++created;
      w.memory->created_pods[name] = now;
      PodSnapshot s;
      s.name = name;
      s.task = c.task;
      s.phase = "Pending";
      snapshots.push_back(std::move(s));
    } else if (first_error.ok()) {
      first_error = results[i];
      first_error_pod = fmt::format("pod {} of task {}", name, c.task);
    }
  }
  if (!first_error.ok()) {
    SetProblem(w, "FailedCreate",
               fmt::format("Error creating {}: {}", first_error_pod, MessageOf(first_error)));
  }
  if (created > 0) BASALT_VLOG(2, "Created pods", "job", w.key, "count", created);

  for (const std::string& name : plan.remove) {
    for (const JobPodInfo& p : pods) {
      if (p.name != name || p.terminating) continue;
      absl::Status s = DeletePod(w, p);
      if (!s.ok()) {
        RecordEvent(w, controller::EventType::kWarning, "FailedDelete",
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
  informer::Object pg = listers_.pod_groups->Get(JobKey(w.job.namespace_name(), w.job.name()));
  if (!pg) return;
  const json::Value* conditions = json::FindPath(pg.doc(), {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) return;
  const json::Value* newest = nullptr;
  std::string_view newest_time;
  for (const auto& c : conditions->GetArray()) {
    if (json::GetString(c, "status") != "True") continue;
    std::string_view t = json::GetString(c, "lastTransitionTime");
    if (newest == nullptr || t >= newest_time) {
      newest = &c;
      newest_time = t;
    }
  }
  if (newest == nullptr || json::GetString(*newest, "type") == api::kPodGroupScheduled) return;
  std::string type(json::GetString(*newest, "type"));
  for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  RecordEvent(w, controller::EventType::kWarning, "PodGroupPending",
              fmt::format("PodGroup {}:{} {}, reason: {}", w.job.namespace_name(), w.job.name(),
                          type, json::GetString(*newest, "message")));
}

absl::Status JobReconciler::DeletePod(Work& w, const JobPodInfo& pod) {
  RememberOwnDeletion(pod.uid);
  if (!pod.out_of_sync) {
    absl::StatusOr<json::Document> patched = client_->Patch(
        client::Pods(), pod.namespace_name, pod.name, client::PatchType::kMerge, OutOfSyncPatch());
    if (!patched.ok()) {
      if (absl::IsNotFound(patched.status())) return absl::OkStatus();
      return patched.status();
    }
  }
  client::DeleteOptions o;
  o.precondition_uid = pod.uid;
  absl::Status s = client_->Delete(client::Pods(), pod.namespace_name, pod.name, o);
  if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
  w.memory->deleted_pods[pod.name] = pod.uid;
  w.memory->created_pods.erase(pod.name);
  return absl::OkStatus();
}

absl::StatusOr<JobCounts> JobReconciler::KillPods(Work& w, const Plan& plan, Action action,
                                                  const QueuedRequest& request, bool* deleted_any) {
  std::vector<JobPodInfo> pods = PodsOf(w);
  std::vector<PodSnapshot> snapshots;
  snapshots.reserve(pods.size());
  for (const JobPodInfo& p : pods) snapshots.push_back(ToSnapshot(p));
  const KillTarget target{request.request.task, request.request.pod, request.partition};

  std::vector<size_t> victims;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].uid.empty()) continue;  // expected, not yet seen: nothing to delete
    if (ShouldKill(plan, action, snapshots[i], target)) victims.push_back(i);
  }
  std::vector<absl::Status> results(victims.size());
  std::mutex memory_mu;  // DeletePod touches the job memory
  ParallelFor(victims.size(), options_.pod_concurrency, [&](size_t i) {
    const JobPodInfo& p = pods[victims[i]];
    RememberOwnDeletion(p.uid);
    absl::Status s;
    if (!p.out_of_sync) {
      absl::StatusOr<json::Document> patched = client_->Patch(
          client::Pods(), p.namespace_name, p.name, client::PatchType::kMerge, OutOfSyncPatch());
      if (!patched.ok()) {
        results[i] = absl::IsNotFound(patched.status()) ? absl::OkStatus() : patched.status();
        return;
      }
    }
    client::DeleteOptions o;
    o.precondition_uid = p.uid;
    s = client_->Delete(client::Pods(), p.namespace_name, p.name, o);
    if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) {
      results[i] = s;
      return;
    }
    std::lock_guard<std::mutex> l(memory_mu);
    w.memory->deleted_pods[p.name] = p.uid;
  });
  // A kill makes every expected creation moot.
  w.memory->created_pods.clear();
  std::vector<std::string> deleted;
  absl::Status first_error;
  for (size_t i = 0; i < victims.size(); ++i) {
    if (results[i].ok()) {
      deleted.push_back(pods[victims[i]].name);
    } else if (first_error.ok()) {
      first_error = results[i];
    }
  }
  *deleted_any = !deleted.empty();
  if (!first_error.ok()) {
    RecordEvent(
        w, controller::EventType::kWarning, "FailedDelete",
        fmt::format("Error deleting pods of job {}: {}", w.job.name(), MessageOf(first_error)));
  }
  JobCounts counts = AccountKill(snapshots, deleted, w.counts);
  if (plan.run_plugins_on_job_delete) BASALT_RETURN_IF_ERROR(RunPluginsOnJobDelete(w));
  if (plan.delete_pod_group) BASALT_RETURN_IF_ERROR(DeletePodGroup(w));
  // The whole action is retried (its bookkeeping applied once, when every deletion worked).
  if (!first_error.ok()) return first_error;
  return counts;
}

absl::Status JobReconciler::DeletePodGroup(Work& w) {
  informer::Object cached = listers_.pod_groups->Get(JobKey(w.job.namespace_name(), w.job.name()));
  if (!cached) return absl::OkStatus();
  const std::string uid(StringAt(cached.doc(), {"metadata", "uid"}));
  if (w.memory->deleted_pod_groups.count(uid) > 0) return absl::OkStatus();
  if (!PodGroupOwnedBy(cached.doc(), w.job.uid())) return absl::OkStatus();
  client::DeleteOptions o;
  o.precondition_uid = uid;
  absl::Status s = client_->Delete(client::PodGroups(), w.job.namespace_name(), w.job.name(), o);
  if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
  w.memory->deleted_pod_groups.insert(uid);
  w.memory->pod_group_uid.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::string> JobReconciler::EnsurePodGroup(Work& w) {
  PriorityClassValues priorities;
  if (listers_.priority_classes != nullptr) {
    for (const informer::Object& o : listers_.priority_classes->List()) {
      if (const json::Document* d = o.TryAs<json::Document>()) {
        priorities[std::string(o.name())] = static_cast<int32_t>(json::GetInt(*d, "value"));
      }
    }
  }
  absl::StatusOr<json::Document> desired = BuildPodGroup(w.job, priorities);
  if (!desired.ok()) {
    SetProblem(w, "PodGroupError", std::string(MessageOf(desired.status())));
    return desired.status();
  }
  const std::string key = JobKey(w.job.namespace_name(), w.job.name());
  informer::Object cached = listers_.pod_groups->Get(key);
  std::shared_ptr<const json::Document> existing;
  if (cached) {
    const std::string uid(StringAt(cached.doc(), {"metadata", "uid"}));
    if (w.memory->deleted_pod_groups.count(uid) > 0) {
      cached = informer::Object();
    } else if (!PodGroupOwnedBy(cached.doc(), w.job.uid())) {
      // Decision 3: a PodGroup of an earlier Job with this name; replace it.
      client::DeleteOptions o;
      o.precondition_uid = uid;
      absl::Status s =
          client_->Delete(client::PodGroups(), w.job.namespace_name(), w.job.name(), o);
      if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
      w.memory->deleted_pod_groups.insert(uid);
      BASALT_LOG_INFO("Deleted a stale PodGroup of an earlier Job", "podgroup", key, "uid", uid);
      cached = informer::Object();
    } else {
      existing = cached.Share<json::Document>();
      w.memory->pod_group_uid = uid;
    }
  }
  if (!existing) {
    // Basalt deletes a job's PodGroup only on whole-job kills, after which the job is not
    // Running; a PodGroup missing otherwise was deleted by someone else (by hand, a script).
    const bool lost = (!w.memory->pod_group_uid.empty() &&
                       w.memory->deleted_pod_groups.count(w.memory->pod_group_uid) == 0) ||
                      (!w.job.status().state.phase.empty() && w.job.phase() == JobPhase::kRunning);
    absl::StatusOr<json::Document> created =
        client_->Create(client::PodGroups(), w.job.namespace_name(), json::Serialize(*desired));
    if (created.ok()) {
      w.memory->pod_group_uid = std::string(StringAt(*created, {"metadata", "uid"}));
      if (lost) {
        RecordEvent(w, controller::EventType::kWarning, "PodGroupRecreated",
                    fmt::format("PodGroup {} of the job was deleted while the job was {}; "
                                "created it again",
                                key, JobPhaseName(w.job.phase())));
        BASALT_LOG_INFO("Re-created a PodGroup deleted by someone else", "podgroup", key);
      }
      return std::string(StringAt(*created, {"status", "phase"}));
    }
    if (!absl::IsAlreadyExists(created.status())) {
      SetProblem(w, "PodGroupError",
                 fmt::format("Error creating PodGroup {}: {}", key, MessageOf(created.status())));
      return created.status();
    }
    BASALT_ASSIGN_OR_RETURN(json::Document got, client_->Get(client::PodGroups(),
                                                             w.job.namespace_name(), w.job.name()));
    const std::string uid(StringAt(got, {"metadata", "uid"}));
    if (!PodGroupOwnedBy(got, w.job.uid()) || w.memory->deleted_pod_groups.count(uid) > 0) {
      return absl::UnavailableError(
          fmt::format("PodGroup {} of an earlier job is still being deleted", key));
    }
    return std::string(StringAt(got, {"status", "phase"}));
  }
  if (PodGroupSpecDiffers(*existing, *desired)) {
    const json::Value* spec = json::Find(*desired, "spec");
    if (spec != nullptr) {
      json::Document patch(rapidjson::kObjectType);
      json::Value copy(*spec, patch.GetAllocator());
      json::Set(patch, "spec", std::move(copy), patch.GetAllocator());
      absl::StatusOr<json::Document> r =
          client_->Patch(client::PodGroups(), w.job.namespace_name(), w.job.name(),
                         client::PatchType::kMerge, json::Serialize(patch));
      if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
    }
  }
  return std::string(StringAt(*existing, {"status", "phase"}));
}

absl::Status JobReconciler::EnsureVolumes(Work& w) {
  if (w.job.spec().volumes.empty()) return absl::OkStatus();
  // 1. Volumes with a volumeClaim and no volumeClaimName get a generated name, written back
  //    into the Job's spec (as Volcano does), so users and pods see the claim's name.
  std::string patch;
  for (size_t i = 0; i < w.job.spec().volumes.size(); ++i) {
    const api::JobVolume& v = w.job.spec().volumes[i];
    if (!v.volume_claim_name.empty() || !v.volume_claim) continue;
    patch +=
        fmt::format(R"(,{{"op":"add","path":"/spec/volumes/{}/volumeClaimName","value":"{}"}})", i,
                    GeneratedPvcName(w.job.name(), w.job.uid(), i));
  }
  if (!patch.empty()) {
    patch = fmt::format(R"([{{"op":"test","path":"/metadata/uid","value":"{}"}}{}])", w.job.uid(),
                        patch);
    absl::StatusOr<json::Document> patched =
        client_->Patch(client::VolcanoJobs(), w.job.namespace_name(), w.job.name(),
                       client::PatchType::kJsonPatch, patch);
    if (!patched.ok()) {
      SetProblem(w, "PVCError",
                 fmt::format("Cannot record the generated PVC names in the job: {}",
                             MessageOf(patched.status())));
      return patched.status();
    }
    // Later writes (the status) go on top of the patched Job, whose volumes now name their
    // claims (set here too, as the patch did); the controlled resources recorded so far in this
    // visit are kept.
    json::Value* spec_value = json::FindMutable(*patched, "spec");
    if (json::Value* vols =
            spec_value != nullptr ? json::FindMutable(*spec_value, "volumes") : nullptr;
        vols != nullptr && vols->IsArray()) {
      for (size_t i = 0; i < w.job.spec().volumes.size() && i < vols->Size(); ++i) {
        const api::JobVolume& v = w.job.spec().volumes[i];
        json::Value& out = (*vols)[static_cast<rapidjson::SizeType>(i)];
        if (!v.volume_claim_name.empty() || !v.volume_claim || !out.IsObject()) continue;
        json::Set(out, "volumeClaimName",
                  json::MakeString(GeneratedPvcName(w.job.name(), w.job.uid(), i),
                                   patched->GetAllocator()),
                  patched->GetAllocator());
      }
    }
    auto shared = std::make_shared<json::Document>(std::move(*patched));
    BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::CopyOf(*shared));
    BASALT_ASSIGN_OR_RETURN(w.job, api::Job::FromObject(std::move(obj)));
    w.memory->last_written_rv = std::string(StringAt(*shared, {"metadata", "resourceVersion"}));
    w.memory->last_written = std::move(shared);
  }
  // 2. Each claim exists: created from volumeClaim (owned by the Job), or, for a volume that
  //    names a claim without volumeClaim, created by the user. Checked once per claim: the
  //    claim is then recorded in status.controlledResources["volume-pvc-<name>"].
  for (const api::JobVolume& v : w.job.spec().volumes) {
    const std::string& name = v.volume_claim_name;
    if (name.empty()) continue;
    const std::string key = fmt::format("volume-pvc-{}", name);
    if (w.controlled.count(key) > 0) continue;
    absl::StatusOr<json::Document> existing =
        client_->Get(client::PersistentVolumeClaims(), w.job.namespace_name(), name);
    if (absl::IsNotFound(existing.status())) {
      if (!v.volume_claim) {
        std::string message = fmt::format(
            "pvc {} is not found, the job will be in the Pending state until the PVC is created",
            name);
        SetProblem(w, "PVCError", message);
        return absl::FailedPreconditionError(message);
      }
      absl::StatusOr<json::Document> created =
          client_->Create(client::PersistentVolumeClaims(), w.job.namespace_name(),
                          json::Serialize(BuildPvc(w.job, v, name)));
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        SetProblem(w, "PVCError",
                   fmt::format("Error creating PersistentVolumeClaim {}: {}", name,
                               MessageOf(created.status())));
        return created.status();
      }
    } else if (!existing.ok()) {
      SetProblem(w, "PVCError",
                 fmt::format("Cannot read PersistentVolumeClaim {}: {}", name,
                             MessageOf(existing.status())));
      return existing.status();
    }
    w.controlled[key] = name;
  }
  return absl::OkStatus();
}

absl::Status JobReconciler::RunPluginsOnJobAdd(Work& w) {
  if (w.job.spec().plugins.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> plugins =
      plugins_.CreatePlugins(w.job.spec());
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
    for (const json::Document& o : *objects) {
      const client::ResourceRef ref =
          ResourceOf(StringAt(o, {"apiVersion"}), StringAt(o, {"kind"}));
      absl::StatusOr<json::Document> r =
          client_->Create(ref, w.job.namespace_name(), json::Serialize(o));
      if (!r.ok() && !absl::IsAlreadyExists(r.status())) {
        SetProblem(w, "PluginError",
                   fmt::format("plugin {}: {}", p->Name(), MessageOf(r.status())));
        return r.status();
      }
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
  absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> plugins =
      plugins_.CreatePlugins(w.job.spec());
  if (!plugins.ok()) {
    SetProblem(w, "PluginError", std::string(MessageOf(plugins.status())));
    return plugins.status();
  }
  for (const auto& p : *plugins) {
    absl::StatusOr<std::vector<json::Document>> objects = p->OnJobUpdate(w.job);
    if (!objects.ok()) return objects.status();
    for (json::Document& o : *objects) {
      const client::ResourceRef ref =
          ResourceOf(StringAt(o, {"apiVersion"}), StringAt(o, {"kind"}));
      const std::string name(StringAt(o, {"metadata", "name"}));
      absl::StatusOr<json::Document> existing = client_->Get(ref, w.job.namespace_name(), name);
      if (absl::IsNotFound(existing.status())) {
        absl::StatusOr<json::Document> r =
            client_->Create(ref, w.job.namespace_name(), json::Serialize(o));
        if (!r.ok() && !absl::IsAlreadyExists(r.status())) return r.status();
        continue;
      }
      if (!existing.ok()) return existing.status();
      bool same = true;
      for (auto it = o.MemberBegin(); it != o.MemberEnd(); ++it) {
        const std::string_view member = json::AsView(it->name);
        if (member == "metadata" || member == "status") continue;
        const json::Value* have = json::Find(*existing, member);
        if (have == nullptr || !IsSubset(it->value, *have)) same = false;
      }
      if (same) continue;
      json::Value& meta = json::EnsureObject(o, "metadata", o.GetAllocator());
      json::Set(
          meta, "resourceVersion",
          json::MakeString(StringAt(*existing, {"metadata", "resourceVersion"}), o.GetAllocator()),
          o.GetAllocator());
      absl::StatusOr<json::Document> r = client_->Update(ref, json::Serialize(o));
      if (!r.ok()) return r.status();
    }
  }
  w.memory->plugins_updated_generation = generation;
  return absl::OkStatus();
}

absl::Status JobReconciler::RunPluginsOnJobDelete(Work& w) {
  if (w.job.spec().plugins.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> plugins =
      plugins_.CreatePlugins(w.job.spec());
  if (!plugins.ok()) return absl::OkStatus();  // nothing of theirs was created
  for (const auto& p : *plugins) {
    const std::string key = ControlledResourceKey(p->Name());
    if (w.controlled.count(key) == 0) continue;
    for (const ObjectRef& ref : p->OnJobDelete(w.job)) {
      absl::Status s =
          client_->Delete(ResourceOf(ref.api_version, ref.kind), ref.namespace_name, ref.name);
      if (!s.ok() && !absl::IsNotFound(s)) return s;
    }
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

  api::Job target = w.job;
  absl::StatusOr<json::Document> written;
  for (int attempt = 0;; ++attempt) {
    target.SetStatus(*status);
    written = client_->UpdateStatus(client::VolcanoJobs(), target.namespace_name(), target.name(),
                                    target.ToJson());
    if (written.ok() || !client::IsConflict(written.status()) || attempt >= 4) break;
    // We are the only writer of the status; a conflict means the spec or metadata moved (or
    // our view lagged): put our status on the current object.
    BASALT_ASSIGN_OR_RETURN(
        json::Document fresh,
        client_->Get(client::VolcanoJobs(), w.job.namespace_name(), w.job.name()));
    std::string spec_problem;
    BASALT_ASSIGN_OR_RETURN(target, DecodeJob(fresh, &spec_problem));
    if (target.uid() != w.job.uid()) return absl::NotFoundError("the job was replaced");
  }
  if (!written.ok()) return written.status();
  if (std::string_view(w.job.status().state.phase) != JobPhaseName(next)) {
    BASALT_VLOG(1, "Job phase changed", "job", w.key, "from", w.job.status().state.phase, "to",
                JobPhaseName(next));
  }
  // The Job is now what we sent at the version the API server gave it: no second decode. The
  // written document is what the next visit starts from while the cache lags.
  auto shared = std::make_shared<json::Document>(std::move(*written));
  w.memory->last_written_rv = std::string(StringAt(*shared, {"metadata", "resourceVersion"}));
  w.memory->last_written = shared;
  target.SetResourceVersion(w.memory->last_written_rv);
  SetJob(w, std::move(target));
  return absl::OkStatus();
}

}  // namespace basalt::controllers
