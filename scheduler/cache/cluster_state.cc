#include "scheduler/cache/cluster_state.h"

#include <utility>
#include <vector>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::cache {

ClusterState::ClusterState(ClusterStateOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      snapshotter_(SnapshotterOptions{options_.incremental_snapshots, options_.full_snapshot_every,
                                      options_.verify_snapshots}) {}

void ClusterState::BumpLocked() {
  ++generation_;
  changed_.notify_all();
}

void ClusterState::ArrivalLocked() {
  ++arrivals_;
  if (!first_arrival_.has_value()) first_arrival_ = clock_->Now();
}

bool ClusterState::Relevant(const api::CompactPod& pod) const {
  return !pod.node_name.empty() || options_.scheduler_names.count(pod.scheduler_name) != 0;
}

std::string ClusterState::GroupKey(const api::CompactPod& pod) {
  if (pod.group_name.empty()) return "";
  return fmt::format("{}/{}", pod.namespace_name, pod.group_name);
}

std::string ClusterState::IndexKey(const CachedPod& cached) const {
  if (std::string key = GroupKey(cached.pod); !key.empty()) return key;
  if (options_.scheduler_names.count(cached.pod.scheduler_name) == 0) return "";
  std::string name = ShadowJobName(cached);
  if (name.empty()) return "";
  return fmt::format("{}/{}", cached.pod.namespace_name, name);
}

std::string ClusterState::JobIdFor(const CachedPod& cached) const {
  const api::CompactPod& pod = cached.pod;
  std::string key = IndexKey(cached);
  if (key.empty()) return "";
  auto it = podgroups_.find(key);
  if (it == podgroups_.end()) {
    // No PodGroup (yet): the pod's shadow job, if it may have one.
    if (options_.scheduler_names.count(pod.scheduler_name) == 0) return "";
    std::string shadow = ShadowJobName(cached);
    if (shadow.empty() || key != fmt::format("{}/{}", pod.namespace_name, shadow)) return "";
    return key;
  }
  // Decision 3: a pod whose controller is not the PodGroup's controller belongs to another
  // incarnation of the job and must not count for this gang.
  if (!it->second.owner_uid.empty() && !pod.owner_uid.empty() &&
      it->second.owner_uid != pod.owner_uid) {
    return "";
  }
  return key;
}

void ClusterState::RemoveTaskLocked(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.in_cluster) return;
  PodEntry& e = it->second;
  snapshotter_.MarkTask(e.job_id, uid);
  if (absl::Status s = cluster_.RemoveTask(e.job_id, uid); !s.ok()) {
    BASALT_LOG_ERROR("Cache inconsistency removing a task", "pod", e.pod->pod.Key(), "error",
                     MessageOf(s));
  }
  if (!e.node_name.empty()) {
    auto n = pods_by_node_.find(e.node_name);
    if (n != pods_by_node_.end()) {
      n->second.erase(uid);
      if (n->second.empty()) pods_by_node_.erase(n);
    }
  }
  // A shadow job lives as long as its task.
  if (auto sh = shadow_jobs_.find(e.job_id); sh != shadow_jobs_.end()) {
    if (JobInfo* job = cluster_.FindJob(e.job_id); job == nullptr || job->tasks().empty()) {
      snapshotter_.MarkJob(e.job_id);
      cluster_.jobs().erase(e.job_id);
      shadow_jobs_.erase(sh);
    }
  }
  e.in_cluster = false;
  e.job_id.clear();
  e.node_name.clear();
}

