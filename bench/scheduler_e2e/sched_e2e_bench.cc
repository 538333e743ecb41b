// sched_e2e_bench: vc-scheduler end to end against a real API server (KWOK nodes), next to the
// raw bind ceiling of that API server. Figures only; never pass/fail. Driven by run.sh.
//
//   --mode=throughput  Creates --gangs gangs of --gang-size 1-GPU pods in queue --queue (which
//                      run.sh created with capability nvidia.com/gpu: 0, so the running
//                      scheduler admits nothing), then opens the queue with one PATCH and
//                      measures from that PATCH until every pod is bound: pods bound per second.
//   --mode=bind        Creates the same pods for a scheduler nobody runs, then binds them itself
//                      with --bind-workers concurrent POST pods/binding (round robin over the
//                      nodes): the ceiling a scheduler with that concurrency cannot beat.
//   --mode=latency     With the scheduler running and the queue open, creates gangs at --rate
//                      pods/s and measures each pod's create->bound latency (client clock:
//                      before the POST of the pod -> the watch event that shows spec.nodeName).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/parallel.h"
#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode = "throughput";
  std::string ns = "bench";
  std::string queue = "bench";
  std::string scheduler_name = "volcano";
  int gangs = 500;
  int gang_size = 4;
  int create_workers = 32;
  int bind_workers = 16;
  double rate = 200;
  bool fill_nodes = false;
};

std::string PodJson(const Options& o, const std::string& name, const std::string& group) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}",)"
      R"("annotations":{{"scheduling.k8s.io/group-name":"{}"}}}},"spec":{{"schedulerName":"{}",)"
      R"("containers":[{{"name":"main","image":"busybox","resources":{{"requests":{{"cpu":"1",)"
      R"("memory":"1Gi","nvidia.com/gpu":"1"}},"limits":{{"nvidia.com/gpu":"1"}}}}}}]}}}})",
      name, o.ns, group, o.scheduler_name);
}

