// coldstart_load: fills the API server with the state a restarted Basalt finds at scale
// (bench/coldstart/run.sh drives it). With no Basalt process running it creates --queues
// Queues (status Open), --podgroups PodGroups of --pods / --podgroups pods each, spread over
// the queues, with status.phase Running, and --pods pods already bound (spec.nodeName set
// round-robin over the fake nodes, so no scheduler is needed to place them), from
// --create-workers concurrent clients. Figures only; never pass/fail on speed.

#include <atomic>
#include <chrono>
#include <cstdio>
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

struct Options {
  std::string ns = "cold";
  int queues = 4;
  int podgroups = 2000;
  int pods = 14000;
  int create_workers = 32;
  std::string scheduler_name = "volcano";
};

// Retries 429/5xx/timeouts; a 409 means an earlier try landed.
template <typename Fn>
void WithRetries(std::string_view what, Fn fn, std::atomic<int>* failures) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    absl::Status s = fn();
    if (s.ok() || absl::IsAlreadyExists(s)) return;
    if (attempt == 5) {
      std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(what.size()), what.data(),
                   std::string(MessageOf(s)).c_str());
      ++*failures;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
}

int Main(int argc, char** argv) {
  client::FlagSet flags("coldstart_load");
  client::ClientOptions co;
  co.kube_api_qps = 2000;
  co.kube_api_burst = 2000;
  co.AddFlags(flags);
  Options o;
  flags.String("namespace", &o.ns, "namespace of the PodGroups and pods (created if missing)");
  flags.Int("queues", &o.queues, "queues q0..q<N-1>, the PodGroups spread over them");
  flags.Int("podgroups", &o.podgroups, "PodGroups (status Running)");
  flags.Int("pods", &o.pods, "bound pods, spread evenly over the PodGroups");
  flags.Int("create-workers", &o.create_workers, "concurrent creators");
  flags.String("scheduler-name", &o.scheduler_name, "schedulerName of the pods");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  if (o.queues < 1 || o.podgroups < 1 || o.pods < o.podgroups) {
    std::fprintf(stderr, "need --queues >= 1, --podgroups >= 1 and --pods >= --podgroups\n");
    return 2;
  }
  auto made = client::Client::FromOptions(co);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", std::string(MessageOf(made.status())).c_str());
    return 1;
  }
  client::Client& c = **made;
  auto nodes = c.ListAll(client::Nodes(), "");
  if (!nodes.ok() || nodes->items.empty()) {
    std::fprintf(stderr, "no nodes to bind the pods to\n");
    return 1;
  }
  std::vector<std::string> node_names;
  for (const auto& n : nodes->items) {
    if (const json::Value* v = json::FindPath(n, {"metadata", "labels", "type"});
        v != nullptr && json::AsView(*v) == "kwok") {
      node_names.emplace_back(json::AsView(*json::FindPath(n, {"metadata", "name"})));
    }
  }
  if (node_names.empty()) {
    std::fprintf(stderr, "no KWOK nodes (label type=kwok)\n");
    return 1;
  }
  (void)c.Create(
      client::Namespaces(), "",
      fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})", o.ns));
  std::atomic<int> failures{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int q = 0; q < o.queues; ++q) {
    std::string name = fmt::format("q{}", q);
    WithRetries(
        "queue",
        [&] {
          return c
              .Create(client::Queues(), "",
                      fmt::format(R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":)"
                                  R"("Queue","metadata":{{"name":"{}"}},"spec":{{"weight":1,)"
                                  R"("reclaimable":true}}}})",
                                  name))
              .status();
        },
        &failures);
    WithRetries(
        "queue status",
        [&] {
          return c
              .Patch(client::Queues(), "", name, client::PatchType::kMerge,
                     R"({"status":{"state":"Open"}})", "status")
              .status();
        },
        &failures);
  }
  const int per_group = o.pods / o.podgroups;
  Parallel(o.podgroups, o.create_workers, [&](int g) {
    std::string group = fmt::format("g{}", g);
    std::string queue = fmt::format("q{}", g % o.queues);
    // The last group takes the remainder, so exactly --pods pods exist.
    const int members = g == o.podgroups - 1 ? o.pods - per_group * (o.podgroups - 1) : per_group;
    WithRetries(
        "podgroup",
        [&] {
          return c
              .Create(client::PodGroups(), o.ns,
                      fmt::format(R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":)"
                                  R"("PodGroup","metadata":{{"name":"{}","namespace":"{}"}},)"
                                  R"("spec":{{"minMember":{},"queue":"{}"}}}})",
                                  group, o.ns, members, queue))
              .status();
        },
        &failures);
    WithRetries(
        "podgroup status",
        [&] {
          return c
              .Patch(client::PodGroups(), o.ns, group, client::PatchType::kMerge,
                     fmt::format(R"({{"status":{{"phase":"Running","running":{}}}}})", members),
                     "status")
              .status();
        },
        &failures);
    for (int i = 0; i < members; ++i) {
      const std::string& node = node_names[(g * per_group + i) % node_names.size()];
      std::string body = fmt::format(
          R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}-{}","namespace":"{}",)"
          R"("labels":{{"app":"coldstart"}},"annotations":{{"scheduling.k8s.io/group-name":)"
          R"("{}"}}}},"spec":{{"schedulerName":"{}","nodeName":"{}","containers":[{{"name":)"
          R"("main","image":"busybox","resources":{{"requests":{{"cpu":"100m",)"
          R"("memory":"256Mi"}}}}}}]}}}})",
          group, i, o.ns, group, o.scheduler_name, node);
      WithRetries(
          "pod", [&] { return c.Create(client::Pods(), o.ns, body).status(); }, &failures);
    }
    if (g % 1000 == 999) std::fprintf(stderr, "%d podgroups made, %.1f s\n", g + 1, seconds());
  });
  std::fprintf(stderr,
               "created %d queues, %d podgroups, %d bound pods on %zu nodes in %.1f s (%d "
               "failed)\n",
               o.queues, o.podgroups, o.pods, node_names.size(), seconds(), failures.load());
  return failures.load() == 0 ? 0 : 3;
}

}  // namespace
}  // namespace basalt::bench

int main(int argc, char** argv) { return basalt::bench::Main(argc, argv); }