void ClusterState::InsertTaskLocked(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.in_cluster) return;
  PodEntry& e = it->second;
  std::string job_id = JobIdFor(*e.pod);
  if (!job_id.empty() && podgroups_.count(job_id) == 0 && cluster_.FindJob(job_id) == nullptr) {
    snapshotter_.MarkJob(job_id);
    if (absl::Status s = cluster_.AddJob(ToShadowJobInfo(*e.pod, options_.default_queue)); s.ok()) {
      shadow_jobs_.insert(job_id);
    } else {
      BASALT_LOG_ERROR("Cache inconsistency adding a shadow job", "pod", e.pod->pod.Key(), "error",
                       MessageOf(s));
    }
  }
  if (!job_id.empty() && cluster_.FindJob(job_id) == nullptr) job_id.clear();
  TaskInfo task = ToTaskInfo(*e.pod, job_id);
  if (const PodScheduledCondition* written = overlay_.PodConditionFor(uid); written != nullptr) {
    task.scheduled_condition = *written;
  }
  if ((task.status == TaskStatus::kRunning || task.status == TaskStatus::kBound) &&
      evicting_.count(uid) != 0) {
    task.status = TaskStatus::kReleasing;
  }
  auto assumed = assumed_.find(uid);
  if (assumed != assumed_.end() && task.status == TaskStatus::kPending) {
    task.node_name = assumed->second;
    task.status = TaskStatus::kBinding;
    if (auto v = assumed_vgpus_.find(uid); v != assumed_vgpus_.end() && task.vgpu != nullptr) {
      task.vgpu_assignment = v->second;
      task.vgpu_node = task.node_name;
    }
  }
  TaskInfo fallback;
  bool has_fallback = false;
  if (task.status == TaskStatus::kBinding) {
    fallback = task;
    fallback.node_name.clear();
    fallback.status = TaskStatus::kPending;
    has_fallback = true;
  }
  std::string node_name = task.node_name;
  snapshotter_.MarkTask(job_id, uid);
  absl::Status s = cluster_.AddTask(std::move(task));
  if (!s.ok() && has_fallback) {
    // The assumed placement no longer fits (the node shrank or another pod landed there):
    // drop the assumption; the bind in flight will fail or the informer will correct us.
    BASALT_LOG_WARNING("Assumed placement no longer fits; keeping the pod pending", "pod",
                       e.pod->pod.Key(), "node", node_name, "error", MessageOf(s));
    assumed_.erase(uid);
    node_name.clear();
    // AddTask put the task into its job before the node refused it: take it out again.
    (void)cluster_.RemoveTask(job_id, uid);
    s = cluster_.AddTask(std::move(fallback));
  }
  if (!s.ok()) {
    BASALT_LOG_ERROR("Cache inconsistency adding a task", "pod", e.pod->pod.Key(), "error",
                     MessageOf(s));
    return;
  }
  e.in_cluster = true;
  e.job_id = job_id;
  e.node_name = node_name;
  if (!node_name.empty()) pods_by_node_[node_name].insert(std::string_view(it->first));
  // A shadow job has no status written back: its phase follows its one task, as the session
  // computes it (Running once placed), so the next cycles do not take a placed pod's job for
  // one waiting for admission.
  if (shadow_jobs_.count(job_id) != 0) {
    if (JobInfo* job = cluster_.FindJob(job_id); job != nullptr) {
      job->podgroup_status.phase =
          node_name.empty() ? PodGroupPhase::kPending : PodGroupPhase::kRunning;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pods

void ClusterState::UpsertPod(std::shared_ptr<const CachedPod> cached) {
  const api::CompactPod& pod = cached->pod;
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(pod.uid);
  if (!Relevant(pod)) {
    if (it != pods_.end()) {
      RemoveTaskLocked(pod.uid);
      std::string old_group = IndexKey(*it->second.pod);
      if (!old_group.empty()) pods_by_group_[old_group].erase(pod.uid);
      pod_uid_by_key_.erase(it->second.pod->pod.Key());
      pods_.erase(it);
      assumed_.erase(pod.uid);
      assumed_vgpus_.erase(pod.uid);
      evicting_.erase(pod.uid);
      overlay_.ForgetPodCondition(pod.uid);
      BumpLocked();
    }
    return;
  }
  if (it != pods_.end()) {
    RemoveTaskLocked(pod.uid);
    std::string old_group = IndexKey(*it->second.pod);
    const std::string new_group = IndexKey(*cached);
    if (!old_group.empty() && old_group != new_group) pods_by_group_[old_group].erase(pod.uid);
    // A pending pod that joins a group (a bare pod's annotation, written by the podgroup
    // controller just after its PodGroup) is new work for that gang: an arrival, so the cycle
    // that places it starts now rather than a period later.
    if (old_group != new_group && !new_group.empty() && pod.node_name.empty() && !pod.terminating)
      ArrivalLocked();
    // The written condition stays until the pod shows it, or the pod no longer needs one.
    overlay_.ObservePod(pod.uid, cached->scheduled_condition, !pod.node_name.empty());
    // The key map views this entry's uid: a stale key must not outlive it.
    if (std::string old_key = it->second.pod->pod.Key(); old_key != pod.Key()) {
      auto k = pod_uid_by_key_.find(old_key);
      if (k != pod_uid_by_key_.end() && k->second == pod.uid) pod_uid_by_key_.erase(k);
    }
    it->second.pod = std::move(cached);
  } else {
    overlay_.ForgetPodCondition(pod.uid);  // none can be written before the pod is known
    if (pod.node_name.empty() && !pod.terminating) ArrivalLocked();
    it = pods_.emplace(pod.uid, PodEntry{std::move(cached), false, "", ""}).first;
  }
  const api::CompactPod& now = it->second.pod->pod;
  if (!now.node_name.empty()) {
    assumed_.erase(now.uid);
    assumed_vgpus_.erase(now.uid);
  }
  if (now.terminating || now.phase == api::PodPhase::kSucceeded ||
      now.phase == api::PodPhase::kFailed) {
    evicting_.erase(now.uid);
  }
  pod_uid_by_key_[now.Key()] = std::string_view(it->first);
  if (std::string g = IndexKey(*it->second.pod); !g.empty()) {
    pods_by_group_[g].insert(std::string_view(it->first));
  }
  InsertTaskLocked(now.uid);
  BumpLocked();
}

void ClusterState::DeletePod(const api::CompactPod& pod) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(pod.uid);
  if (it == pods_.end()) return;
  RemoveTaskLocked(pod.uid);
  if (std::string g = IndexKey(*it->second.pod); !g.empty()) {
    auto gi = pods_by_group_.find(g);
    if (gi != pods_by_group_.end()) {
      gi->second.erase(pod.uid);
      if (gi->second.empty()) pods_by_group_.erase(gi);
    }
  }
  auto k = pod_uid_by_key_.find(it->second.pod->pod.Key());
  if (k != pod_uid_by_key_.end() && k->second == pod.uid) pod_uid_by_key_.erase(k);
  pods_.erase(it);
  assumed_.erase(pod.uid);
  assumed_vgpus_.erase(pod.uid);
  evicting_.erase(pod.uid);
  overlay_.ForgetPodCondition(pod.uid);
  BumpLocked();
}

// ---------------------------------------------------------------------------------------------
// Nodes

void ClusterState::UpsertNode(std::shared_ptr<const api::CompactNode> node) {
  std::lock_guard<std::mutex> l(mu_);
  const std::string name = node->name;
  snapshotter_.MarkNode(name);
  auto old = nodes_.find(name);
  NodeInfo* existing = cluster_.FindNode(name);
  if (old != nodes_.end() && existing != nullptr && old->second->allocatable == node->allocatable &&
      old->second->vgpu_register == node->vgpu_register) {
    // Labels, taints and cordoning do not change the accounting: update in place.
    NodeInfo fresh = ToNodeInfo(*node);
    existing->labels() = fresh.labels();
    existing->taints() = fresh.taints();
    existing->set_unschedulable(fresh.unschedulable());
    old->second = std::move(node);
    BumpLocked();
    return;
  }
  std::vector<std::string> on_node;
  if (auto p = pods_by_node_.find(name); p != pods_by_node_.end()) {
    on_node.assign(p->second.begin(), p->second.end());
  }
  // The index also holds pods that named this node before it was known: re-add them too.
  for (const std::string& uid : on_node) RemoveTaskLocked(uid);
  cluster_.nodes().erase(name);
  if (absl::Status s = cluster_.AddNode(ToNodeInfo(*node)); !s.ok()) {
    BASALT_LOG_ERROR("Cache inconsistency adding a node", "node", name, "error", MessageOf(s));
  }
  nodes_[name] = std::move(node);
  for (const std::string& uid : on_node) InsertTaskLocked(uid);
  BumpLocked();
}

void ClusterState::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  snapshotter_.MarkNode(name);
  std::vector<std::string> on_node;
  if (auto p = pods_by_node_.find(name); p != pods_by_node_.end()) {
    on_node.assign(p->second.begin(), p->second.end());
  }
  for (const std::string& uid : on_node) RemoveTaskLocked(uid);
  cluster_.nodes().erase(name);
  nodes_.erase(name);
  for (const auto& uid : on_node) {
    auto a = assumed_.find(uid);
    if (a != assumed_.end() && a->second == name) assumed_.erase(a);
    InsertTaskLocked(uid);
  }
  BumpLocked();
}

