#pragma once
// The benchmarks' load generators: run fn(i) for every i in [0, n) on `workers` threads, each
// taking the next index as it finishes one. Blocks until all are done.

#include <atomic>
#include <thread>
#include <vector>

namespace basalt::bench {

template <typename Fn>
void Parallel(int n, int workers, Fn fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (int i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace basalt::bench
