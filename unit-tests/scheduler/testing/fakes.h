#pragma once
// Recording fakes of the session's seams, and FakeCluster: a tiny model of the API server plus
// the job controller that turns scheduler decisions into the next cycle's snapshot, so action
// tests can run several cycles the way the real system converges.

#include <map>
#include <string>
#include <vector>

#include "common/util/status.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched::testing {

class RecordingBinder final : public Binder {
 public:
  struct Call {
    std::string job_id;
    std::vector<BindRequest> requests;
  };
  void Bind(const std::string& job_id, std::vector<BindRequest> requests) override {
    calls.push_back(Call{job_id, std::move(requests)});
  }
  // All bound (task uid -> node) across calls.
  std::map<std::string, std::string> Bound() const {
    std::map<std::string, std::string> out;
    for (const auto& c : calls) {
      for (const auto& r : c.requests) out[r.task_uid] = r.node_name;
    }
    return out;
  }
  std::vector<Call> calls;
};

class RecordingEvictor final : public Evictor {
 public:
  void Evict(const TaskInfo& task, const EvictionCause& cause) override {
    evicted.emplace_back(task.uid, cause.reason);
    causes.push_back(cause);
  }
  std::vector<std::pair<std::string, std::string>> evicted;  // (uid, reason)
  std::vector<EvictionCause> causes;
};

class RecordingStatusSink final : public StatusSink {
 public:
  void UpdatePodGroupStatus(PodGroupStatusUpdate u) override { podgroups.push_back(std::move(u)); }
  void UpdatePodCondition(PodConditionUpdate u) override { pods.push_back(std::move(u)); }
  void UpdateQueueStatus(QueueStatusUpdate u) override { queues.push_back(std::move(u)); }
  void RecordEvent(EventRecord e) override { events.push_back(std::move(e)); }

  const PodGroupStatusUpdate* LastPodGroup(const std::string& job_id) const {
    for (auto it = podgroups.rbegin(); it != podgroups.rend(); ++it) {
      if (it->job_id == job_id) return &*it;
    }
    return nullptr;
  }
  std::vector<PodGroupStatusUpdate> podgroups;
  std::vector<PodConditionUpdate> pods;
  std::vector<QueueStatusUpdate> queues;
  std::vector<EventRecord> events;
};

// A model cluster. Jobs declare `replicas` pods built from a template; like the job controller,
// FakeCluster creates a job's pods only once its PodGroup is admitted (phase != Pending).
// Binding makes a pod Running on its node at once.
class FakeCluster {
 public:
  struct Job {
    JobInfo spec;  // PodGroup (no tasks)
    int replicas = 1;
    TaskInfo pod_template;
    std::vector<TaskInfo> pods;
  };

  void AddNode(NodeInfo n) { nodes_.push_back(NodeSpec{std::move(n)}); }
  // kubectl cordon / uncordon.
  void SetNodeUnschedulable(const std::string& name, bool unschedulable) {
    for (auto& n : nodes_) {
      if (n.node.name() == name) n.node.set_unschedulable(unschedulable);
    }
  }
  // kubectl delete node: the node goes, and its pods with it (their controllers recreate them
  // Pending, as after an eviction).
  void RemoveNode(const std::string& name) {
    std::erase_if(nodes_, [&](const NodeSpec& n) { return n.node.name() == name; });
    for (auto& [id, j] : jobs_) {
      for (auto& p : j.pods) {
        if (p.node_name == name) {
          p.node_name.clear();
          p.status = TaskStatus::kPending;
        }
      }
    }
  }
  bool HasNode(const std::string& name) const {
    for (const auto& n : nodes_) {
      if (n.node.name() == name) return true;
    }
    return false;
  }
  // Pending PodGroups of `queue` (not yet admitted).
  int PendingJobsInQueue(const std::string& queue) const {
    int n = 0;
    for (const auto& [id, j] : jobs_) n += j.spec.queue == queue && j.spec.IsPending();
    return n;
  }
  // Jobs of `queue` with no Running pod.
  int WaitingJobsInQueue(const std::string& queue) const {
    int n = 0;
    for (const auto& [id, j] : jobs_) {
      if (j.spec.queue == queue && RunningPods(id) == 0) ++n;
    }
    return n;
  }
  void AddQueue(QueueInfo q) { queues_.push_back(std::move(q)); }
  void AddForeignPod(TaskInfo t) { foreign_.push_back(std::move(t)); }
  void AddJob(JobInfo spec, int replicas, TaskInfo pod_template) {
    Job j;
    j.spec = std::move(spec);
    j.replicas = replicas;
    j.pod_template = std::move(pod_template);
    const std::string id = j.spec.uid;
    order_.push_back(id);
    jobs_.emplace(id, std::move(j));
  }