// ---------------------------------------------------------------------------------------------
// PodGroups

void ClusterState::RebuildJobLocked(const std::string& key) {
  snapshotter_.MarkJob(key);
  std::vector<std::string> members;
  if (auto g = pods_by_group_.find(key); g != pods_by_group_.end()) {
    members.assign(g->second.begin(), g->second.end());
  }
  for (const std::string& uid : members) RemoveTaskLocked(uid);
  // Tasks of the old job that are no longer in the group index (none expected) go too.
  if (JobInfo* job = cluster_.FindJob(key); job != nullptr) {
    std::vector<std::string> left;
    for (const auto& [uid, t] : job->tasks()) left.push_back(uid);
    for (const std::string& uid : left) RemoveTaskLocked(uid);
    cluster_.jobs().erase(key);
  }
  shadow_jobs_.erase(key);
  auto pg = podgroups_.find(key);
  if (pg != podgroups_.end()) {
    JobInfo job = ToJobInfo(*pg->second.pg, options_.default_queue);
    if (const PodGroupStatus* written = overlay_.PodGroupStatusFor(key); written != nullptr) {
      job.podgroup_status = *written;
    }
    if (absl::Status s = cluster_.AddJob(std::move(job)); !s.ok()) {
      BASALT_LOG_ERROR("Cache inconsistency adding a job", "podgroup", key, "error", MessageOf(s));
    }
  }
  for (const std::string& uid : members) InsertTaskLocked(uid);
}

