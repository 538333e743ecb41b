// Snapshotter: incremental updates of the returned snapshot and the content check of a reused
// snapshot against a complete copy.
#include "scheduler/cache/snapshotter.h"

#include <utility>

#include "common/util/log.h"
#include "fmt/format.h"

namespace basalt::sched::cache {

namespace {

// A job whose tasks are all bound, running or finished: a session can change it only by
// evicting one of its tasks (which leaves the task Releasing).
bool Settled(const JobInfo& job) {
  for (TaskStatus s : {TaskStatus::kPending, TaskStatus::kAllocated, TaskStatus::kPipelined,
                       TaskStatus::kBinding, TaskStatus::kReleasing}) {
    if (job.TaskCount(s) > 0) return false;
  }
  return true;
}

std::string ConditionText(const SharedOptional<PodScheduledCondition>& c) {
  if (!c.has_value()) return "-";
  return fmt::format("{}/{}/{}", c->reason, c->message, c->nominated_node_name);
}

std::string TaintsText(const std::vector<Taint>& taints) {
  std::string out;
  for (const Taint& t : taints) {
    out += fmt::format("{}={}:{},", t.key, t.value, static_cast<int>(t.effect));
  }
  return out;
}

std::string TaskDifference(const TaskInfo& a, const TaskInfo& b) {
  if (a.status != b.status) {
    return fmt::format("task {}: status {} vs {}", a.uid, TaskStatusName(a.status),
                       TaskStatusName(b.status));
  }
  if (a.node_name != b.node_name) {
    return fmt::format("task {}: node {} vs {}", a.uid, a.node_name, b.node_name);
  }
  if (a.job_id != b.job_id || a.name != b.name || a.namespace_name != b.namespace_name ||
      a.role != b.role || a.priority_class_name != b.priority_class_name) {
    return fmt::format("task {}: identity {}/{} job {} vs {}/{} job {}", a.uid, a.namespace_name,
                       a.name, a.job_id, b.namespace_name, b.name, b.job_id);
  }
  if (a.priority != b.priority || a.preemptable != b.preemptable ||
      a.preempt_never != b.preempt_never || a.creation_time != b.creation_time) {
    return fmt::format("task {}: priority {} vs {}", a.uid, a.priority, b.priority);
  }
  if (!(a.resreq == b.resreq) || !(a.init_resreq == b.init_resreq)) {
    return fmt::format("task {}: request {} vs {}", a.uid, a.resreq.ToString(),
                       b.resreq.ToString());
  }
  if (a.labels != b.labels || a.node_selector != b.node_selector || a.host_ports != b.host_ports ||
      a.tolerations.size() != b.tolerations.size() ||
      (a.pod_affinity == nullptr) != (b.pod_affinity == nullptr)) {
    return fmt::format("task {}: labels, selectors, ports or affinity differ", a.uid);
  }
  if (a.scheduled_condition != b.scheduled_condition) {
    return fmt::format("task {}: condition {} vs {}", a.uid, ConditionText(a.scheduled_condition),
                       ConditionText(b.scheduled_condition));
  }
  return "";
}

std::string JobDifference(const JobInfo& a, const JobInfo& b) {
  if (a.queue != b.queue || a.min_available != b.min_available ||
      a.task_min_available != b.task_min_available || a.priority != b.priority ||
      a.priority_class_name != b.priority_class_name || a.preemptable != b.preemptable ||
      a.not_preemptable != b.not_preemptable || a.creation_time != b.creation_time ||
      a.pods_precede_group != b.pods_precede_group || a.shadow != b.shadow ||
      a.min_resources != b.min_resources || a.network_topology != b.network_topology ||
      a.sub_group_policies != b.sub_group_policies) {
    return fmt::format(
        "job {}: spec (queue {} min {} priority {}) vs (queue {} min {} priority {})", a.uid,
        a.queue, a.min_available, a.priority, b.queue, b.min_available, b.priority);
  }
  if (!a.podgroup_status.SameAs(b.podgroup_status)) {
    return fmt::format("job {}: PodGroup status {} vs {}", a.uid,
                       PodGroupPhaseName(a.podgroup_status.phase),
                       PodGroupPhaseName(b.podgroup_status.phase));
  }
  if (a.nodes_fit_errors.size() != b.nodes_fit_errors.size() ||
      a.job_fit_errors != b.job_fit_errors) {
    return fmt::format("job {}: fit errors", a.uid);
  }
  if (!(a.allocated() == b.allocated()) || !(a.total_request() == b.total_request())) {
    return fmt::format("job {}: allocated {} total {} vs allocated {} total {}", a.uid,
                       a.allocated().ToString(), a.total_request().ToString(),
                       b.allocated().ToString(), b.total_request().ToString());
  }
  for (TaskStatus s : kAllTaskStatuses) {
    if (a.TaskCount(s) != b.TaskCount(s)) {
      return fmt::format("job {}: {} {} vs {} tasks", a.uid, TaskStatusName(s), a.TaskCount(s),
                         b.TaskCount(s));
    }
  }
  if (a.tasks().size() != b.tasks().size()) {
    return fmt::format("job {}: {} vs {} tasks", a.uid, a.tasks().size(), b.tasks().size());
  }
  for (auto ia = a.tasks().begin(), ib = b.tasks().begin(); ia != a.tasks().end(); ++ia, ++ib) {
    if (ia->first != ib->first) {
      return fmt::format("job {}: task {} vs {}", a.uid, ia->first, ib->first);
    }
    if (std::string d = TaskDifference(ia->second, ib->second); !d.empty()) return d;
  }
  return "";
}

// The task a node entry must point at: the one its own snapshot owns.
const TaskInfo* Owned(const ClusterInfo& c, const TaskInfo& t) {
  if (const JobInfo* j = c.FindJob(t.job_id); j != nullptr) {
    auto it = j->tasks().find(t.uid);
    if (it != j->tasks().end()) return &it->second;
  }
  auto f = c.foreign_tasks().find(t.uid);
  return f == c.foreign_tasks().end() ? nullptr : &f->second;
}

std::string NodeDifference(const ClusterInfo& ca, const NodeInfo& a, const ClusterInfo& cb,
                           const NodeInfo& b) {
  if (!(a.allocatable() == b.allocatable()) || !(a.idle() == b.idle()) || !(a.used() == b.used()) ||
      !(a.releasing() == b.releasing()) || !(a.pipelined() == b.pipelined()) ||
      !(a.FutureIdle() == b.FutureIdle())) {
    return fmt::format(
        "node {}: idle {} used {} releasing {} pipelined {} vs idle {} used {} "
        "releasing {} pipelined {}",
        a.name(), a.idle().ToString(), a.used().ToString(), a.releasing().ToString(),
        a.pipelined().ToString(), b.idle().ToString(), b.used().ToString(),
        b.releasing().ToString(), b.pipelined().ToString());
  }
  if (a.pod_count() != b.pod_count() || a.max_pods() != b.max_pods()) {
    return fmt::format("node {}: pods {}/{} vs {}/{}", a.name(), a.pod_count(), a.max_pods(),
                       b.pod_count(), b.max_pods());
  }
  if (a.labels() != b.labels() || a.unschedulable() != b.unschedulable() ||
      TaintsText(a.taints()) != TaintsText(b.taints()) || a.used_ports() != b.used_ports()) {
    return fmt::format("node {}: labels, taints, cordon or ports differ", a.name());
  }
  if (a.tasks().size() != b.tasks().size()) {
    return fmt::format("node {}: {} vs {} tasks", a.name(), a.tasks().size(), b.tasks().size());
  }
  for (auto ia = a.tasks().begin(), ib = b.tasks().begin(); ia != a.tasks().end(); ++ia, ++ib) {
    if (ia->first != ib->first) {
      return fmt::format("node {}: task {} vs {}", a.name(), ia->first, ib->first);
    }
    if (Owned(ca, *ia->second) != ia->second || Owned(cb, *ib->second) != ib->second) {
      return fmt::format("node {}: task {} is not the one its snapshot owns", a.name(), ia->first);
    }
    if (ia->second->status != ib->second->status) {
      return fmt::format("node {}: task {} {} vs {}", a.name(), ia->first,
                         TaskStatusName(ia->second->status), TaskStatusName(ib->second->status));
    }
  }
  return "";
}

std::string QueueDifference(const QueueInfo& a, const QueueInfo& b) {
  if (a.weight != b.weight || a.priority != b.priority || a.capability != b.capability ||
      a.deserved != b.deserved || !(a.guarantee == b.guarantee) || a.reclaimable != b.reclaimable ||
      a.state != b.state || a.parent != b.parent || a.creation_time != b.creation_time ||
      !(a.status_allocated == b.status_allocated) || !(a.status_deserved == b.status_deserved) ||
      !(a.status_guarantee == b.status_guarantee)) {
    return fmt::format("queue {}: weight {} allocated {} vs weight {} allocated {}", a.name,
                       a.weight, a.status_allocated.ToString(), b.weight,
                       b.status_allocated.ToString());
  }
  return "";
}

// Walks two maps with the same key type in order; `diff` compares matching values.
template <typename Map, typename Diff>
std::string MapDifference(std::string_view what, const Map& a, const Map& b, Diff diff) {
  if (a.size() != b.size()) return fmt::format("{} {} vs {}", what, a.size(), b.size());
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first) return fmt::format("{}: {} vs {}", what, ia->first, ib->first);
    if (std::string d = diff(ia->second, ib->second); !d.empty()) return d;
  }
  return "";
}

}  // namespace

