// Measures the resident memory of an informer Store holding synthetic pods, kept five ways:
// whole documents as the client hands them over (one default RapidJSON pool each), whole
// documents through the informer's default Transform (right-sized pools), api::CompactPod
// structs (CompactPodTransform), and what the two Basalt processes really keep: the scheduler's
// CachedPod (CachedPodTransform, no indexer) and the controllers' trimmed documents
// (ControllerPodTransform with the by-job index). Each mode runs in its own child process. It
// fills one store to --from pods, then on to --pods, and reports the growth between the two
// sizes divided by the pods added: the per-pod slope, with every fixed baseline (the process,
// the store's first buckets, allocator arenas) dropped out. No API server involved.
//
//   informer_store_memory_bench [--from N] [--pods M]     (defaults 5000 and 20000)

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bench/common/flags.h"
#include "bench/common/process_memory.h"
#include "common/informer/store.h"
#include "common/informer/transforms.h"
#include "common/util/json.h"
#include "controllers/app/controller.h"
#include "controllers/job/controller/job_index.h"
#include "fmt/format.h"
#include "scheduler/cache/convert.h"

namespace {

using basalt::informer::Object;
using basalt::informer::Store;
using basalt::informer::Transform;
namespace json = basalt::json;

// Heap bytes allocated (glibc), which counts untouched parts of allocations too.
size_t HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// A pod as a Job's worker looks in a real cluster: labels, annotations, owner reference,
// managedFields, two containers with env and volume mounts, status with conditions.
std::string PodJson(int i) {
  const std::string ns = fmt::format("team-{}", i % 50);
  const std::string name = fmt::format("job-{}-worker-{}", i / 8, i % 8);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{ns}",)"
      R"("uid":"6c1f{i:08x}-1d2e-4f5a-9b8c-{i:012x}","resourceVersion":"{rv}",)"
      R"("creationTimestamp":"2026-11-29T10:00:00Z","labels":{{"volcano.sh/job-name":"job-{job}",)"
      R"("volcano.sh/job-namespace":"{ns}","volcano.sh/queue-name":"default",)"
      R"("volcano.sh/task-spec":"worker","volcano.sh/job-version":"0"}},)"
      R"("annotations":{{"scheduling.k8s.io/group-name":"job-{job}","volcano.sh/job-name":"job-{job}",)"
      R"("volcano.sh/task-spec":"worker","volcano.sh/template-uid":"job-{job}-worker"}},)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
      R"("name":"job-{job}","uid":"a1b2c3d4-0000-4000-8000-{job:012x}","controller":true,)"
      R"("blockOwnerDeletion":true}}],"managedFields":[{{"manager":"vc-controller-manager",)"
      R"("operation":"Update","apiVersion":"v1","time":"2026-11-29T10:00:00Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:annotations":{{".":{{}},)"
      R"("f:scheduling.k8s.io/group-name":{{}}}},"f:labels":{{".":{{}},"f:volcano.sh/job-name":{{}}}}}},)"
      R"("f:spec":{{"f:containers":{{"k:{{\"name\":\"main\"}}":{{".":{{}},"f:image":{{}},)"
      R"("f:resources":{{".":{{}},"f:requests":{{}}}}}}}}}}}}}}]}},)"
      R"("spec":{{"schedulerName":"volcano","priorityClassName":"normal","priority":100,)"
      R"("restartPolicy":"OnFailure","nodeName":"node-{node}","serviceAccountName":"default",)"
      R"("containers":[{{"name":"main","image":"registry.example.com/ml/trainer:v1.2.3",)"
      R"("command":["python","-m","trainer"],"args":["--epochs=10","--batch=256"],)"
      R"("env":[{{"name":"VC_TASK_INDEX","value":"{idx}"}},{{"name":"VK_TASK_INDEX","value":"{idx}"}}],)"
      R"("resources":{{"requests":{{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},)"
      R"("limits":{{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}}}},)"
      R"("volumeMounts":[{{"name":"data","mountPath":"/data"}},)"
      R"({{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","readOnly":true}}]}},)"
      R"({{"name":"sidecar","image":"registry.example.com/tools/logger:v0.9",)"
      R"("resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}}}}}}],)"
      R"("tolerations":[{{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
      R"("tolerationSeconds":300}},{{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}}],)"
      R"("nodeSelector":{{"accelerator":"a100"}},"volumes":[{{"name":"data","emptyDir":{{}}}}]}},)"
      R"("status":{{"phase":"Running","hostIP":"10.0.{hi}.{lo}","podIP":"10.244.{hi}.{lo}",)"
      R"("startTime":"2026-11-29T10:00:05Z","conditions":[{{"type":"PodScheduled","status":"True",)"
      R"("lastTransitionTime":"2026-11-29T10:00:01Z"}},{{"type":"Initialized","status":"True",)"
      R"("lastTransitionTime":"2026-11-29T10:00:03Z"}},{{"type":"ContainersReady","status":"True",)"
      R"("lastTransitionTime":"2026-11-29T10:00:09Z"}},{{"type":"Ready","status":"True",)"
      R"("lastTransitionTime":"2026-11-29T10:00:09Z"}}],"containerStatuses":[{{"name":"main",)"
      R"("ready":true,"restartCount":0,"image":"registry.example.com/ml/trainer:v1.2.3",)"
      R"("state":{{"running":{{"startedAt":"2026-11-29T10:00:08Z"}}}}}},{{"name":"sidecar","ready":true,)"
      R"("restartCount":0,"image":"registry.example.com/tools/logger:v0.9",)"
      R"("state":{{"running":{{"startedAt":"2026-11-29T10:00:08Z"}}}}}}]}}}})",
      fmt::arg("name", name), fmt::arg("ns", ns), fmt::arg("i", i), fmt::arg("rv", 1000 + i),
      fmt::arg("job", i / 8), fmt::arg("node", i % 500), fmt::arg("idx", i % 8),
      fmt::arg("hi", (i / 250) % 250), fmt::arg("lo", i % 250));
}