void ClusterState::UpsertPodGroup(std::shared_ptr<const CachedPodGroup> pg) {
  std::string key = fmt::format("{}/{}", pg->namespace_name, pg->name);
  std::string owner;
  if (pg->controller.has_value()) owner = pg->controller->uid;
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = podgroups_.try_emplace(key);
  PodGroupEntry& e = it->second;
  const bool owner_changed = !inserted && e.owner_uid != owner;
  const bool recreated = !inserted && e.pg->uid != pg->uid;
  e.pg = std::move(pg);
  e.owner_uid = owner;
  PodGroupStatus api_status = ToPodGroupStatus(e.pg->status);
  if (inserted) {
    overlay_.ForgetPodGroupStatus(key);  // none can be written before the PodGroup is known
    ArrivalLocked();
  } else {
    overlay_.ObservePodGroup(key, api_status, recreated);
  }
  JobInfo* job = cluster_.FindJob(key);
  if (inserted || owner_changed || recreated || job == nullptr) {
    RebuildJobLocked(key);
  } else {
    snapshotter_.MarkJob(key);
    JobInfo fresh = ToJobInfo(*e.pg, options_.default_queue);
    job->queue = fresh.queue;
    job->min_available = fresh.min_available;
    job->task_min_available = fresh.task_min_available;
    job->min_resources = fresh.min_resources;
    job->priority_class_name = fresh.priority_class_name;
    job->preemptable = fresh.preemptable;
    job->not_preemptable = fresh.not_preemptable;
    job->creation_time = fresh.creation_time;
    job->pods_precede_group = fresh.pods_precede_group;
    job->network_topology = fresh.network_topology;
    job->sub_group_policies = std::move(fresh.sub_group_policies);
    job->task_topology_annotations = std::move(fresh.task_topology_annotations);
    const PodGroupStatus* written = overlay_.PodGroupStatusFor(key);
    job->podgroup_status = written != nullptr ? *written : api_status;
  }
  BumpLocked();
}

