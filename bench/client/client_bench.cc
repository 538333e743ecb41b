// client_bench: figures for the Kubernetes client library (issue: common/).
//
//   client_bench decode                    decode a 10k-pod LIST (FakeTransport, no network)
//   client_bench watch-decode              decode 100k watch events through the line framing
//   client_bench get --kubeconfig F --threads N --requests M
//                                          single-object GETs against a real API server
//   client_bench watch --kubeconfig F --objects N
//                                          watch events/s while N configmaps are created
//
// Prints one "name value unit" line per figure. Figures only; nothing here passes or fails.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/flags.h"
#include "bench/common/process_memory.h"
#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "fmt/format.h"

namespace client = basalt::client;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A pod as the API server returns it, ~2.5 KB of JSON: metadata with managedFields-like
// bulk, a spec with requests, a status with conditions.
std::string PodJson(int i) {
  return fmt::format(
      R"({{"metadata":{{"name":"job-{0}-worker-{1}","namespace":"team-{2}","uid":"6f1c2b3a-0000-4000-8000-{0:012}","resourceVersion":"{3}","creationTimestamp":"2026-11-29T10:00:00Z","labels":{{"volcano.sh/job-name":"job-{0}","volcano.sh/task-spec":"worker","volcano.sh/queue-name":"ai-training"}},"annotations":{{"scheduling.k8s.io/group-name":"job-{0}","volcano.sh/job-version":"0","volcano.sh/task-index":"{1}"}},"ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"job-{0}","uid":"aa000000-0000-4000-8000-{0:012}","controller":true,"blockOwnerDeletion":true}}]}},"spec":{{"schedulerName":"volcano","priorityClassName":"offline-batch","nodeName":"gpu-node-{4}","restartPolicy":"OnFailure","terminationGracePeriodSeconds":30,"containers":[{{"name":"trainer","image":"registry.example.com/ml/bert:2026.11","command":["python","-m","train","--epochs","10"],"env":[{{"name":"VC_TASK_INDEX","value":"{1}"}},{{"name":"MASTER_ADDR","value":"job-{0}-master-0.job-{0}"}}],"resources":{{"requests":{{"cpu":"8","memory":"64Gi","nvidia.com/gpu":"1"}},"limits":{{"nvidia.com/gpu":"1"}}}},"volumeMounts":[{{"name":"data","mountPath":"/data"}}]}}],"tolerations":[{{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}}],"volumes":[{{"name":"data","emptyDir":{{}}}}]}},"status":{{"phase":"Running","podIP":"10.128.{5}.{6}","startTime":"2026-11-29T10:00:05Z","conditions":[{{"type":"Initialized","status":"True","lastTransitionTime":"2026-11-29T10:00:05Z"}},{{"type":"Ready","status":"True","lastTransitionTime":"2026-11-29T10:00:06Z"}},{{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-29T10:00:06Z"}},{{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-29T10:00:04Z"}}],"containerStatuses":[{{"name":"trainer","image":"registry.example.com/ml/bert:2026.11","ready":true,"restartCount":0,"started":true,"state":{{"running":{{"startedAt":"2026-11-29T10:00:06Z"}}}}}}]}}}})", i / 8,
      i % 8, i % 16, 1000 + i, i % 1000, (i / 250) % 250, i % 250);
}

int Decode() {
  constexpr int kPods = 10000;
  std::string body =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"99"},"items":[)";
  for (int i = 0; i < kPods; ++i) {
    if (i) body += ',';
    body += PodJson(i);
  }
  body += "]}";
  constexpr int kRounds = 5;
  double best = 1e9;
  for (int r = 0; r < kRounds; ++r) {
    auto fake = std::make_unique<client::FakeTransport>();
    fake->AddJson("GET", "/api/v1/pods*", 200, body);
    client::Client c(std::move(fake));
    auto t0 = Clock::now();
    auto list = c.List(client::Pods(), "");
    double s = Seconds(Clock::now() - t0);
    if (!list.ok() || list->items.size() != kPods) {
      std::fprintf(stderr, "decode failed: %s\n", std::string(list.status().message()).c_str());
      return 1;
    }
    best = std::min(best, s);
  }
  // Reference in the same run: parsing the same body into one document and nothing else (the
  // floor for any JSON client); Client::List also splits items into their own documents.
  double parse_best = 1e9;
  for (int r = 0; r < kRounds; ++r) {
    auto t0 = Clock::now();
    absl::StatusOr<basalt::json::Document> doc = basalt::json::Parse(body);
    double s = Seconds(Clock::now() - t0);
    if (!doc.ok()) return 1;
    parse_best = std::min(parse_best, s);
  }
  std::printf("list_decode_pods_per_second %.0f objects/s\n", kPods / best);
  std::printf("list_bare_parse_pods_per_second %.0f objects/s\n", kPods / parse_best);
  std::printf("list_decode_vs_bare_parse %.2f ratio\n", parse_best / best);
  std::printf("list_decode_mb_per_second %.1f MB/s\n", body.size() / best / 1e6);
  std::printf("list_body_bytes %zu bytes\n", body.size());
  return 0;
}

