#pragma once
// WorkerPool is a bounded set of threads shared by every job's reconcile: ParallelFor(n, fn)
// runs fn(0..n-1) on the calling thread and on whichever pool threads are free, so the API
// calls in flight for pods stay bounded by the pool size (plus the callers) however many jobs
// are reconciled at once, and no thread is started per call. Threads start on demand, when
// work is queued and none is idle, up to the bound, and then stay: an idle controller (small
// jobs only, or none) has no pool threads, their stacks or their malloc arenas.
//
// Thread-safety: ParallelFor may be called from any number of threads at once, but not from
// inside `fn` on a pool thread. The destructor waits for the threads; no call may be running.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace basalt::controllers {

class WorkerPool {
 public:
  // `threads` < 1 reads as 1.
  explicit WorkerPool(int threads);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  // Calls fn(i) once for each i in [0, n), at most `concurrency` at a time (the caller being
  // one of them), and returns when every call has returned.
  void ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn);

  // The bound, and the threads started so far.
  size_t size() const { return max_threads_; }
  size_t started() const;

 private:
  void Loop();

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  size_t idle_ = 0;                          // threads waiting for a task; guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_
};

}  // namespace basalt::controllers
