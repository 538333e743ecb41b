#pragma once
// gang: all-or-nothing placement of a PodGroup. JobValid (enough valid tasks for minMember and
// each role's minTaskMember), JobReady, JobPipelined, JobStarving, JobOrder (not-ready gangs
// first), Preemptable/Reclaimable (never take a victim that would break its gang), and at
// session close the PodGroup conditions Unschedulable / Scheduled.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/job_info.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kGangPluginName = "gang";

absl::StatusOr<std::unique_ptr<Plugin>> NewGangPlugin(const Arguments& args);

// Gang readiness rules, exposed for tests.
bool GangJobReady(const JobInfo& job);
bool GangJobPipelined(const JobInfo& job);
bool GangJobStarving(const JobInfo& job);

}  // namespace basalt::sched