void ClusterState::DeletePodGroup(const std::string& namespace_name, const std::string& name) {
  std::string key = fmt::format("{}/{}", namespace_name, name);
  std::lock_guard<std::mutex> l(mu_);
  if (podgroups_.erase(key) == 0) return;
  overlay_.ForgetPodGroupStatus(key);
  RebuildJobLocked(key);
  BumpLocked();
}

// ---------------------------------------------------------------------------------------------
// Queues and PriorityClasses

void ClusterState::UpsertQueue(const api::Queue& queue) {
  QueueInfo info = ToQueueInfo(queue);
  std::lock_guard<std::mutex> l(mu_);
  auto [e, inserted] = queue_api_allocated_.insert_or_assign(info.name, info.status_allocated);
  if (inserted) {
    overlay_.ForgetQueueAllocated(info.name);  // none can be written before the queue is known
  } else {
    overlay_.ObserveQueue(info.name, info.status_allocated);
  }
  if (const Resource* written = overlay_.QueueAllocatedFor(info.name); written != nullptr) {
    info.status_allocated = *written;
  }
  cluster_.queues().insert_or_assign(info.name, std::move(info));
  BumpLocked();
}

void ClusterState::DeleteQueue(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  queue_api_allocated_.erase(name);
  overlay_.ForgetQueueAllocated(name);
  cluster_.queues().erase(name);
  BumpLocked();
}

void ClusterState::UpsertPriorityClass(const std::string& name, int32_t value,
                                       bool global_default) {
  std::lock_guard<std::mutex> l(mu_);
  priority_classes_[name] = PriorityClassEntry{value, global_default};
  BumpLocked();
}

void ClusterState::DeletePriorityClass(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  priority_classes_.erase(name);
  BumpLocked();
}

// ---------------------------------------------------------------------------------------------
// Cycles

void ClusterState::ResolvePrioritiesLocked(ClusterInfo& cluster) const {
  int32_t global_default = 0;
  for (const auto& [name, pc] : priority_classes_) {
    if (pc.global_default) global_default = pc.value;
  }
  for (auto& [id, job] : cluster.jobs()) {
    auto it = job.priority_class_name.empty() ? priority_classes_.end()
                                              : priority_classes_.find(job.priority_class_name);
    job.priority = it != priority_classes_.end() ? it->second.value : global_default;
  }
}

void ClusterState::UpsertHyperNode(const api::HyperNode& hn) {
  HyperNodeInfo info = ToHyperNodeInfo(hn);
  std::lock_guard<std::mutex> l(mu_);
  const HyperNodeMap& current = cluster_.hypernodes();
  if (auto it = current.find(info.name); it != current.end() && it->second == info) return;
  auto next = std::make_shared<HyperNodeMap>(current);
  (*next)[info.name] = std::move(info);
  cluster_.set_hypernodes(std::move(next));
  BumpLocked();
}

void ClusterState::DeleteHyperNode(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  if (cluster_.hypernodes().count(name) == 0) return;
  auto next = std::make_shared<HyperNodeMap>(cluster_.hypernodes());
  next->erase(name);
  cluster_.set_hypernodes(std::move(next));
  BumpLocked();
}

ClusterState::Snapshot ClusterState::TakeSnapshot() {
  std::lock_guard<std::mutex> l(mu_);
  Snapshotter::Handout h = snapshotter_.Take(cluster_, [this](ClusterInfo& c) {
    ResolvePrioritiesLocked(c);
    c.set_hypernodes(cluster_.shared_hypernodes());
  });
  Snapshot out;
  out.cluster = std::move(h.cluster);
  out.generation = generation_;
  out.arrivals = arrivals_;
  first_arrival_.reset();
  out.handout = h.handout;
  return out;
}