int WatchDecode() {
  constexpr int kEvents = 100000;
  std::vector<std::string> chunks;
  std::string cur;
  for (int i = 0; i < kEvents; ++i) {
    cur += R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1",)" +
           PodJson(i % 10000).substr(1) + "}\n";
    if (cur.size() > 64 * 1024) {  // roughly what the server flushes per chunk
      chunks.push_back(std::move(cur));
      cur.clear();
    }
  }
  chunks.push_back(std::move(cur));
  auto fake = std::make_unique<client::FakeTransport>();
  client::FakeTransport::StreamScript script;
  script.chunks = std::move(chunks);
  fake->AddStream("/api/v1/pods*", std::move(script));
  client::Client c(std::move(fake));
  int seen = 0;
  auto t0 = Clock::now();
  absl::Status st = c.Watch(client::Pods(), "", {}, [&](client::WatchEvent&&) {
    ++seen;
    return absl::OkStatus();
  });
  double s = Seconds(Clock::now() - t0);
  if (seen != kEvents) {
    std::fprintf(stderr, "watch decode saw %d of %d events: %s\n", seen, kEvents,
                 std::string(st.message()).c_str());
    return 1;
  }
  std::printf("watch_decode_events_per_second %.0f events/s\n", kEvents / s);
  return 0;
}

std::unique_ptr<client::Client> Connect(const std::string& kubeconfig, double qps, int burst) {
  client::ClientOptions o;
  o.kubeconfig = kubeconfig;
  o.kube_api_qps = qps;
  o.kube_api_burst = burst;
  auto c = client::Client::FromOptions(o);
  if (!c.ok()) {
    std::fprintf(stderr, "client: %s\n", std::string(c.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(c);
}

int Get(const std::string& kubeconfig, int threads, int requests) {
  // Unthrottled client-side: we measure the library, not the limiter.
  auto c = Connect(kubeconfig, 1e6, 1000000);
  std::string cm =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"client-bench","namespace":"default"},"data":{"k":"v"}})";
  (void)c->Create(client::ConfigMaps(), "default", cm);  // AlreadyExists is fine
  std::atomic<int> next{0}, errors{0};
  std::vector<double> lat(requests);
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i = next++; i < requests; i = next++) {
        auto s = Clock::now();
        if (!c->Get(client::ConfigMaps(), "default", "client-bench").ok()) ++errors;
        lat[i] = Seconds(Clock::now() - s);
      }
    });
  }
  for (auto& t : ts) t.join();
  double total = Seconds(Clock::now() - t0);
  std::sort(lat.begin(), lat.end());
  std::printf("get_threads_%d_requests_per_second %.0f req/s\n", threads, requests / total);
  std::printf("get_threads_%d_p50_ms %.2f ms\n", threads, lat[lat.size() / 2] * 1e3);
  std::printf("get_threads_%d_p99_ms %.2f ms\n", threads, lat[lat.size() * 99 / 100] * 1e3);
  std::printf("get_threads_%d_errors %d count\n", threads, errors.load());
  return errors ? 1 : 0;
}

int Watch(const std::string& kubeconfig, int objects) {
  auto c = Connect(kubeconfig, 1e6, 1000000);
  std::string ns = fmt::format("client-bench-{}", ::getpid());
  (void)c->Create(
      client::Namespaces(), "",
      fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})", ns));
  client::CancelToken cancel;
  std::atomic<int> seen{0};
  Clock::time_point first{}, last{};
  absl::Status watch_status;
  std::thread watcher([&] {
    watch_status = c->Watch(
        client::ConfigMaps(), ns, {},
        [&](client::WatchEvent&& e) {
          if (e.type == client::WatchEventType::kAdded) {
            if (seen++ == 0) first = Clock::now();
            last = Clock::now();
            if (seen == objects) cancel.Cancel();
          }
          return absl::OkStatus();
        },
        &cancel);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::atomic<int> next{0};
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < 32; ++t) {
    ts.emplace_back([&] {
      for (int i = next++; i < objects; i = next++) {
        (void)c->Create(
            client::ConfigMaps(), ns,
            fmt::format(
                R"({{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{}"}},"data":{{"i":"{}"}}}})",
                i, i));
      }
    });
  }
  for (auto& t : ts) t.join();
  double create_s = Seconds(Clock::now() - t0);
  watcher.join();
  double watch_s = Seconds(last - first);
  if (seen != objects) {
    std::fprintf(stderr, "watch ended after %d of %d events: %s\n", seen.load(), objects,
                 std::string(watch_status.message()).c_str());
  }
  std::printf("watch_create_rate %.0f objects/s\n", objects / create_s);
  std::printf("watch_events_per_second %.0f events/s (%d events)\n", seen / std::max(watch_s, 1e-9),
              seen.load());
  (void)c->Delete(client::Namespaces(), "", ns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  int threads = 1, requests = 2000, objects = 5000;
  basalt::FlagSet flags("client_bench decode|watch-decode|get|watch");
  flags.String("kubeconfig", &kubeconfig, "kubeconfig (get, watch)");
  flags.Int("threads", &threads, "concurrent callers (get)");
  flags.Int("requests", &requests, "requests in all (get)");
  flags.Int("objects", &objects, "configmaps the writers create (watch)");
  std::vector<std::string> positional;
  basalt::bench::ParseFlagsOrExit(flags, argc, argv, &positional);
  const std::string mode = positional.size() == 1 ? positional[0] : "";
  int rc;
  if (mode == "decode")
    rc = Decode();
  else if (mode == "watch-decode")
    rc = WatchDecode();
  else if (mode == "get")
    rc = Get(kubeconfig, threads, requests);
  else if (mode == "watch")
    rc = Watch(kubeconfig, objects);
  else {
    std::fprintf(stderr, "usage: client_bench decode|watch-decode|get|watch [flags]\n");
    return 2;
  }
  std::printf("peak_rss %ld KiB\n", basalt::bench::PeakRssKiB());
  return rc;
}