  // Evicted pods stay on their node, Releasing, for `cycles` more cycles before they are gone
  // (recreated Pending by their controller), as a pod in its termination grace period does. With
  // `restart_job`, an eviction also kills the victim's other pods (PodEvicted -> RestartJob):
  // they are Releasing as long, then recreated Pending. Default 0 and false: an evicted pod is
  // gone (and recreated) at once.
  void SetEvictionGrace(int cycles, bool restart_job = false) {
    eviction_grace_cycles_ = cycles;
    restart_job_on_eviction_ = restart_job;
  }
  // Pods of `job_id` that are Releasing (evicted or killed, not yet gone).
  int ReleasingPods(const std::string& job_id) const {
    int n = 0;
    for (const auto& p : jobs_.at(job_id).pods) n += p.status == TaskStatus::kReleasing;
    return n;
  }

  void SetMinAvailable(const std::string& job_id, int32_t n) {
    jobs_.at(job_id).spec.min_available = n;
  }
  // Sets the status of every pod of `job_id` (e.g. kReleasing: being deleted, still on its node).
  // As the cache's conversion does, a finished pod (Succeeded, Failed) holds no node.
  void SetPodsStatus(const std::string& job_id, TaskStatus status) {
    for (auto& p : jobs_.at(job_id).pods) {
      p.status = status;
      if (IsCompletedStatus(status)) p.node_name.clear();
    }
  }
  // kubectl delete pod on every pod of `job_id`, with nothing to create them again (bare pods
  // with a hand-made PodGroup): the PodGroup stays, without pods, until AddPodToJob.
  void DeletePodsForGood(const std::string& job_id) {
    Job& j = jobs_.at(job_id);
    j.pods.clear();
    j.replicas = 0;
  }
  // Adds a pod of an existing job (e.g. a replica a job controller scaled up).
  void AddPodToJob(const std::string& job_id, TaskInfo pod) {
    Job& j = jobs_.at(job_id);
    pod.job_id = job_id;
    pod.namespace_name = j.spec.namespace_name;
    j.pods.push_back(std::move(pod));
  }

  ClusterInfo Snapshot() const {
    ClusterInfo c;
    for (const auto& n : nodes_) (void)c.AddNode(n.Build());
    for (const auto& q : queues_) (void)c.AddQueue(q);
    for (const auto& [id, j] : jobs_) {
      JobInfo copy(j.spec.namespace_name, j.spec.name);
      copy.queue = j.spec.queue;
      copy.min_available = j.spec.min_available;
      copy.task_min_available = j.spec.task_min_available;
      copy.min_resources = j.spec.min_resources;
      copy.priority = j.spec.priority;
      copy.creation_time = j.spec.creation_time;
      copy.not_preemptable = j.spec.not_preemptable;
      copy.pods_precede_group = j.spec.pods_precede_group;
      copy.podgroup_status = j.spec.podgroup_status;
      copy.task_topology_annotations = j.spec.task_topology_annotations;
      (void)c.AddJob(std::move(copy));
      for (const auto& p : j.pods) (void)c.AddTask(p);
    }
    for (const auto& t : foreign_) (void)c.AddTask(t);
    return c;
  }