std::string SnapshotDifference(const ClusterInfo& a, const ClusterInfo& b) {
  if (std::string d = MapDifference("jobs", a.jobs(), b.jobs(), JobDifference); !d.empty()) {
    return d;
  }
  if (std::string d =
          MapDifference("foreign tasks", a.foreign_tasks(), b.foreign_tasks(), TaskDifference);
      !d.empty()) {
    return d;
  }
  if (std::string d = MapDifference(
          "nodes", a.nodes(), b.nodes(),
          [&](const NodeInfo& x, const NodeInfo& y) { return NodeDifference(a, x, b, y); });
      !d.empty()) {
    return d;
  }
  return MapDifference("queues", a.queues(), b.queues(), QueueDifference);
}

Snapshotter::Snapshotter(SnapshotterOptions options) : options_(options) {}

void Snapshotter::MarkTask(const std::string& job_id, const std::string& uid) {
  if (job_id.empty()) {
    dirty_foreign_.insert(uid);
  } else {
    dirty_jobs_.insert(job_id);
  }
}

void Snapshotter::Update(ClusterInfo& s, const ClusterInfo& cache) {
  // Nodes whose object changed are copied whole. On every other node the tasks being replaced
  // are taken off and their fresh copies put on (NodeInfo keeps exact integer accounting, so
  // the node ends as the cache has it); a node that refuses a fresh task is copied whole too.
  std::set<std::string> whole = dirty_nodes_;
  auto take_off = [&](const TaskInfo& t) {
    if (t.node_name.empty() || whole.count(t.node_name) != 0) return;
    if (NodeInfo* n = s.FindNode(t.node_name); n != nullptr) (void)n->RemoveTask(t);
  };
  auto put_on = [&](TaskInfo* t) {
    if (t->node_name.empty() || whole.count(t->node_name) != 0) return;
    NodeInfo* n = s.FindNode(t->node_name);
    const NodeInfo* m = cache.FindNode(t->node_name);
    if (n == nullptr || m == nullptr) return;
    // The cache may hold the task in its job but not on the node (it did not fit then).
    if (m->tasks().count(t->uid) == 0) return;
    if (!n->AddTask(t).ok()) whole.insert(t->node_name);
  };
  for (const std::string& id : dirty_jobs_) {
    if (const JobInfo* old = s.FindJob(id); old != nullptr) {
      for (const auto& [uid, t] : old->tasks()) take_off(t);
    }
  }
  for (const std::string& uid : dirty_foreign_) {
    auto it = s.foreign_tasks().find(uid);
    if (it != s.foreign_tasks().end()) take_off(it->second);
  }
  for (const std::string& id : dirty_jobs_) {
    s.jobs().erase(id);
    const JobInfo* m = cache.FindJob(id);
    if (m == nullptr) continue;
    JobInfo& fresh = s.jobs().emplace(id, m->Clone()).first->second;
    for (const auto& [uid, t] : fresh.tasks()) put_on(fresh.FindTask(uid));
  }
  for (const std::string& uid : dirty_foreign_) {
    s.mutable_foreign_tasks().erase(uid);
    auto it = cache.foreign_tasks().find(uid);
    if (it == cache.foreign_tasks().end()) continue;
    put_on(&s.mutable_foreign_tasks().emplace(uid, it->second).first->second);
  }
  for (const std::string& name : whole) {
    s.nodes().erase(name);
    const NodeInfo* m = cache.FindNode(name);
    if (m == nullptr) continue;
    NodeInfo copy = *m;
    copy.RebindTasks([&s](const TaskInfo& old) -> TaskInfo* {
      if (!old.job_id.empty()) {
        if (JobInfo* j = s.FindJob(old.job_id); j != nullptr) return j->FindTask(old.uid);
      }
      auto it = s.mutable_foreign_tasks().find(old.uid);
      return it == s.mutable_foreign_tasks().end() ? nullptr : &it->second;
    });
    s.nodes().emplace(name, std::move(copy));
  }
  s.queues() = cache.queues();
  // PodGroup statuses (rewritten by every session and by the status writer) and session state.
  auto m = cache.jobs().begin();
  for (auto& [id, job] : s.jobs()) {
    if (m == cache.jobs().end() || m->first != id) break;  // caught by Divergence
    job.podgroup_status = m->second.podgroup_status;
    job.nodes_fit_errors.clear();
    job.job_fit_errors.clear();
    job.awaiting_pods = false;
    ++m;
  }
  stats_.jobs_copied = dirty_jobs_.size();
  stats_.nodes_copied = whole.size();
  stats_.foreign_copied = dirty_foreign_.size();
}

