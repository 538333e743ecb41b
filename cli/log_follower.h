#pragma once
// LogFollower: `vcctl job run --wait --logs TASK`. On its own thread it finds the first pod of
// the task (labels volcano.sh/job-name, volcano.sh/task-spec, volcano.sh/task-index=0) once it
// is bound and started, streams its log (pods/log?follow=true, the first container) to the
// Printer's out, and when the stream ends follows the pod that replaces it (a restarted job).
// A pod whose node serves no logs (KWOK, a node without a kubelet endpoint) is reported once on
// err; the follower then waits for the next pod. Nothing it meets ends the wait.
//
// Thread-safe; the thread runs from construction until Stop() or destruction. `client` and
// `printer` must outlive it.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "cli/api.h"
#include "cli/printer.h"
#include "common/api/core.h"
#include "common/client/client.h"

namespace basalt::cli {

class LogFollower {
 public:
  LogFollower(client::Client& client, std::string ns, std::string job, std::string task,
              Printer& printer,
              std::chrono::milliseconds poll_interval = std::chrono::milliseconds(1000));
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;
  ~LogFollower() { Stop(); }

  // Cancels a running log stream and joins the thread. Idempotent.
  void Stop();

 private:
  void Run(std::stop_token st);
  // Sleeps up to the poll interval; false when asked to stop.
  bool Pause(std::stop_token& st);
  void Follow(const api::Pod& pod);

  client::Client& client_;
  Api api_;
  const std::string ns_, job_, task_;
  Printer& printer_;
  const std::chrono::milliseconds poll_interval_;
  client::CancelToken cancel_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::jthread thread_;  // last: started once everything above is constructed
};

}  // namespace basalt::cli
