#include "scheduler/api/feasibility.h"

#include "fmt/format.h"

namespace basalt::sched {

ClusterLimits ComputeClusterLimits(const std::map<std::string, NodeInfo>& nodes) {
  ClusterLimits out;
  for (const auto& [name, node] : nodes) {
    out.largest_node = out.largest_node.Max(node.allocatable());
    out.total += node.allocatable();
    ++out.nodes;
  }
  return out;
}

std::optional<int64_t> CapabilityLimit(const QueueInfo& queue, std::string_view dimension) {
  if (!queue.capability.has_value()) return std::nullopt;
  const Resource& cap = *queue.capability;
  if (dimension == kCpu || dimension == kMemory) {
    const int64_t v = cap.Get(dimension);
    if (v <= 0) return std::nullopt;
    return v;
  }
  if (!cap.Has(dimension)) return std::nullopt;
  return cap.Get(dimension);
}

namespace {

// The first dimension (cpu, memory, scalars by name) in which `request` exceeds the queue's
// capability, with a message part, or nullopt.
std::optional<std::string> ExceedsCapability(const Resource& request, const QueueInfo* queue,
                                             std::string_view what) {
  if (queue == nullptr || !queue->capability.has_value()) return std::nullopt;
  for (const std::string& d : request.Names()) {
    std::optional<int64_t> limit = CapabilityLimit(*queue, d);
    if (limit.has_value() && request.Get(d) > *limit) {
      return fmt::format("{} {} {}, more than the capability of queue {} ({})", what, d,
                         FormatQuantity(d, request.Get(d)), queue->name, FormatQuantity(d, *limit));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> TaskNeverFits(const TaskInfo& task, const ClusterLimits& limits,
                                         const QueueInfo* queue) {
  // Both must fit on one node: the steady request and the init-container peak.
  const Resource need = task.resreq.Max(task.init_resreq);
  if (limits.nodes > 0) {
    for (const std::string& d : need.Names()) {
      if (need.Get(d) > limits.largest_node.Get(d)) {
        return fmt::format(
            "pod {} can never be scheduled: it requests {} {}, more than the largest allocatable "
            "of any node ({})",
            task.Key(), d, FormatQuantity(d, need.Get(d)),
            FormatQuantity(d, limits.largest_node.Get(d)));
      }
    }
  }
  if (auto why = ExceedsCapability(task.resreq, queue, "it requests"); why.has_value()) {
    return fmt::format("pod {} can never be scheduled: {}", task.Key(), *why);
  }
  return std::nullopt;
}

void MarkNeverFits(JobInfo& job, const ClusterLimits& limits, const QueueInfo* queue) {
  job.never_fit_tasks.clear();
  job.never_fits.clear();
  // Pods first: their message names the pod and the node or queue limit it exceeds.
  const TaskInfo* first = nullptr;  // the first never-fitting task by name, for the message
  for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
    if (t->BestEffort()) continue;
    std::optional<std::string> why = TaskNeverFits(*t, limits, queue);
    if (!why.has_value()) continue;
    job.never_fit_tasks.emplace(uid, *std::move(why));
    if (first == nullptr || t->name < first->name) first = t;
  }
  if (first != nullptr) {
    const int possible = job.ValidTaskNum() - static_cast<int>(job.never_fit_tasks.size());
    if (possible < job.min_available) {
      job.never_fits = job.never_fit_tasks.at(first->uid);
      return;
    }
  }
  // minResources only gate admission: a gang admitted before (say) its capability was lowered
  // keeps what it has and is judged by its pods.
  if (!job.min_resources.has_value() || !job.IsPending()) return;
  if (auto why = ExceedsCapability(*job.min_resources, queue, "its minResources request");
      why.has_value()) {
    job.never_fits = fmt::format("the gang can never be admitted: {}", *why);
    return;
  }
  if (limits.nodes == 0) return;
  for (const std::string& d : job.min_resources->Names()) {
    if (job.min_resources->Get(d) > limits.total.Get(d)) {
      job.never_fits = fmt::format(
          "the gang can never be admitted: its minResources request {} {}, more than all nodes "
          "can allocate together ({})",
          d, FormatQuantity(d, job.min_resources->Get(d)), FormatQuantity(d, limits.total.Get(d)));
      return;
    }
  }
}

}  // namespace basalt::sched
