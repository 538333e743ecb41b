#include "scheduler/framework/statement.h"

#include "fmt/format.h"

namespace basalt::sched {

std::string EvictionCause::Message() const {
  if (preemptor_job.empty()) return reason;
  return fmt::format("{}: making room for job {} (queue {}, priority {})", reason, preemptor_job,
                     preemptor_queue, preemptor_priority);
}

absl::Status Statement::Allocate(TaskInfo* task, NodeInfo* node) {
  absl::Status s = ssn_->DoAllocate(task, node);
  if (s.ok()) operations_.push_back(Operation{Kind::kAllocate, task, {}, TaskStatus::kPending});
  return s;
}

absl::Status Statement::Pipeline(TaskInfo* task, NodeInfo* node) {
  absl::Status s = ssn_->DoPipeline(task, node);
  if (s.ok()) operations_.push_back(Operation{Kind::kPipeline, task, {}, TaskStatus::kPending});
  return s;
}

absl::Status Statement::Evict(TaskInfo* task, std::string reason) {
  EvictionCause cause;
  cause.reason = std::move(reason);
  return Evict(task, std::move(cause));
}

absl::Status Statement::Evict(TaskInfo* task, EvictionCause cause) {
  TaskStatus previous = task->status;
  absl::Status s = ssn_->DoEvict(task);
  if (s.ok()) operations_.push_back(Operation{Kind::kEvict, task, std::move(cause), previous});
  return s;
}

void Statement::Discard() {
  for (auto it = operations_.rbegin(); it != operations_.rend(); ++it) {
    switch (it->kind) {
      case Kind::kAllocate:
        ssn_->UndoAllocate(it->task);
        break;
      case Kind::kPipeline:
        ssn_->UndoPipeline(it->task);
        break;
      case Kind::kEvict:
        ssn_->UndoEvict(it->task, it->previous_status);
        break;
    }
  }
  operations_.clear();
}

void Statement::Commit() {
  std::vector<TaskInfo*> to_bind;
  for (const auto& op : operations_) {
    switch (op.kind) {
      case Kind::kEvict:
        ssn_->SendEviction(*op.task, op.cause);
        break;
      case Kind::kPipeline:
        break;  // nothing is persisted; the task waits for releasing pods
      case Kind::kAllocate:
        to_bind.push_back(op.task);
        break;
    }
  }
  ssn_->Dispatch(to_bind);
  operations_.clear();
}

void Statement::Merge(Statement& other) {
  operations_.insert(operations_.end(), other.operations_.begin(), other.operations_.end());
  other.operations_.clear();
}

}  // namespace basalt::sched