void ClusterState::ReturnSnapshot(ClusterInfo used, uint64_t handout) {
  std::lock_guard<std::mutex> l(mu_);
  snapshotter_.Return(std::move(used), handout);
}

ClusterState::Snapshot ClusterState::TakeFullSnapshot() const {
  Snapshot out;
  std::lock_guard<std::mutex> l(mu_);
  out.cluster = cluster_.Clone();
  ResolvePrioritiesLocked(out.cluster);
  out.generation = generation_;
  return out;
}

SnapshotStats ClusterState::snapshot_stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return snapshotter_.stats();
}

uint64_t ClusterState::generation() const {
  std::lock_guard<std::mutex> l(mu_);
  return generation_;
}

bool ClusterState::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout,
                                 const std::stop_token& stop) const {
  // Before the lock: destroyed after it, so a callback running concurrently can take mu_.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> l(mu_);
    changed_.notify_all();
  });
  std::unique_lock<std::mutex> l(mu_);
  const Clock::TimePoint deadline = clock_->Now() + timeout;
  while (generation_ == seen && !stop.stop_requested() && clock_->Now() < deadline) {
    clock_->WaitUntil(l, changed_, deadline);
  }
  return generation_ != seen;
}

ClusterState::Arrivals ClusterState::arrivals() const {
  std::lock_guard<std::mutex> l(mu_);
  return Arrivals{arrivals_, first_arrival_.value_or(Clock::TimePoint{})};
}

void ClusterState::Touch() {
  std::lock_guard<std::mutex> l(mu_);
  BumpLocked();
}

// ---------------------------------------------------------------------------------------------
// Binding

absl::Status ClusterState::Assume(const BindRequest& request) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(request.task_uid);
  if (it == pods_.end()) {
    return absl::NotFoundError(
        fmt::format("pod {}/{} is gone", request.namespace_name, request.pod_name));
  }
  if (!it->second.pod->pod.node_name.empty()) {
    return absl::AlreadyExistsError(fmt::format("pod {}/{} is already bound to {}",
                                                request.namespace_name, request.pod_name,
                                                it->second.pod->pod.node_name));
  }
  assumed_[request.task_uid] = request.node_name;
  if (request.vgpu.empty()) {
    assumed_vgpus_.erase(request.task_uid);
  } else {
    assumed_vgpus_[request.task_uid] = request.vgpu;
  }
  ReinsertLocked(request.task_uid);
  if (assumed_.count(request.task_uid) == 0) {
    return absl::FailedPreconditionError(fmt::format("pod {}/{} no longer fits on {}",
                                                     request.namespace_name, request.pod_name,
                                                     request.node_name));
  }
  return absl::OkStatus();
}

void ClusterState::Forget(const std::string& task_uid) {
  std::lock_guard<std::mutex> l(mu_);
  assumed_vgpus_.erase(task_uid);
  if (assumed_.erase(task_uid) == 0) return;
  ReinsertLocked(task_uid);
  BumpLocked();
}

size_t ClusterState::assumed_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return assumed_.size();
}

void ClusterState::AssumeEvicted(const std::string& task_uid) {
  std::lock_guard<std::mutex> l(mu_);
  if (pods_.count(task_uid) == 0) return;
  if (!evicting_.insert(task_uid).second) return;
  ReinsertLocked(task_uid);
  BumpLocked();
}

void ClusterState::ForgetEvicted(const std::string& task_uid) {
  std::lock_guard<std::mutex> l(mu_);
  if (evicting_.erase(task_uid) == 0) return;
  ReinsertLocked(task_uid);
  BumpLocked();
}

size_t ClusterState::evicting_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return evicting_.size();
}

// ---------------------------------------------------------------------------------------------
// Written status

void ClusterState::SetPodGroupStatus(const std::string& job_id, const PodGroupStatus& status) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = podgroups_.find(job_id);
  if (it == podgroups_.end()) return;
  overlay_.SetPodGroupStatus(job_id, status);
  if (JobInfo* job = cluster_.FindJob(job_id); job != nullptr) job->podgroup_status = status;
}

