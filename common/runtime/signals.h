#pragma once
// SignalWatcher turns SIGTERM and SIGINT into a callback on an ordinary thread, so that a
// graceful shutdown can take locks, log and join threads. The signal handler itself only
// writes the signal number to a pipe (the self-pipe trick: write(2) is async-signal-safe);
// the watcher thread reads the pipe and calls `on_signal`.
//
// A second signal after the first means "stop now" (as for kubectl delete --force or a
// double Ctrl-C): the process exits at once with 128 + signo, unless
// `exit_on_second_signal` is false.
//
// Only one SignalWatcher may be active per process. Its destructor restores the previous
// signal dispositions and joins the thread. Not copyable; Start/destructor are not
// thread-safe with each other.

#include <functional>
#include <thread>

#include "absl/status/status.h"

namespace basalt::runtime {

class SignalWatcher {
 public:
  // `on_signal` runs on the watcher thread with the signal number (SIGTERM or SIGINT).
  explicit SignalWatcher(std::function<void(int signo)> on_signal,
                         bool exit_on_second_signal = true);
  ~SignalWatcher();

  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // Installs the handlers and starts the thread. kFailedPrecondition if another watcher is
  // active; kInternal if a system call fails.
  absl::Status Start();

 private:
  void Loop();

  const std::function<void(int)> on_signal_;
  const bool exit_on_second_signal_;
  bool started_ = false;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::thread thread_;
};

}  // namespace basalt::runtime
