// peers_bench: the one load generator and bind watcher of bench/peers (run.sh drives it), the
// same for every system measured (Basalt, Volcano, kube-scheduler). Figures only; never
// pass/fail.
//
// It watches the pods of --namespace from before it creates anything and records, per pod,
// the wall-clock time (Unix ms) of the first watch event that shows spec.nodeName. Then it
// creates, from --create-workers concurrent clients:
//   --create=gangs  --count PodGroups of minMember --size, each with --size pods (pre-made
//                   gangs: run.sh starts the scheduler afterwards);
//   --create=pods   --count bare pods (no PodGroup: the system's controllers make one, or
//                   kube-scheduler needs none);
//   --create=jobs   --count batch.volcano.sh Jobs of one task with --size replicas and
//                   minAvailable --size (the controllers make the PodGroup and the pods);
//   --create=none   nothing: only wait for --expect pods to be bound.
// It exits when --expect pods (default: every pod it made) are bound or after --timeout, and
// writes one CSV line per pod: pod,owner,created_ms,bound_ms (owner: the job or gang whose
// creation time is created_ms; bound_ms 0 when never bound).
// Each pod asks for --pod-cpu CPU, --pod-memory memory and, with --gpu, one nvidia.com/gpu.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
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

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Options {
  std::string create = "none";
  std::string ns = "bench";
  std::string queue = "default";
  std::string scheduler_name = "volcano";
  std::string pod_cpu = "100m";
  std::string pod_memory = "256Mi";
  bool gpu = false;
  int count = 100;
  int size = 1;
  int expect = -1;
  int create_workers = 16;
  int timeout_seconds = 900;
  std::string out;
};

std::string Resources(const Options& o) {
  std::string req = fmt::format(R"("cpu":"{}","memory":"{}")", o.pod_cpu, o.pod_memory);
  if (!o.gpu) return fmt::format(R"({{"requests":{{{}}}}})", req);
  return fmt::format(
      R"({{"requests":{{{},"nvidia.com/gpu":"1"}},"limits":{{"nvidia.com/gpu":"1"}}}})", req);
}

std::string PodJson(const Options& o, const std::string& name, const std::string& group) {
  std::string annotations =
      group.empty() ? "{}" : fmt::format(R"({{"scheduling.k8s.io/group-name":"{}"}})", group);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}",)"
      R"("labels":{{"app":"peers-bench"}},"annotations":{}}},"spec":{{"schedulerName":"{}",)"
      R"("containers":[{{"name":"main","image":"busybox","resources":{}}}]}}}})",
      name, o.ns, annotations, o.scheduler_name, Resources(o));
}

std::string PodGroupJson(const Options& o, const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({{"name":"{}","namespace":"{}"}},"spec":{{"minMember":{},"queue":"{}"}}}})",
      name, o.ns, o.size, o.queue);
}

// Everything set explicitly (queue, minAvailable, schedulerName): the webhooks are off, so no
// system's defaulting runs, and both controllers then see the same Job.
std::string JobJson(const Options& o, const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{{"name":"{}",)"
      R"("namespace":"{}"}},"spec":{{"schedulerName":"{}","queue":"{}","minAvailable":{},)"
      R"("maxRetry":3,"tasks":[{{"name":"t","replicas":{},"minAvailable":{},"template":{{)"
      R"("metadata":{{"labels":{{"app":"peers-bench"}}}},"spec":{{"restartPolicy":"Never",)"
      R"("schedulerName":"{}","containers":[{{"name":"main","image":"busybox","resources":{}}}]}}}}}}]}}}})",
      name, o.ns, o.scheduler_name, o.queue, o.size, o.size, o.size, o.scheduler_name,
      Resources(o));
}