std::string PodGroupJson(const Options& o, const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({{"name":"{}","namespace":"{}"}},"spec":{{"minMember":{},"queue":"{}",)"
      R"("minResources":{{"cpu":"{}","memory":"{}Gi","nvidia.com/gpu":"{}"}}}}}})",
      name, o.ns, o.gang_size, o.queue, o.gang_size, o.gang_size, o.gang_size);
}

// Records when each pod first shows a node, from a watch started before anything is created.
class BoundWatcher {
 public:
  BoundWatcher(client::Client* c, std::string ns) : client_(c), ns_(std::move(ns)) {}
  absl::Status Start() {
    BASALT_ASSIGN_OR_RETURN(client::ObjectList list, client_->List(client::Pods(), ns_));
    rv_ = list.resource_version;
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }
  void Stop() {
    cancel_.Cancel();
    if (thread_.joinable()) thread_.join();
  }
  size_t bound() const {
    std::lock_guard<std::mutex> l(mu_);
    return bound_.size();
  }
  std::map<std::string, Clock::time_point> times() const {
    std::lock_guard<std::mutex> l(mu_);
    return bound_;
  }

 private:
  void Run() {
    while (!cancel_.cancelled()) {
      client::ListOptions o;
      o.resource_version = rv_;
      o.timeout_seconds = 600;
      absl::Status s = client_->Watch(
          client::Pods(), ns_, o,
          [this](client::WatchEvent&& e) {
            if (const json::Value* rv = json::FindPath(e.object, {"metadata", "resourceVersion"})) {
              rv_ = std::string(json::AsView(*rv));
            }
            const json::Value* node = json::FindPath(e.object, {"spec", "nodeName"});
            const json::Value* name = json::FindPath(e.object, {"metadata", "name"});
            if (node != nullptr && name != nullptr && !json::AsView(*node).empty()) {
              std::lock_guard<std::mutex> l(mu_);
              bound_.try_emplace(std::string(json::AsView(*name)), Clock::now());
            }
            return absl::OkStatus();
          },
          &cancel_);
      if (!s.ok() && !cancel_.cancelled()) {
        std::fprintf(stderr, "watch: %s\n", std::string(MessageOf(s)).c_str());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
  }
  client::Client* client_;
  std::string ns_;
  std::string rv_;
  client::CancelToken cancel_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, Clock::time_point> bound_;
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void CreateGang(client::Client& c, const Options& o, int g,
                std::map<std::string, Clock::time_point>* created, std::mutex* mu) {
  std::string group = fmt::format("g{}", g);
  if (auto s = c.Create(client::PodGroups(), o.ns, PodGroupJson(o, group)).status(); !s.ok()) {
    std::fprintf(stderr, "create podgroup: %s\n", std::string(MessageOf(s)).c_str());
  }
  for (int i = 0; i < o.gang_size; ++i) {
    std::string name = fmt::format("{}-{}", group, i);
    auto t = Clock::now();
    if (auto s = c.Create(client::Pods(), o.ns, PodJson(o, name, group)).status(); !s.ok()) {
      std::fprintf(stderr, "create pod: %s\n", std::string(MessageOf(s)).c_str());
    }
    if (created != nullptr) {
      std::lock_guard<std::mutex> l(*mu);
      created->emplace(name, t);
    }
  }
}

bool WaitBound(const BoundWatcher& w, size_t n, std::chrono::seconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (w.bound() < n) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

int Main(int argc, char** argv) {
  client::FlagSet flags("sched_e2e_bench");
  client::ClientOptions co;
  co.kube_api_qps = 5000;
  co.kube_api_burst = 5000;
  co.AddFlags(flags);
  Options o;
  flags.String("mode", &o.mode, "throughput | bind | latency");
  flags.String("namespace", &o.ns, "namespace (created if missing)");
  flags.String("queue", &o.queue, "queue of the PodGroups");
  flags.String("scheduler-name", &o.scheduler_name, "schedulerName of the pods");
  flags.Int("gangs", &o.gangs, "gangs");
  flags.Int("gang-size", &o.gang_size, "pods per gang (1 GPU each)");
  flags.Int("create-workers", &o.create_workers, "concurrent creates");
  flags.Int("bind-workers", &o.bind_workers, "concurrent binds (bind mode)");
  flags.Double("rate", &o.rate, "pods per second (latency mode)");
  flags.Bool("fill-nodes", &o.fill_nodes, "bind mode: fill nodes in order instead of round robin");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  auto client = client::Client::FromOptions(co);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(client.status())).c_str());
    return 1;
  }
  client::Client& c = **client;
  (void)c.Create(
      client::Namespaces(), "",
      fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})", o.ns));
  const size_t total = static_cast<size_t>(o.gangs) * static_cast<size_t>(o.gang_size);
  BoundWatcher watcher(&c, o.ns);
  if (absl::Status s = watcher.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(s)).c_str());
    return 1;
  }

  if (o.mode == "throughput" || o.mode == "bind") {
    auto t0 = Clock::now();
    Parallel(o.gangs, o.create_workers, [&](int g) { CreateGang(c, o, g, nullptr, nullptr); });
    auto created = Clock::now();
    std::printf("created %zu pods in %d gangs in %.0f ms (%.0f pods/s)\n", total, o.gangs,
                Ms(created - t0), total / (Ms(created - t0) / 1000));
    std::this_thread::sleep_for(std::chrono::seconds(2));  // let every watch catch up
    auto start = Clock::now();
    if (o.mode == "throughput") {
      auto s = c.Patch(client::Queues(), "", o.queue, client::PatchType::kMerge,
                       R"({"spec":{"capability":{"nvidia.com/gpu":"1000000"}}})")
                   .status();
      if (!s.ok()) std::fprintf(stderr, "open queue: %s\n", std::string(MessageOf(s)).c_str());
    } else {
      auto list = c.List(client::Nodes(), "");
      std::vector<std::string> nodes;
      if (list.ok()) {
        for (auto& n : list->items) {
          nodes.emplace_back(json::AsView(*json::FindPath(n, {"metadata", "name"})));
        }
      }
      std::sort(nodes.begin(), nodes.end());
      std::atomic<int> failures{0};
      std::vector<double> call_ms(total);
      Parallel(static_cast<int>(total), o.bind_workers, [&](int i) {
        std::string pod = fmt::format("g{}-{}", i / o.gang_size, i % o.gang_size);
        // Fill nodes in order (8 one-GPU pods each), or spread round robin.
        const size_t slot = o.fill_nodes ? static_cast<size_t>(i) / 8 : static_cast<size_t>(i);
        const std::string& node = nodes[slot % nodes.size()];
        auto t = Clock::now();
        if (!c.Bind(o.ns, pod, node).ok()) ++failures;
        call_ms[static_cast<size_t>(i)] = Ms(Clock::now() - t);
      });
      std::sort(call_ms.begin(), call_ms.end());
      std::printf("bind: one POST pods/binding took p50 %.1f ms, p99 %.1f ms\n",
                  call_ms[call_ms.size() / 2], call_ms[call_ms.size() * 99 / 100]);
      std::printf("bind: %zu POST pods/binding answered in %.2f s (%.0f/s)\n", total,
                  Ms(Clock::now() - start) / 1000, total / (Ms(Clock::now() - start) / 1000));
      if (failures > 0) std::printf("bind failures: %d\n", failures.load());
    }
    bool ok = WaitBound(watcher, total, std::chrono::seconds(600));
    auto times = watcher.times();
    Clock::time_point last = start;
    Clock::time_point first = Clock::time_point::max();
    size_t early = 0;
    for (auto& [n, t] : times) {
      last = std::max(last, t);
      first = std::min(first, t);
      if (t < start) ++early;
    }
    if (early > 0) {
      std::printf("WARNING: %zu pods were bound before the clock started: figures invalid\n",
                  early);
    }
    if (!times.empty()) std::printf("first pod bound %.0f ms after the start\n", Ms(first - start));
    double secs = Ms(last - start) / 1000;
    std::printf("%s: %zu/%zu pods bound in %.2f s: %.0f pods/s%s\n", o.mode.c_str(), times.size(),
                total, secs, times.size() / secs, ok ? "" : " (TIMED OUT)");
  } else if (o.mode == "latency") {
    std::map<std::string, Clock::time_point> created;
    std::mutex mu;
    auto t0 = Clock::now();
    const auto gang_interval = std::chrono::duration<double>(o.gang_size / o.rate);
    Parallel(o.gangs, o.create_workers, [&](int g) {
      auto due = t0 + std::chrono::duration_cast<Clock::duration>(gang_interval * g);
      std::this_thread::sleep_until(due);
      CreateGang(c, o, g, &created, &mu);
    });
    bool ok = WaitBound(watcher, total, std::chrono::seconds(600));
    auto times = watcher.times();
    std::vector<double> lat;
    for (auto& [name, t] : created) {
      auto it = times.find(name);
      if (it != times.end()) lat.push_back(Ms(it->second - t));
    }
    std::sort(lat.begin(), lat.end());
    auto pct = [&](double p) {
      return lat.empty() ? 0.0 : lat[std::min(lat.size() - 1, static_cast<size_t>(p * lat.size()))];
    };
    double secs = Ms(Clock::now() - t0) / 1000;
    std::printf(
        "latency: offered %.0f pods/s, %zu/%zu bound%s; create->bound p50 %.0f ms, p90 %.0f ms, "
        "p99 %.0f ms, max %.0f ms (run %.1f s)\n",
        o.rate, lat.size(), total, ok ? "" : " (TIMED OUT)", pct(0.5), pct(0.9), pct(0.99),
        lat.empty() ? 0.0 : lat.back(), secs);
  } else {
    std::fprintf(stderr, "unknown --mode %s\n", o.mode.c_str());
    watcher.Stop();
    return 2;
  }
  watcher.Stop();
  return 0;
}

}  // namespace
}  // namespace basalt::bench

int main(int argc, char** argv) { return basalt::bench::Main(argc, argv); }
