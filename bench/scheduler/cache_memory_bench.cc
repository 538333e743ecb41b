// Where the scheduler's memory per pod goes. Feeds synthetic Volcano job pods (labels, owner
// reference, two containers requesting cpu, memory and a GPU, tolerations, node selector) and
// their PodGroups through what vc-scheduler really runs: the informer transforms into informer
// Stores, the ClusterState event handlers, and one snapshot held as a session holds it. It
// measures the heap (glibc mallinfo2) and the RSS after each stage, at two sizes, each in its
// own child process, and reports the per-pod slope of each stage between the sizes: every
// fixed cost (the process, first buckets, nodes and queues) drops out. No API server involved.
//
// Stages (each adds to the one before):
//   pod store    informer Store of CachedPod (CachedPodTransform, no indexer)
//   pg store     informer Store of CachedPodGroup (PodGroupTransform), one PodGroup per job
//   cluster      ClusterState: every node, queue, PodGroup and pod upserted
//   snapshot     one TakeSnapshot() held (a session's copy)
//   2nd snapshot ReturnSnapshot + TakeSnapshot again (the steady state of a running scheduler:
//                the cache plus the one snapshot that is reused)
//
//   sched_cache_memory_bench [--from N] [--pods M] [--pods-per-job K] [--pending-every J]
//   (defaults 3000, 9000, 6 and 4: every 4th job's pods are unbound and Inqueue)
//   sched_cache_memory_bench --one M ...: one size, in this process (for a heap profiler such
//   as heaptrack, which follows no fork), printing the heap and RSS after each stage.

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "bench/common/process_memory.h"
#include "common/informer/store.h"
#include "common/informer/transforms.h"
#include "common/util/json.h"
#include "fmt/format.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/convert.h"

namespace {

using basalt::informer::Object;
using basalt::informer::Store;
using basalt::informer::Transform;
namespace cache = basalt::sched::cache;
namespace json = basalt::json;

constexpr int kNodes = 500;
constexpr int kNamespaces = 20;
constexpr int kQueues = 10;

struct Options {
  int from = 3000;
  int pods = 9000;
  int pods_per_job = 6;
  int pending_every = 4;
};

size_t HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

struct Sample {
  long rss_kib = 0;
  size_t heap = 0;
};
Sample Measure() { return {basalt::bench::CurrentRssKiB(), HeapBytes()}; }

std::string Namespace(int job) { return fmt::format("team-{}", job % kNamespaces); }
std::string JobName(int job) { return fmt::format("train-{}", job); }
bool JobPending(const Options& o, int job) { return job % o.pending_every == 0; }

// A vcjob worker pod as the job controller creates it and the kubelet reports it.
std::string PodJson(const Options& o, int i) {
  const int job = i / o.pods_per_job;
  const int index = i % o.pods_per_job;
  const bool pending = JobPending(o, job);
  const std::string node = pending ? "" : fmt::format(R"("nodeName":"node-{}",)", i % kNodes);
  const std::string status =
      pending ? R"({"phase":"Pending"})"
              : fmt::format(R"({{"phase":"Running","hostIP":"10.0.{}.{}","podIP":"10.244.{}.{}",)"
                            R"("conditions":[{{"type":"Ready","status":"True"}}]}})",
                            (i / 250) % 250, i % 250, (i / 250) % 250, i % 250);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{job}-worker-{idx}",)"
      R"("namespace":"{ns}","uid":"5b0e{i:08x}-7c3d-4e21-a9f0-{i:012x}",)"
      R"("resourceVersion":"{rv}","creationTimestamp":"2026-12-04T08:00:00Z",)"
      R"("labels":{{"volcano.sh/job-name":"{job}","volcano.sh/job-namespace":"{ns}",)"
      R"("volcano.sh/queue-name":"q{q}","volcano.sh/task-spec":"worker",)"
      R"("volcano.sh/task-index":"{idx}","volcano.sh/job-version":"0"}},)"
      R"("annotations":{{"scheduling.k8s.io/group-name":"{job}","volcano.sh/job-name":"{job}",)"
      R"("volcano.sh/task-spec":"worker","volcano.sh/template-uid":"{job}-worker",)"
      R"("volcano.sh/queue-name":"q{q}"}},)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
      R"("name":"{job}","uid":"0d9a7e11-3f2b-4c6d-8e5f-{jobn:012x}","controller":true,)"
      R"("blockOwnerDeletion":true}}]}},)"
      R"("spec":{{"schedulerName":"volcano","priorityClassName":"normal","priority":100,)"
      R"({node}"restartPolicy":"OnFailure","containers":[{{"name":"main",)"
      R"("image":"registry.example.com/ml/trainer:v2","resources":{{"requests":)"
      R"({{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},"limits":{{"nvidia.com/gpu":"1"}}}}}},)"
      R"({{"name":"sidecar","image":"registry.example.com/tools/logger:v1",)"
      R"("resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}}}}}}],)"
      R"("tolerations":[{{"key":"node.kubernetes.io/not-ready","operator":"Exists",)"
      R"("effect":"NoExecute","tolerationSeconds":300}},{{"key":"node.kubernetes.io/unreachable",)"
      R"("operator":"Exists","effect":"NoExecute","tolerationSeconds":300}},)"
      R"({{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}}],)"
      R"("nodeSelector":{{"accelerator":"a100"}}}},"status":{status}}})",
      fmt::arg("job", JobName(job)), fmt::arg("idx", index), fmt::arg("ns", Namespace(job)),
      fmt::arg("i", i), fmt::arg("rv", 10000 + i), fmt::arg("q", job % kQueues),
      fmt::arg("jobn", job), fmt::arg("node", node), fmt::arg("status", status));
}

