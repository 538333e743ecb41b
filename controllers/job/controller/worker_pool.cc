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

WorkerPool::WorkerPool(int threads) : max_threads_(static_cast<size_t>(std::max(1, threads))) {}

WorkerPool::~WorkerPool() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t WorkerPool::started() const {
  std::lock_guard<std::mutex> l(mu_);
  return threads_.size();
}

void WorkerPool::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {  // counted in idle_ here (by the starter at first, then after each task)
    cv_.wait(l, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    l.unlock();
    task();
    l.lock();
    ++idle_;
  }
}

void WorkerPool::ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  const size_t helpers = std::min({std::max<size_t>(concurrency, 1), n, max_threads_ + 1}) - 1;
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
    // A thread for each queued task no idle thread will take, up to the bound.
    while (idle_ < tasks_.size() && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { Loop(); });
      ++idle_;
    }
  }
  cv_.notify_all();
  batch->Work();
  // Every index has been taken; wait for the helpers still running one. A helper that starts
  // later finds none left and never touches `fn`.
  std::unique_lock<std::mutex> l(batch->mu);
  batch->done.wait(l, [&] { return batch->running == 0; });
}

}  // namespace basalt::controllers