void ClusterState::ForgetPodGroupStatus(const std::string& job_id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = podgroups_.find(job_id);
  if (it == podgroups_.end()) return;
  overlay_.ForgetPodGroupStatus(job_id);
  if (JobInfo* job = cluster_.FindJob(job_id); job != nullptr) {
    job->podgroup_status = ToPodGroupStatus(it->second.pg->status);
  }
  BumpLocked();
}

void ClusterState::SetPodCondition(const std::string& task_uid,
                                   const PodScheduledCondition& condition) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(task_uid);
  if (it == pods_.end()) return;
  overlay_.SetPodCondition(task_uid, condition);
  ReinsertLocked(task_uid);
}

void ClusterState::ForgetPodCondition(const std::string& task_uid) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(task_uid);
  if (it == pods_.end()) return;
  overlay_.ForgetPodCondition(task_uid);
  ReinsertLocked(task_uid);
}

void ClusterState::SetQueueAllocated(const std::string& queue, const Resource& allocated) {
  std::lock_guard<std::mutex> l(mu_);
  if (queue_api_allocated_.count(queue) == 0) return;
  overlay_.SetQueueAllocated(queue, allocated);
  if (QueueInfo* q = cluster_.FindQueue(queue); q != nullptr) q->status_allocated = allocated;
}

void ClusterState::ForgetQueueAllocated(const std::string& queue) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = queue_api_allocated_.find(queue);
  if (it == queue_api_allocated_.end()) return;
  overlay_.ForgetQueueAllocated(queue);
  if (QueueInfo* q = cluster_.FindQueue(queue); q != nullptr) q->status_allocated = it->second;
  BumpLocked();
}

ClusterState::QueueShareStatus ClusterState::SetQueueShare(
    const std::string& queue, const std::optional<Resource>& deserved,
    const std::optional<Resource>& guarantee) {
  std::lock_guard<std::mutex> l(mu_);
  QueueInfo* q = cluster_.FindQueue(queue);
  if (q == nullptr) return {};
  QueueShareStatus before{q->status_deserved, q->status_guarantee};
  if (deserved.has_value()) q->status_deserved = *deserved;
  if (guarantee.has_value()) q->status_guarantee = *guarantee;
  return before;
}

Resource ClusterState::QueueAllocatedInApi(const std::string& queue) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = queue_api_allocated_.find(queue);
  return it == queue_api_allocated_.end() ? Resource() : it->second;
}

std::string ClusterState::BarePodGroupName(const std::string& task_uid) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = pods_.find(task_uid);
  if (it == pods_.end()) return "";
  const CachedPod& cached = *it->second.pod;
  if (!cached.pod.group_name.empty()) return "";
  if (options_.scheduler_names.count(cached.pod.scheduler_name) == 0) return "";
  return ShadowJobName(cached);
}

std::optional<api::ObjectReference> ClusterState::PodReference(const std::string& namespace_name,
                                                               const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto k = pod_uid_by_key_.find(fmt::format("{}/{}", namespace_name, name));
  if (k == pod_uid_by_key_.end()) return std::nullopt;
  auto it = pods_.find(std::string(k->second));
  if (it == pods_.end()) return std::nullopt;
  api::ObjectReference ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.namespace_name = namespace_name;
  ref.name = name;
  ref.uid = it->second.pod->pod.uid;
  ref.resource_version = it->second.pod->pod.resource_version;
  return ref;
}

std::optional<api::ObjectReference> ClusterState::PodGroupReference(
    const std::string& namespace_name, const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = podgroups_.find(fmt::format("{}/{}", namespace_name, name));
  if (it == podgroups_.end()) return std::nullopt;
  api::ObjectReference ref;
  ref.api_version = std::string(api::kSchedulingApiVersion);
  ref.kind = "PodGroup";
  ref.namespace_name = namespace_name;
  ref.name = name;
  ref.uid = it->second.pg->uid;
  ref.resource_version = it->second.pg->resource_version;
  return ref;
}

}  // namespace basalt::sched::cache