std::string PodGroupJson(const Options& o, int job) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({{"name":"{job}","namespace":"{ns}","uid":"7e2f{jobn:08x}-1a2b-4c3d-8e4f-{jobn:012x}",)"
      R"("resourceVersion":"{rv}","creationTimestamp":"2026-12-04T07:59:59Z",)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
      R"("name":"{job}","uid":"0d9a7e11-3f2b-4c6d-8e5f-{jobn:012x}","controller":true,)"
      R"("blockOwnerDeletion":true}}]}},"spec":{{"minMember":{min},"queue":"q{q}",)"
      R"("priorityClassName":"normal","minResources":{{"cpu":"{cpu}","memory":"{mem}Gi",)"
      R"("nvidia.com/gpu":"{min}"}}}},"status":{{"phase":"{phase}","running":{running}}}}})",
      fmt::arg("job", JobName(job)), fmt::arg("ns", Namespace(job)), fmt::arg("jobn", job),
      fmt::arg("rv", 5000 + job), fmt::arg("min", o.pods_per_job), fmt::arg("q", job % kQueues),
      fmt::arg("cpu", 4 * o.pods_per_job), fmt::arg("mem", 16 * o.pods_per_job),
      fmt::arg("phase", JobPending(o, job) ? "Inqueue" : "Running"),
      fmt::arg("running", JobPending(o, job) ? 0 : o.pods_per_job));
}

std::string NodeJson(int n) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"node-{n}",)"
      R"("uid":"9c8b{n:08x}-0000-4000-8000-{n:012x}","resourceVersion":"{rv}",)"
      R"("labels":{{"kubernetes.io/hostname":"node-{n}","accelerator":"a100"}}}},)"
      R"("status":{{"allocatable":{{"cpu":"128","memory":"1Ti","nvidia.com/gpu":"8",)"
      R"("pods":"110"}},"capacity":{{"cpu":"128","memory":"1Ti","nvidia.com/gpu":"8",)"
      R"("pods":"110"}},"conditions":[{{"type":"Ready","status":"True"}}]}}}})",
      fmt::arg("n", n), fmt::arg("rv", 100 + n));
}

