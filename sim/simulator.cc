#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <unordered_map>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/fgd/fgd.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sim {

namespace {

using sched::ClusterInfo;
using sched::JobInfo;
using sched::NodeInfo;
using sched::Resource;
using sched::TaskInfo;
using sched::TaskStatus;

constexpr char kNamespace[] = "sim";

// Records what the session binds; the simulator applies it after the cycle.
class SimBinder final : public sched::Binder {
 public:
  void Bind(const std::string& job_id, std::vector<sched::BindRequest> requests) override {
    for (auto& r : requests) bound_.emplace_back(job_id, std::move(r));
  }
  std::vector<std::pair<std::string, sched::BindRequest>> Take() { return std::move(bound_); }

 private:
  std::vector<std::pair<std::string, sched::BindRequest>> bound_;
};

sched::Timestamp At(double seconds) {
  return sched::Timestamp(std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
}

Resource RequestOf(const SimTask& t) {
  Resource r(t.milli_cpu, t.memory);
  if (!t.gpu.Empty()) r.Set(sched::kGpu, t.gpu.TotalMilli());
  return r;
}

struct RunningJob {
  double end = 0;  // virtual seconds; infinity for no departure
};

class Run {
 public:
  Run(const Workload& w, const sched::SchedulerConfig& config, const SimOptions& o)
      : w_(w), config_(config), o_(o) {}

  absl::StatusOr<SimSummary> Go() {
    const auto wall_start = std::chrono::steady_clock::now();
    plugins_ = sched::NewInTreeRegistry();
    actions_ = sched::NewInTreeActionRegistry();
    sched::NodeSamplingOptions sampling;
    sampling.percentage_nodes_to_find = 100;  // score every node, as the paper's simulator does
    sampler_ = sched::NodeSampler(sampling);
    for (const SimNode& n : w_.nodes) {
      Resource alloc(n.milli_cpu, n.memory);
      if (n.gpus > 0) alloc.SetUnits(sched::kGpu, n.gpus);
      if (n.vgpus > 0) {
        // As the cache reads a node the vGPU device plugin registered (scheduler/cache).
        alloc.SetUnits(sched::kVgpuNumber, int64_t{n.vgpus} * n.vgpu_shares);
        alloc.SetUnits(sched::kVgpuMemory, int64_t{n.vgpus} * n.vgpu_memory);
        alloc.SetUnits(sched::kVgpuCores, int64_t{n.vgpus} * 100);
      }
      NodeInfo node(n.name, alloc, 1 << 20);
      if (n.gpus > 0) node.set_gpus(sched::GpuDevices(n.model, n.gpus));
      if (n.vgpus > 0) {
        std::vector<sched::VgpuDevice> devices;
        for (int32_t i = 0; i < n.vgpus; ++i) {
          sched::VgpuDevice d;
          d.uuid = fmt::format("GPU-{}-{}", n.name, i);
          d.shares = n.vgpu_shares;
          d.memory = n.vgpu_memory;
          d.type = n.vgpu_type;
          devices.push_back(std::move(d));
        }
        node.set_vgpus(sched::VgpuDevices(std::move(devices)));
      }
      capacity_ += alloc;
      auto s = cluster_.AddNode(std::move(node));
      if (!s.ok()) return s;
    }
    for (const SimQueue& q : w_.queues) {
      sched::QueueInfo qi;
      qi.name = q.name;
      qi.weight = q.weight;
      auto s = cluster_.AddQueue(std::move(qi));
      if (!s.ok()) return s;
    }
    summary_.gpu_capacity_milli = capacity_.Get(sched::kGpu);
    for (const SimJob& j : w_.jobs) summary_.tasks += static_cast<int64_t>(j.tasks.size());
    summary_.jobs = static_cast<int64_t>(w_.jobs.size());
    const bool has_enqueue = config_.HasAction("enqueue");
    if (o_.csv != nullptr) WriteHeader();
    if (o_.placements != nullptr) *o_.placements << "task,node,vgpus,gpus\n";

    double now = 0;
    size_t next = 0;
    size_t progress_step = std::max<size_t>(1, w_.jobs.size() / 20), progress_next = progress_step;
    while (true) {
      // Departures due by now.
      Complete(now);
      // Arrivals due by now; stop right after the job that makes demand reach the mark, so the
      // headline figure is read exactly at that point.
      bool mark_now = false;
      while (next < w_.jobs.size() && w_.jobs[next].arrival <= now) {
        auto s = AddJob(w_.jobs[next], has_enqueue);
        if (!s.ok()) return s;
        ++next;
        if (w_.mark_gpu_milli > 0 && !mark_done_ && arrived_gpu_ >= w_.mark_gpu_milli) {
          mark_now = true;
          break;
        }
      }
      if (!active_.empty() || pending_jobs_ > 0) {
        auto s = Cycle(now);
        if (!s.ok()) return s;
      }
      if (mark_now) {
        mark_done_ = true;
        summary_.gpu_alloc_at_mark = Share(sched::kGpu);
      }
      if (o_.progress != nullptr && next >= progress_next) {
        *o_.progress << fmt::format("basalt-sim: t={:.0f}s {}/{} jobs arrived, GPU {:.2f}%\n", now,
                                    next, w_.jobs.size(), 100 * Share(sched::kGpu));
        progress_next += progress_step;
      }
      Row(now);
      // Waiting jobs alone change nothing: with no arrival or departure left, they never fit.
      const bool more = next < w_.jobs.size() || !ends_.empty();
      if (!more) break;
      if (mark_now && next < w_.jobs.size() && w_.jobs[next].arrival <= now) continue;
      // Next cycle: one period on while jobs wait; otherwise the next arrival or departure.
      double t = now + o_.period;
      if (pending_jobs_ == 0) {
        double event = INFINITY;
        if (next < w_.jobs.size()) event = w_.jobs[next].arrival;
        if (!ends_.empty()) event = std::min(event, ends_.begin()->first);
        if (std::isfinite(event)) t = std::max(t, o_.period * std::ceil(event / o_.period));
      }
      AccountGangTime(t - now);
      now = t;
    }
    summary_.gpu_alloc_final = Share(sched::kGpu);
    summary_.cpu_alloc_final = Share(sched::kCpu);
    summary_.mean_queue_delay = placed_delay_n_ == 0 ? 0 : placed_delay_sum_ / placed_delay_n_;
    summary_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return summary_;
  }

 private:
  double Share(std::string_view dim) const {
    const int64_t cap = capacity_.Get(dim);
    return cap == 0 ? 0 : static_cast<double>(used_.Get(dim)) / static_cast<double>(cap);
  }

  absl::Status AddJob(const SimJob& j, bool has_enqueue) {
    JobInfo job(kNamespace, j.name);
    job.queue = j.queue;
    job.min_available = j.min_available;
    job.creation_time = At(j.arrival);
    job.podgroup_status.phase =
        has_enqueue ? sched::PodGroupPhase::kPending : sched::PodGroupPhase::kInqueue;
    const std::string uid = job.uid;
    auto s = cluster_.AddJob(std::move(job));
    if (!s.ok()) return s;
    for (size_t i = 0; i < j.tasks.size(); ++i) {
      const SimTask& st = j.tasks[i];
      TaskInfo t;
      t.name = fmt::format("{}-task-{}", j.name, i);
      t.uid = uid + "/" + t.name;
      t.namespace_name = kNamespace;
      t.job_id = uid;
      t.creation_time = At(j.arrival);
      t.resreq = RequestOf(st);
      t.init_resreq = t.resreq;
      t.gpu = st.gpu;
      if (st.vgpu_number > 0) {
        // As the cache reads a pod's vGPU limits: the count stays in resreq, the per-GPU memory
        // and cores live in the request.
        t.resreq.SetUnits(sched::kVgpuNumber, st.vgpu_number);
        t.init_resreq = t.resreq;
        auto req = std::make_shared<sched::VgpuRequest>();
        req->containers.push_back(sched::VgpuContainerRequest{
            st.vgpu_number, st.vgpu_memory, sched::kVgpuNoPercentage, st.vgpu_cores});
        req->group_key = fmt::format("{}/{}", kNamespace, j.name);
        req->spread = st.vgpu_spread;
        t.vgpu = std::move(req);
      }
      arrived_gpu_ += st.gpu.TotalMilli();
      s = cluster_.AddTask(std::move(t));
      if (!s.ok()) return s;
    }
    active_[uid] = &j;
    ++pending_jobs_;
    return absl::OkStatus();
  }

  absl::Status Cycle(double now) {
    sched::CycleDeps deps;
    deps.plugins = &plugins_;
    deps.actions = &actions_;
    deps.binder = &binder_;
    deps.node_sampler = &sampler_;
    const auto start = std::chrono::steady_clock::now();
    auto s =
        sched::RunCycleOn(cluster_, config_, deps, fmt::format("sim-{}", summary_.cycles), At(now));
    summary_.scheduler_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++summary_.cycles;
    if (!s.ok()) return s;
    for (auto& [job_id, req] : binder_.Take()) {
      JobInfo* job = cluster_.FindJob(job_id);
      if (job == nullptr) continue;
      TaskInfo* task = job->FindTask(req.task_uid);
      NodeInfo* node = cluster_.FindNode(req.node_name);
      if (task == nullptr || node == nullptr) continue;
      const TaskStatus old = task->status;
      job->UpdateTaskStatus(task, TaskStatus::kRunning);
      s = node->UpdateTask(task, old);
      if (!s.ok()) return s;
      used_ += task->resreq;
      ++summary_.placed_tasks;
      if (o_.placements != nullptr) WritePlacement(*task, *node);
      placed_delay_sum_ +=
          now - std::chrono::duration<double>(task->creation_time.time_since_epoch()).count();
      ++placed_delay_n_;
    }
    // Jobs whose gang now runs start their clock; the trace protocol drops what did not fit.
    std::vector<std::string> retire, drop;
    pending_jobs_ = 0;
    for (auto& [uid, sj] : active_) {
      JobInfo* job = cluster_.FindJob(uid);
      const int running = job->TaskCount(TaskStatus::kRunning);
      const int total = static_cast<int>(job->tasks().size());
      if (running == total) {
        if (sj->duration > 0) {
          ends_.emplace(now + sj->duration, uid);
          finishing_[uid] = true;
        } else if (o_.drop_unplaced) {
          retire.push_back(uid);
        }
        continue;
      }
      if (o_.drop_unplaced) {
        drop.push_back(uid);
      } else {
        ++pending_jobs_;
      }
    }
    for (const auto& uid : retire) {
      s = Retire(uid);
      if (!s.ok()) return s;
    }
    for (const auto& uid : drop) {
      // Its pods stay in the snapshot as pending pods outside any PodGroup on no node, as an
      // unplaceable pod stays Pending in a real cluster: no action looks at them, but plugins
      // that learn the workload from the snapshot (fgd) still count them.
      std::vector<TaskInfo> tasks;
      for (const auto& [tuid, t] : cluster_.FindJob(uid)->tasks()) tasks.push_back(t);
      summary_.dropped_tasks += static_cast<int64_t>(tasks.size());
      s = RemoveJob(uid);
      if (!s.ok()) return s;
      for (TaskInfo& t : tasks) {
        t.job_id.clear();
        t.node_name.clear();
        t.status = TaskStatus::kPending;
        t.gpu_ids.clear();
        t.gpu_node.clear();
        s = cluster_.AddTask(std::move(t));
        if (!s.ok()) return s;
      }
    }
    for (auto it = active_.begin(); it != active_.end();) {
      it = finishing_.count(it->first) != 0 ? active_.erase(it) : std::next(it);
    }
    return absl::OkStatus();
  }

  // Moves the job's running pods out of the job list: they stay on their nodes as pods outside
  // any PodGroup (the session no longer iterates them every cycle).
  absl::Status Retire(const std::string& uid) {
    JobInfo* job = cluster_.FindJob(uid);
    std::vector<TaskInfo> tasks;
    for (const auto& [tuid, t] : job->tasks()) tasks.push_back(t);
    for (const TaskInfo& t : tasks) {
      auto s = cluster_.RemoveTask(uid, t.uid);
      if (!s.ok()) return s;
    }
    cluster_.jobs().erase(uid);
    active_.erase(uid);
    for (TaskInfo& t : tasks) {
      t.job_id.clear();
      auto s = cluster_.AddTask(std::move(t));
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status RemoveJob(const std::string& uid) {
    JobInfo* job = cluster_.FindJob(uid);
    std::vector<std::string> uids;
    for (const auto& [tuid, t] : job->tasks()) {
      uids.push_back(tuid);
      if (t.status == TaskStatus::kRunning) used_ -= t.resreq;
    }
    for (const auto& tuid : uids) {
      auto s = cluster_.RemoveTask(uid, tuid);
      if (!s.ok()) return s;
    }
    cluster_.jobs().erase(uid);
    active_.erase(uid);
    return absl::OkStatus();
  }

  void Complete(double now) {
    while (!ends_.empty() && ends_.begin()->first <= now) {
      const std::string uid = ends_.begin()->second;
      ends_.erase(ends_.begin());
      finishing_.erase(uid);
      (void)RemoveJob(uid);
    }
  }

  void AccountGangTime(double dt) {
    if (dt <= 0) return;
    summary_.gpu_seconds += static_cast<double>(used_.Get(sched::kGpu)) / 1000 * dt;
    for (const auto& [uid, sj] : active_) {
      const JobInfo* job = cluster_.FindJob(uid);
      if (job == nullptr) continue;
      const int running = job->TaskCount(TaskStatus::kRunning);
      if (running > 0 && running < job->min_available) {
        summary_.partial_gang_gpu_seconds +=
            static_cast<double>(job->allocated().Get(sched::kGpu)) / 1000 * dt;
      }
    }
  }

  // Expected GPU fragmentation of the cluster (share of capacity) for the task types present.
  double Fragmentation() {
    const std::vector<sched::FgdTaskType> types = sched::FgdTaskTypes(cluster_);
    std::unordered_map<std::string, double> memo;
    double sum = 0;
    for (const auto& [name, node] : cluster_.nodes()) {
      const sched::FgdGpuView view = sched::GpuViewOf(node);
      if (view.kind == sched::FgdGpuView::Kind::kNone) continue;
      std::vector<int32_t> g = view.free;
      std::sort(g.begin(), g.end());
      std::string key = fmt::format("{}/{}/{}/{}/{}/{}", static_cast<int>(view.kind), view.model,
                                    view.device_memory, node.idle().milli_cpu(),
                                    node.idle().memory(), fmt::join(g, ","));
      auto it = memo.find(key);
      if (it == memo.end()) {
        it = memo.emplace(std::move(key), sched::NodeExpectedFragmentation(node, types)).first;
      }
      sum += it->second;
    }
    const int64_t cap = capacity_.Get(sched::kGpu);
    return cap == 0 ? 0 : sum / static_cast<double>(cap);
  }

  void WritePlacement(const TaskInfo& task, const NodeInfo& node) {
    std::vector<size_t> vgpus;
    for (const auto& container : task.vgpu_assignment) {
      for (const sched::VgpuContainerDevice& d : container) {
        const auto& devs = node.vgpus().devices();
        for (size_t i = 0; i < devs.size(); ++i) {
          if (devs[i].uuid == d.uuid) vgpus.push_back(i);
        }
      }
    }
    *o_.placements << fmt::format("{},{},{},{}\n", task.name, node.name(), fmt::join(vgpus, "|"),
                                  fmt::join(task.gpu_ids, "|"));
  }

  void WriteHeader() {
    *o_.csv << "time_s,arrived_gpu_pct,gpu_alloc_pct,cpu_alloc_pct,gpu_frag_pct,pending_jobs,"
               "placed_tasks,dropped_tasks,mean_queue_delay_s";
    for (const SimQueue& q : w_.queues) *o_.csv << ",share_" << q.name << ",weight_" << q.name;
    *o_.csv << "\n";
  }

  // One row per cycle for YAML workloads; for the trace, one per percent of arrived demand.
  void Row(double now) {
    if (o_.csv == nullptr) return;
    const int64_t cap = capacity_.Get(sched::kGpu);
    const double arrived = cap == 0 ? 0 : 100.0 * static_cast<double>(arrived_gpu_) / cap;
    if (o_.drop_unplaced) {
      const auto pct = static_cast<int64_t>(std::floor(arrived));
      if (pct == last_row_pct_) return;
      last_row_pct_ = pct;
    }
    std::map<std::string, Resource> per_queue;
    for (const auto& [uid, job] : cluster_.jobs()) per_queue[job.queue] += job.allocated();
    int64_t weight_sum = 0;
    for (const SimQueue& q : w_.queues) weight_sum += q.weight;
    *o_.csv << fmt::format("{:.1f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{},{:.2f}", now, arrived,
                           100 * Share(sched::kGpu), 100 * Share(sched::kCpu),
                           100 * Fragmentation(), pending_jobs_, summary_.placed_tasks,
                           summary_.dropped_tasks,
                           placed_delay_n_ == 0 ? 0 : placed_delay_sum_ / placed_delay_n_);
    const std::string_view dim = cap > 0 ? sched::kGpu : sched::kCpu;
    for (const SimQueue& q : w_.queues) {
      const double share = capacity_.Get(dim) == 0
                               ? 0
                               : 100.0 * static_cast<double>(per_queue[q.name].Get(dim)) /
                                     static_cast<double>(capacity_.Get(dim));
      *o_.csv << fmt::format(",{:.3f},{:.3f}", share, 100.0 * q.weight / weight_sum);
    }
    *o_.csv << "\n";
  }

  const Workload& w_;
  const sched::SchedulerConfig& config_;
  const SimOptions& o_;
  sched::PluginRegistry plugins_;
  sched::ActionRegistry actions_;
  sched::NodeSampler sampler_;
  SimBinder binder_;
  ClusterInfo cluster_;
  Resource capacity_;
  Resource used_;
  int64_t arrived_gpu_ = 0;
  bool mark_done_ = false;
  int64_t pending_jobs_ = 0;
  int64_t last_row_pct_ = -1;
  double placed_delay_sum_ = 0;
  int64_t placed_delay_n_ = 0;
  std::map<std::string, const SimJob*> active_;  // jobs not yet fully running
  std::map<std::string, bool> finishing_;
  std::multimap<double, std::string> ends_;  // departure time -> job
  SimSummary summary_;
};

}  // namespace

std::string SimSummary::OneLine() const {
  return fmt::format(
      "jobs={} tasks={} placed={} dropped={} cycles={} gpu_alloc_at_100pct={} "
      "gpu_alloc_final={:.2f}% cpu_alloc_final={:.2f}% partial_gang_gpu_seconds={:.1f} "
      "mean_queue_delay_s={:.1f} scheduler_s={:.2f} us_per_task={:.1f} wall_s={:.2f}",
      jobs, tasks, placed_tasks, dropped_tasks, cycles,
      gpu_alloc_at_mark < 0 ? std::string("n/a") : fmt::format("{:.2f}%", 100 * gpu_alloc_at_mark),
      100 * gpu_alloc_final, 100 * cpu_alloc_final, partial_gang_gpu_seconds, mean_queue_delay,
      scheduler_seconds, tasks == 0 ? 0 : 1e6 * scheduler_seconds / static_cast<double>(tasks),
      wall_seconds);
}

absl::StatusOr<SimSummary> RunSimulation(const Workload& workload,
                                         const sched::SchedulerConfig& config,
                                         const SimOptions& options) {
  return Run(workload, config, options).Go();
}

}  // namespace basalt::sim