// Records when each pod first shows a node (and which Job or gang it belongs to), from a
// watch started before anything is created. Re-lists on 410 (a long run may outlive the
// watch cache's window), keeping the first time seen.
class BoundWatcher {
 public:
  BoundWatcher(client::Client* c, std::string ns) : client_(c), ns_(std::move(ns)) {}
  absl::Status Start() {
    BASALT_RETURN_IF_ERROR(List());
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
  struct Pod {
    int64_t bound_ms = 0;
    std::string owner;
  };
  std::map<std::string, Pod> pods() const {
    std::lock_guard<std::mutex> l(mu_);
    return pods_;
  }

 private:
  absl::Status List() {
    BASALT_ASSIGN_OR_RETURN(client::ObjectList list, client_->ListAll(client::Pods(), ns_));
    for (auto& p : list.items) Observe(p);
    rv_ = list.resource_version;
    return absl::OkStatus();
  }
  void Observe(const json::Value& pod) {
    const json::Value* name = json::FindPath(pod, {"metadata", "name"});
    if (name == nullptr) return;
    std::string n(json::AsView(*name));
    std::string_view node = json::GetString(*json::Find(pod, "spec"), "nodeName");
    std::string owner;
    if (const json::Value* l = json::FindPath(pod, {"metadata", "labels", "volcano.sh/job-name"})) {
      owner = std::string(json::AsView(*l));
    } else if (const json::Value* g = json::FindPath(
                   pod, {"metadata", "annotations", "scheduling.k8s.io/group-name"})) {
      owner = std::string(json::AsView(*g));
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = pods_.try_emplace(n);
    if (it->second.owner.empty()) it->second.owner = owner;
    if (!node.empty() && it->second.bound_ms == 0) {
      it->second.bound_ms = NowMs();
      bound_.insert(n);
    }
  }
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
            if (e.type == client::WatchEventType::kAdded ||
                e.type == client::WatchEventType::kModified) {
              Observe(e.object);
            }
            return absl::OkStatus();
          },
          &cancel_);
      if (cancel_.cancelled()) break;
      if (absl::IsOutOfRange(s)) {
        if (absl::Status ls = List(); !ls.ok()) {
          std::fprintf(stderr, "relist: %s\n", std::string(MessageOf(ls)).c_str());
        }
      } else if (!s.ok()) {
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
  std::map<std::string, Pod> pods_;
  std::set<std::string> bound_;
};

// Creates with retries on 429/5xx/timeouts (the API server under this load answers some with
// "too many requests"); a 409 means an earlier try landed.
void CreateOne(client::Client& c, const client::ResourceRef& ref, const Options& o,
               const std::string& body, std::atomic<int>* failures) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::Status s = c.Create(ref, o.ns, body).status();
    if (s.ok() || absl::IsAlreadyExists(s)) return;
    if (attempt == 4) {
      std::fprintf(stderr, "create: %s\n", std::string(MessageOf(s)).c_str());
      ++*failures;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
}

int Main(int argc, char** argv) {
  client::FlagSet flags("peers_bench");
  client::ClientOptions co;
  co.kube_api_qps = 2000;
  co.kube_api_burst = 2000;
  co.AddFlags(flags);
  Options o;
  flags.String("create", &o.create, "none | gangs | pods | jobs");
  flags.String("namespace", &o.ns, "namespace (created if missing)");
  flags.String("queue", &o.queue, "queue of the PodGroups and Jobs");
  flags.String("scheduler-name", &o.scheduler_name, "schedulerName of the pods and Jobs");
  flags.String("pod-cpu", &o.pod_cpu, "CPU request of each pod");
  flags.String("pod-memory", &o.pod_memory, "memory request of each pod");
  flags.Bool("gpu", &o.gpu, "each pod also asks for one nvidia.com/gpu");
  flags.Int("count", &o.count, "gangs, pods or jobs to create");
  flags.Int("size", &o.size, "pods per gang or job");
  flags.Int("expect", &o.expect, "pods to wait for (default: every pod created)");
  flags.Int("create-workers", &o.create_workers, "concurrent creators");
  flags.Int("timeout", &o.timeout_seconds, "seconds to wait for the pods to be bound");
  flags.String("out", &o.out, "CSV file: pod,owner,created_ms,bound_ms");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  if (o.create != "none" && o.create != "gangs" && o.create != "pods" && o.create != "jobs") {
    std::fprintf(stderr, "--create must be none, gangs, pods or jobs, got %s\n", o.create.c_str());
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
  const int per = o.create == "pods" ? 1 : o.size;
  const size_t expect = o.expect >= 0 ? static_cast<size_t>(o.expect)
                                      : static_cast<size_t>(o.create == "none" ? 0 : o.count * per);
  BoundWatcher watcher(&c, o.ns);
  if (absl::Status s = watcher.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(s)).c_str());
    return 1;
  }
  std::fprintf(stderr, "watching namespace %s\n", o.ns.c_str());

  // created_ms per owner (gang, job) or per pod (bare pods).
  std::map<std::string, int64_t> created;
  std::mutex mu;
  std::atomic<int> failures{0};
  const int64_t t0 = NowMs();
  auto note = [&](const std::string& key) {
    int64_t t = NowMs();
    std::lock_guard<std::mutex> l(mu);
    created.emplace(key, t);
  };
  if (o.create == "gangs") {
    Parallel(o.count, o.create_workers, [&](int g) {
      std::string group = fmt::format("g{}", g);
      note(group);
      CreateOne(c, client::PodGroups(), o, PodGroupJson(o, group), &failures);
      for (int i = 0; i < o.size; ++i) {
        CreateOne(c, client::Pods(), o, PodJson(o, fmt::format("{}-{}", group, i), group),
                  &failures);
      }
    });
  } else if (o.create == "pods") {
    Parallel(o.count, o.create_workers, [&](int i) {
      std::string name = fmt::format("p{}", i);
      note(name);
      CreateOne(c, client::Pods(), o, PodJson(o, name, ""), &failures);
    });
  } else if (o.create == "jobs") {
    Parallel(o.count, o.create_workers, [&](int j) {
      std::string name = fmt::format("j{}", j);
      note(name);
      CreateOne(c, client::VolcanoJobs(), o, JobJson(o, name), &failures);
    });
  }
  if (o.create != "none") {
    const int64_t t1 = NowMs();
    std::fprintf(stderr, "created %d %s in %.2f s (%d failed)\n", o.count, o.create.c_str(),
                 (t1 - t0) / 1000.0, failures.load());
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);
  while (watcher.bound() < expect && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  watcher.Stop();
  auto pods = watcher.pods();
  size_t bound = 0;
  std::ofstream out;
  if (!o.out.empty()) {
    out.open(o.out);
    out << "pod,owner,created_ms,bound_ms\n";
  }
  for (auto& [name, p] : pods) {
    if (p.bound_ms != 0) ++bound;
    int64_t c_ms = 0;
    std::string owner = p.owner.empty() ? name : p.owner;
    if (auto it = created.find(o.create == "pods" ? name : owner); it != created.end()) {
      c_ms = it->second;
    }
    if (out.is_open()) out << name << ',' << owner << ',' << c_ms << ',' << p.bound_ms << '\n';
  }
  std::fprintf(stderr, "%zu/%zu pods bound%s\n", bound, expect,
               bound >= expect ? "" : " (TIMED OUT)");
  return bound >= expect && failures.load() == 0 ? 0 : 3;
}

}  // namespace
}  // namespace basalt::bench

int main(int argc, char** argv) { return basalt::bench::Main(argc, argv); }
