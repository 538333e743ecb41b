#include "cli/log_follower.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/api/vocabulary.h"
#include "common/client/resource.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::cli {

LogFollower::LogFollower(client::Client& client, std::string ns, std::string job, std::string task,
                         Printer& printer, std::chrono::milliseconds poll_interval)
    : client_(client),
      api_(&client),
      ns_(std::move(ns)),
      job_(std::move(job)),
      task_(std::move(task)),
      printer_(printer),
      poll_interval_(poll_interval),
      thread_([this](std::stop_token st) { Run(st); }) {}

void LogFollower::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cancel_.Cancel();
  cv_.notify_all();
  thread_.join();
}

bool LogFollower::Pause(std::stop_token& st) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, st, poll_interval_, [] { return false; });
  return !st.stop_requested();
}

void LogFollower::Run(std::stop_token st) {
  std::string followed_uid;
  client::ListOptions lo;
  lo.label_selector = fmt::format("{}={},{}={},{}=0", api::kJobNameKey, job_, api::kTaskSpecKey,
                                  task_, api::kTaskIndexKey);
  while (!st.stop_requested()) {
    std::optional<api::Pod> pod;
    if (absl::StatusOr<std::vector<json::Document>> docs = api_.List(client::Pods(), ns_, lo);
        docs.ok()) {
      for (json::Document& d : *docs) {
        absl::StatusOr<api::Object> obj = api::Object::FromDocument(std::move(d));
        if (!obj.ok()) continue;
        absl::StatusOr<api::Pod> p = api::Pod::FromObject(*std::move(obj));
        if (p.ok() && !p->deletion_timestamp()) pod = *std::move(p);
      }
    }
    // A pod that is not bound, or bound but not started, has no log yet.
    const bool started =
        pod && !pod->spec().node_name.empty() &&
        (pod->status().phase != "Pending" || !pod->status().container_statuses.empty());
    if (!started || pod->uid() == followed_uid) {
      if (!Pause(st)) return;
      continue;
    }
    followed_uid = std::string(pod->uid());
    Follow(*pod);
  }
}

void LogFollower::Follow(const api::Pod& pod) {
  const std::string key = pod.Key();
  printer_.Err(fmt::format("vcctl: following the logs of pod {} (task {})", key, task_));
  client::Request req;
  req.path = client::ResourcePath(client::Pods(), ns_, pod.name(), "log") + "?follow=true";
  if (pod.spec().containers.size() > 1) {
    req.path += "&container=" + client::UrlEncode(pod.spec().containers[0].name);
  }
  absl::StatusOr<client::Response> r = client_.transport().Stream(
      req,
      [this](std::string_view line) {
        printer_.Out(line);
        return absl::OkStatus();
      },
      &cancel_);
  if (cancel_.cancelled()) return;
  if (!r.ok()) {
    printer_.Err(fmt::format("vcctl: no logs for pod {}: {}", key, MessageOf(r.status())));
  } else if (r->status_code < 200 || r->status_code >= 300) {
    printer_.Err(fmt::format("vcctl: no logs for pod {} (its node serves none): {}", key,
                             MessageOf(ServerError(r->status_code, r->body))));
  }
}

}  // namespace basalt::cli