  // Runs one cycle and applies its binds and PodGroup status writes; then the "controller"
  // creates pods of admitted jobs.
  absl::Status RunCycle(const SchedulerConfig& config) {
    RecordingBinder binder;
    RecordingEvictor evictor;
    RecordingStatusSink sink;
    PluginRegistry plugins = NewInTreeRegistry();
    ActionRegistry actions = NewInTreeActionRegistry();
    CycleDeps deps{&plugins, &actions, &binder, &evictor, &sink, nullptr, &last_report_};
    ++cycle_;
    BASALT_RETURN_IF_ERROR(
        sched::RunCycle(Snapshot(), config, deps, "cycle-" + std::to_string(cycle_), T(cycle_)));
    for (const auto& call : binder.calls) {
      Job& j = jobs_.at(call.job_id);
      for (const auto& r : call.requests) {
        for (auto& p : j.pods) {
          if (p.uid == r.task_uid) {
            p.node_name = r.node_name;
            p.status = TaskStatus::kRunning;
          }
        }
      }
    }
    // Pods whose grace period is over are gone; their controller recreates them, Pending.
    for (auto& [id, j] : jobs_) {
      for (auto& p : j.pods) {
        auto gone = gone_after_cycle_.find(p.uid);
        if (gone == gone_after_cycle_.end() || gone->second > cycle_) continue;
        gone_after_cycle_.erase(gone);
        p.node_name.clear();
        p.status = TaskStatus::kPending;
      }
    }
    // An evicted pod is deleted; its job controller recreates it, Pending (after the grace
    // cycles, if any).
    for (const auto& [uid, reason] : evictor.evicted) {
      for (auto& [id, j] : jobs_) {
        for (auto& p : j.pods) {
          if (p.uid != uid) continue;
          ++evictions_;
          if (eviction_grace_cycles_ == 0) {
            p.node_name.clear();
            p.status = TaskStatus::kPending;
            continue;
          }
          p.status = TaskStatus::kReleasing;
          gone_after_cycle_[p.uid] = cycle_ + eviction_grace_cycles_;
          if (!restart_job_on_eviction_) continue;
          for (auto& other : j.pods) {
            if (other.status != TaskStatus::kRunning) continue;
            other.status = TaskStatus::kReleasing;
            gone_after_cycle_[other.uid] = cycle_ + eviction_grace_cycles_;
          }
        }
      }
    }
    for (const auto& u : sink.podgroups) {
      jobs_.at(u.job_id).spec.podgroup_status = u.status;
      ++podgroup_writes_[u.job_id];
    }
    for (const auto& id : order_) {
      Job& j = jobs_.at(id);
      if (j.spec.IsPending() || !j.pods.empty()) continue;
      for (int i = 0; i < j.replicas; ++i) {
        TaskInfo p = j.pod_template;
        p.name = j.spec.name + "-task-" + std::to_string(i);
        p.uid = j.spec.uid + "/" + p.name;
        p.namespace_name = j.spec.namespace_name;
        p.job_id = j.spec.uid;
        p.creation_time = T(cycle_);
        j.pods.push_back(std::move(p));
      }
    }
    last_sink_ = std::move(sink);
    last_binder_ = std::move(binder);
    last_evictions_ = std::move(evictor.causes);
    for (const auto& [uid, reason] : evictor.evicted) evicted_uids_.push_back(uid);
    return absl::OkStatus();
  }

  // Sum of `resource` requested by Running pods of jobs in `queue`.
  int64_t RunningInQueue(const std::string& queue, std::string_view resource) const {
    int64_t sum = 0;
    for (const auto& [id, j] : jobs_) {
      if (j.spec.queue != queue) continue;
      for (const auto& p : j.pods) {
        if (p.status == TaskStatus::kRunning) sum += p.resreq.Get(resource);
      }
    }
    return sum;
  }
  const Job& job(const std::string& id) const { return jobs_.at(id); }
  // What the last cycle reported (framework/cycle_report.h).
  const CycleReport& last_report() const { return last_report_; }
  int evictions() const { return evictions_; }
  // PodGroup status writes of `job_id` so far (what the session sent to its status sink).
  int PodGroupWrites(const std::string& job_id) const {
    auto it = podgroup_writes_.find(job_id);
    return it == podgroup_writes_.end() ? 0 : it->second;
  }
  // Every pod uid evicted so far, in order (a uid twice: evicted twice).
  const std::vector<std::string>& evicted_uids() const { return evicted_uids_; }
  const std::vector<EvictionCause>& last_evictions() const { return last_evictions_; }
  int RunningPods(const std::string& job_id) const {
    int n = 0;
    for (const auto& p : jobs_.at(job_id).pods) n += p.status == TaskStatus::kRunning;
    return n;
  }
  const RecordingStatusSink& last_sink() const { return last_sink_; }
  const RecordingBinder& last_binder() const { return last_binder_; }

 private:
  struct NodeSpec {
    NodeInfo node;
    NodeInfo Build() const {
      NodeInfo n(node.name(), node.allocatable(), node.max_pods());
      n.labels() = node.labels();
      n.taints() = node.taints();
      n.set_unschedulable(node.unschedulable());
      return n;
    }
  };
  std::vector<NodeSpec> nodes_;
  std::vector<QueueInfo> queues_;
  std::vector<TaskInfo> foreign_;
  std::map<std::string, Job> jobs_;
  std::vector<std::string> order_;
  int cycle_ = 0;
  int evictions_ = 0;
  RecordingStatusSink last_sink_;
  RecordingBinder last_binder_;
  std::vector<EvictionCause> last_evictions_;
  CycleReport last_report_;
  std::vector<std::string> evicted_uids_;
  int eviction_grace_cycles_ = 0;
  bool restart_job_on_eviction_ = false;
  std::map<std::string, int> podgroup_writes_;   // job id -> PodGroup status writes
  std::map<std::string, int> gone_after_cycle_;  // Releasing pod uid -> last cycle it is seen
};

}  // namespace basalt::sched::testing
