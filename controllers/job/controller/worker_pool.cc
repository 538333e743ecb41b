#include "controllers/job/controller/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace basalt::controllers {
namespace {

// One ParallelFor: helpers that start after every index was taken return at once, so the
// caller waits only for helpers that took an index.
struct Batch {
  size_t n = 0;
  const std::function<void(size_t)>* fn = nullptr;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable done;
  int running = 0;  // guarded by mu

  void Work() {
    {
      std::lock_guard<std::mutex> l(mu);
      ++running;
    }
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) (*fn)(i);
    std::lock_guard<std::mutex> l(mu);
    if (--running == 0) done.notify_all();
  }
};

}  // namespace

WorkerPool::WorkerPool(int threads) {
  const int count = std::max(1, threads);
  threads_.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void WorkerPool::ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  const size_t helpers = std::min({std::max<size_t>(concurrency, 1), n, threads_.size() + 1}) - 1;
  if (helpers == 0) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  auto batch = std::make_shared<Batch>();
  batch->n = n;
  batch->fn = &fn;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (size_t h = 0; h < helpers; ++h) tasks_.emplace_back([batch] { batch->Work(); });
  }
  cv_.notify_all();
  batch->Work();
  // Every index has been taken; wait for the helpers still running one. A helper that starts
  // later finds none left and never touches `fn`.
  std::unique_lock<std::mutex> l(batch->mu);
  batch->done.wait(l, [&] { return batch->running == 0; });
}

}  // namespace basalt::controllers
