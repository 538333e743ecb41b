#pragma once
// The index of the shared pod informer by which the job and podgroup controllers find a job's
// pods, kept apart from the reconciler so controllers that only read pods by job do not depend
// on it.
//
// Thread-safety: the index function is pure and may be called from any thread.

#include <string>
#include <string_view>

#include "common/informer/store.h"

namespace basalt::controllers {

// Index of the pods store: "namespace/<volcano.sh/job-name annotation>".
inline constexpr char kPodsByJobIndex[] = "job";
informer::IndexFunc PodsByJobIndexFunc();

// The key of job `name` in `ns` in the job and pod-by-job stores: "namespace/name".
std::string JobKey(std::string_view ns, std::string_view name);

}  // namespace basalt::controllers