std::string QueueJson(int q) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":)"
      R"({{"name":"q{q}","resourceVersion":"{rv}"}},"spec":{{"weight":1,"reclaimable":true}},)"
      R"("status":{{"state":"Open"}}}})",
      fmt::arg("q", q), fmt::arg("rv", 50 + q));
}

Object Apply(const Transform& transform, const std::string& text) {
  absl::StatusOr<json::Document> parsed = json::Parse(text);
  if (!parsed.ok()) {
    std::fprintf(stderr, "bad JSON: %s\n%s\n", parsed.status().ToString().c_str(), text.c_str());
    std::exit(1);
  }
  absl::StatusOr<Object> obj = transform.Apply(*std::move(parsed));
  if (!obj.ok()) {
    std::fprintf(stderr, "%s\n", obj.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(obj);
}

// The heap and RSS after each stage, at one size.
struct Stages {
  Sample base, pod_store, pg_store, cluster, snapshot, second_snapshot;
  size_t tasks = 0;
};

Stages Run(const Options& o, int pods) {
  const int jobs = (pods + o.pods_per_job - 1) / o.pods_per_job;
  // The texts and the transforms are made first so their memory is in the baseline.
  std::vector<std::string> pod_texts;
  pod_texts.reserve(pods);
  for (int i = 0; i < pods; ++i) pod_texts.push_back(PodJson(o, i));
  std::vector<std::string> pg_texts;
  for (int j = 0; j < jobs; ++j) pg_texts.push_back(PodGroupJson(o, j));
  const Transform pod_transform = cache::CachedPodTransform();
  const Transform pg_transform = cache::PodGroupTransform();
  const Transform node_transform = basalt::informer::CompactNodeTransform();
  const Transform queue_transform = cache::QueueTransform();
  Store node_store;
  Store queue_store;
  for (int n = 0; n < kNodes; ++n) node_store.Upsert(Apply(node_transform, NodeJson(n)));
  for (int q = 0; q < kQueues; ++q) queue_store.Upsert(Apply(queue_transform, QueueJson(q)));
  cache::ClusterStateOptions state_options;
  state_options.verify_snapshots = false;  // a release build's setting
  cache::ClusterState state(state_options);
  for (const Object& n : node_store.List()) state.UpsertNode(n.Share<basalt::api::CompactNode>());
  for (const Object& q : queue_store.List()) state.UpsertQueue(q.As<basalt::api::Queue>());
  state.UpsertPriorityClass("normal", 100, false);
  malloc_trim(0);

  Stages s;
  s.base = Measure();
  Store pod_store;
  for (const std::string& text : pod_texts) pod_store.Upsert(Apply(pod_transform, text));
  s.pod_store = Measure();
  Store pg_store;
  for (const std::string& text : pg_texts) pg_store.Upsert(Apply(pg_transform, text));
  s.pg_store = Measure();
  for (const Object& pg : pg_store.List()) state.UpsertPodGroup(pg.Share<cache::CachedPodGroup>());
  for (const Object& pod : pod_store.List()) state.UpsertPod(pod.Share<cache::CachedPod>());
  s.cluster = Measure();
  cache::ClusterState::Snapshot snap = state.TakeSnapshot();
  s.snapshot = Measure();
  s.tasks = snap.cluster.foreign_tasks().size();
  for (const auto& [id, job] : snap.cluster.jobs()) s.tasks += job.tasks().size();
  state.ReturnSnapshot(std::move(snap.cluster), snap.handout);
  cache::ClusterState::Snapshot again = state.TakeSnapshot();
  s.second_snapshot = Measure();
  return s;
}

// Runs `pods` in a child process and reads its Stages back through a pipe.
Stages RunChild(const Options& o, int pods) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Stages s = Run(o, pods);
    if (write(fds[1], &s, sizeof s) != sizeof s) std::_Exit(1);
    std::_Exit(0);
  }
  close(fds[1]);
  Stages s;
  if (read(fds[0], &s, sizeof s) != sizeof s) {
    std::fprintf(stderr, "child for %d pods failed\n", pods);
    std::exit(1);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int one = 0;
  basalt::FlagSet flags("sched_cache_memory_bench");
  flags.Int("one", &one, "measure one cache of this many pods only (0: the slope)");
  flags.Int("from", &o.from, "pods at the first point of the slope");
  flags.Int("pods", &o.pods, "pods at the last point of the slope");
  flags.Int("pods-per-job", &o.pods_per_job, "pods per job");
  flags.Int("pending-every", &o.pending_every, "every Nth pod is pending");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  if (o.from <= 0 || o.pods <= o.from || o.pods_per_job <= 0 || o.pending_every <= 0) {
    std::fprintf(stderr, "need 0 < --from < --pods, --pods-per-job > 0, --pending-every > 0\n");
    return 2;
  }
  if (one > 0) {
    const Stages s = Run(o, one);
    std::printf("%d pods, heap / RSS KiB after each stage:\n", one);
    const Sample Stages::*stages[] = {&Stages::base,     &Stages::pod_store,
                                      &Stages::pg_store, &Stages::cluster,
                                      &Stages::snapshot, &Stages::second_snapshot};
    for (const Sample Stages::*st : stages) {
      std::printf("  heap %9zu  rss %8ld\n", (s.*st).heap / 1024, (s.*st).rss_kib);
    }
    return 0;
  }
  std::printf("sizeof: CompactPod %zu, CachedPod %zu, TaskInfo %zu, Resource %zu, JobInfo %zu\n",
              sizeof(basalt::api::CompactPod), sizeof(cache::CachedPod),
              sizeof(basalt::sched::TaskInfo), sizeof(basalt::sched::Resource),
              sizeof(basalt::sched::JobInfo));
  const Stages a = RunChild(o, o.from);
  const Stages b = RunChild(o, o.pods);
  if (a.tasks != size_t(o.from) || b.tasks != size_t(o.pods)) {
    std::fprintf(stderr, "snapshot holds %zu and %zu tasks, expected %d and %d\n", a.tasks, b.tasks,
                 o.from, o.pods);
    return 1;
  }
  const double added = o.pods - o.from;
  struct Row {
    const char* name;
    Sample Stages::*stage;
    Sample Stages::*prev;
  };
  const Row rows[] = {
      {"pod store", &Stages::pod_store, &Stages::base},
      {"pg store", &Stages::pg_store, &Stages::pod_store},
      {"cluster state", &Stages::cluster, &Stages::pg_store},
      {"snapshot", &Stages::snapshot, &Stages::cluster},
      {"2nd snapshot", &Stages::second_snapshot, &Stages::snapshot},
  };
  std::printf("slope %d->%d pods (%d pods/job, every %d-th job pending), B/pod:\n", o.from, o.pods,
              o.pods_per_job, o.pending_every);
  double total_heap = 0;
  double total_rss = 0;
  for (const Row& r : rows) {
    const double h = ((double((b.*r.stage).heap) - double((b.*r.prev).heap)) -
                      (double((a.*r.stage).heap) - double((a.*r.prev).heap))) /
                     added;
    const double rss = ((double((b.*r.stage).rss_kib) - double((b.*r.prev).rss_kib)) -
                        (double((a.*r.stage).rss_kib) - double((a.*r.prev).rss_kib))) *
                       1024.0 / added;
    total_heap += h;
    total_rss += rss;
    std::printf("  %-14s heap %7.0f  rss %7.0f\n", r.name, h, rss);
  }
  std::printf("  %-14s heap %7.0f  rss %7.0f\n", "total", total_heap, total_rss);
  return 0;
}
