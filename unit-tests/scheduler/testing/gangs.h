#pragma once
// The queue tests' common set-up: PodGroups of one-GPU pods in a queue, as a user makes them
// (a Pending PodGroup with minMember and minResources, and pods of 1 cpu and 1 GPU each).
//
//   AddGpuGang(cluster, "team", "job1", 4, 10);      // 4 pods, minMember 4, minResources 4 GPUs
//   AddGpuGang(cluster, "team", "empty", 1, 10, 0);  // a PodGroup whose pods do not exist yet
//   AddGpuPod(cluster, "empty");                     // ... and its pod, later

#include <string>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched::testing {

// A Pending PodGroup ns/<name> in `queue`, created at T(created), minMember and minResources
// `gpus` GPUs, with `pods` pods (-1: `gpus` pods) of 1 cpu and 1 GPU.
inline void AddGpuGang(FakeCluster& cluster, const std::string& queue, const std::string& name,
                       int gpus, int created, int pods = -1) {
  cluster.AddJob(MakeJob("ns", name)
                     .Queue(queue)
                     .MinAvailable(gpus)
                     .MinResources("nvidia.com/gpu", gpus)
                     .Phase(PodGroupPhase::kPending)
                     .Created(created),
                 pods < 0 ? gpus : pods,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
}

// One more pod (<name>-0, uid ns/<name>/0) of 1 cpu and 1 GPU for the PodGroup ns/<name>.
inline void AddGpuPod(FakeCluster& cluster, const std::string& name) {
  cluster.AddPodToJob("ns/" + name, MakeTask(name + "-0")
                                        .Uid("ns/" + name + "/0")
                                        .Request("cpu", "1")
                                        .Request("nvidia.com/gpu", 1));
}

}  // namespace basalt::sched::testing
