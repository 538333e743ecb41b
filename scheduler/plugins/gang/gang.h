#pragma once
// gang: all-or-nothing placement of a PodGroup. JobValid (enough valid tasks for minMember and
// each role's minTaskMember), JobReady, JobPipelined, JobStarving, JobOrder (not-ready gangs
// first), Preemptable/Reclaimable (never take a victim that would break its gang), and at
// session close the PodGroup conditions Unschedulable / Scheduled.

#include <memory>
#include <string>
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

// The Unschedulable condition's message of a gang that is not ready: "<missing>/<tasks> tasks in
// gang unschedulable: <fit error>", Volcano's wording. <missing> is minAvailable less the tasks
// that are ready or allocated this session, and at least 1: a gang held back only by a role's
// minTaskMember or a sub-group's minimum still lacks a task, never a negative number of them.
std::string GangUnschedulableMessage(const JobInfo& job);

}  // namespace basalt::sched
