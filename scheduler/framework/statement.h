#pragma once
// A Statement is a transaction over a Session: Allocate, Pipeline and Evict are applied to the
// session immediately (task status, node, job and queue accounting, plugin handlers) and logged.
// Commit() makes them real in order (evictions go to the Evictor, allocations to the Binder as
// one gang); Discard() undoes them in reverse order, remembering each task's last transaction so
// its pod can say "can possibly be assigned to <node>". A statement that is neither committed
// nor discarded keeps its placements for the rest of the session (a pipelined gang).
//
// Single-threaded, like its Session, which must outlive it.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

class Statement {
 public:
  explicit Statement(Session* ssn) : ssn_(ssn) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Each returns the session's error (e.g. kFailedPrecondition if the task does not fit) and
  // then logs nothing: a failed operation leaves the session unchanged.
  absl::Status Allocate(TaskInfo* task, NodeInfo* node);
  absl::Status Pipeline(TaskInfo* task, NodeInfo* node);
  absl::Status Evict(TaskInfo* task, std::string reason);
  absl::Status Evict(TaskInfo* task, EvictionCause cause);

  void Commit();
  void Discard();
  // Moves `other`'s operations to the end of this statement's log.
  void Merge(Statement& other);
  bool Empty() const { return operations_.empty(); }
  size_t size() const { return operations_.size(); }

 private:
  enum class Kind { kAllocate, kPipeline, kEvict };
  struct Operation {
    Kind kind;
    TaskInfo* task;
    EvictionCause cause;         // evictions
    TaskStatus previous_status;  // evictions
  };

  Session* ssn_;
  std::vector<Operation> operations_;
};

}  // namespace basalt::sched