// What Client::List/Watch hand over: each object deep-copied into its own fresh Document.
json::Document ClientDocument(const std::string& text) {
  json::Document parsed = *json::Parse(text);
  json::Document d;
  d.CopyFrom(parsed, d.GetAllocator());
  return d;
}

Transform NaiveDocumentTransform() {
  return Transform::To<json::Document>(
      "naive-document",
      [](json::Document&& d) -> absl::StatusOr<std::shared_ptr<const json::Document>> {
        return std::make_shared<const json::Document>(std::move(d));
      });
}

struct Sample {
  long rss_kib = 0;
  size_t heap = 0;
};

Sample Measure() { return {basalt::bench::CurrentRssKiB(), HeapBytes()}; }

void RunMode(const char* mode, int from, int pods) {
  Transform transform;
  basalt::informer::Indexers indexers = {
      {basalt::informer::kLabelIndex, basalt::informer::LabelIndexFunc()}};
  if (std::strcmp(mode, "naive-document") == 0) transform = NaiveDocumentTransform();
  if (std::strcmp(mode, "compact-pod") == 0) transform = basalt::informer::CompactPodTransform();
  if (std::strcmp(mode, "scheduler-pod") == 0) {
    transform = basalt::sched::cache::CachedPodTransform();
    indexers.clear();
  }
  if (std::strcmp(mode, "controller-pod") == 0) {
    transform = basalt::controllers::ControllerPodTransform();
    indexers = {{basalt::controllers::kPodsByJobIndex, basalt::controllers::PodsByJobIndexFunc()}};
  }
  // Generate the texts first so their memory is in the baseline.
  std::vector<std::string> texts;
  texts.reserve(pods);
  size_t bytes = 0;
  for (int i = 0; i < pods; ++i) {
    texts.push_back(PodJson(i));
    bytes += texts.back().size();
  }
  Store store(std::move(indexers));
  auto fill = [&](int begin, int end) {
    for (int i = begin; i < end; ++i) {
      absl::StatusOr<Object> obj = transform.Apply(ClientDocument(texts[i]));
      if (!obj.ok()) {
        std::fprintf(stderr, "%s\n", obj.status().ToString().c_str());
        std::exit(1);
      }
      store.Upsert(*std::move(obj));
    }
  };
  const Sample s0 = Measure();
  const auto t0 = std::chrono::steady_clock::now();
  fill(0, from);
  const Sample s1 = Measure();
  fill(from, pods);
  const auto t1 = std::chrono::steady_clock::now();
  const Sample s2 = Measure();
  const double secs = std::chrono::duration<double>(t1 - t0).count();
  const double added = pods - from;
  std::printf(
      "%-15s json=%zuB/pod  at %d pods: rss=+%.1f MiB (%.0f B/pod)  slope %d->%d: "
      "rss %.0f B/pod, heap %.0f B/pod  ingest=%.0f pods/s\n",
      mode, bytes / pods, pods, (s2.rss_kib - s0.rss_kib) / 1024.0,
      (s2.rss_kib - s0.rss_kib) * 1024.0 / pods, from, pods,
      (s2.rss_kib - s1.rss_kib) * 1024.0 / added, double(s2.heap - s1.heap) / added, pods / secs);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int from = 5000;
  int pods = 20000;
  basalt::FlagSet flags("informer_store_memory_bench");
  flags.Int("from", &from, "pods at the first point of the slope");
  flags.Int("pods", &pods, "pods at the last point of the slope");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  if (from <= 0 || pods <= from) {
    std::fprintf(stderr, "--from must be > 0 and --pods > --from (got %d and %d)\n", from, pods);
    return 2;
  }
  for (const char* mode :
       {"naive-document", "document", "compact-pod", "scheduler-pod", "controller-pod"}) {
    pid_t pid = fork();
    if (pid == 0) {
      RunMode(mode, from, pods);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