std::string Snapshotter::Divergence(const ClusterInfo& s, const ClusterInfo& cache,
                                    const std::function<void(ClusterInfo&)>& finish) {
  // The counts always (cheap); the content when verifying.
  if (s.jobs().size() != cache.jobs().size() || s.nodes().size() != cache.nodes().size() ||
      s.foreign_tasks().size() != cache.foreign_tasks().size()) {
    return fmt::format("jobs {} vs {}, nodes {} vs {}, foreign tasks {} vs {}", s.jobs().size(),
                       cache.jobs().size(), s.nodes().size(), cache.nodes().size(),
                       s.foreign_tasks().size(), cache.foreign_tasks().size());
  }
  if (!options_.verify) return "";
  ++stats_.verified;
  ClusterInfo fresh = cache.Clone();
  if (finish) finish(fresh);
  return SnapshotDifference(s, fresh);
}

Snapshotter::Handout Snapshotter::Take(const ClusterInfo& cache,
                                       const std::function<void(ClusterInfo&)>& finish) {
  Handout out;
  bool full =
      !options_.incremental || !returned_.has_value() || ++since_full_ >= options_.full_every;
  if (!full) {
    out.cluster = std::move(*returned_);
    Update(out.cluster, cache);
    if (finish) finish(out.cluster);
    if (std::string why = Divergence(out.cluster, cache, finish); !why.empty()) {
      // The change tracking missed something: a bug. The cycle gets a complete copy instead.
      BASALT_LOG_ERROR("Incremental snapshot diverged from the cache; taking a complete copy",
                       "difference", why);
      ++stats_.diverged;
      full = true;
    } else {
      ++stats_.incremental;
    }
  }
  if (full) {
    out.cluster = cache.Clone();
    if (finish) finish(out.cluster);
    since_full_ = 0;
    ++stats_.full;
    stats_.jobs_copied = cache.jobs().size();
    stats_.nodes_copied = cache.nodes().size();
    stats_.foreign_copied = cache.foreign_tasks().size();
  }
  returned_.reset();
  dirty_jobs_.clear();
  dirty_nodes_.clear();
  dirty_foreign_.clear();
  unsettled_at_handout_.clear();
  for (const auto& [id, job] : out.cluster.jobs()) {
    if (!Settled(job)) unsettled_at_handout_.insert(id);
  }
  out.handout = ++handouts_;
  return out;
}

void Snapshotter::Return(ClusterInfo used, uint64_t handout) {
  if (!options_.incremental || handout != handouts_) return;
  // What the session may have changed: jobs not settled when handed out (allocations,
  // pipelines, binds, fit errors) and jobs it evicted from. Their tasks' nodes are corrected
  // task by task when the jobs are replaced.
  for (const auto& [id, job] : used.jobs()) {
    if (unsettled_at_handout_.count(id) != 0 || !Settled(job)) dirty_jobs_.insert(id);
  }
  unsettled_at_handout_.clear();
  returned_ = std::move(used);
}

}  // namespace basalt::sched::cache
