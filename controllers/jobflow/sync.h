#pragma once
// The JobFlow controller's decisions, free of I/O (unit-tested in
// unit-tests/controllers/jobflow/sync_test.cc): which flows get their Job now, the status a
// flow shows for the Jobs it made, and the next status.state.phase (Volcano v1.15's state
// machine: Pending/"" -> Running once a Job runs or completed and none failed, -> Failed once
// one failed; Running -> Succeed once every flow's Job is Completed; Succeed, Failed and
// Terminating keep their phase).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/api/flow.h"
#include "common/api/time.h"
#include "common/util/json.h"

namespace basalt::controllers {

// What the flow controller reads of a Job it made.
struct FlowJob {
  std::string name;
  std::string uid;
  std::string phase;  // status.state.phase ("" before the job controller saw it)
  std::optional<api::Time> creation_timestamp;
  std::optional<std::string> running_duration;
  int32_t retry_count = 0;
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;
};

FlowJob FlowJobOf(const json::Value& job);

// The templates (flows[].name) whose Job does not exist yet and whose dependsOn.targets'
// Jobs are all Completed, in spec order. `jobs` is keyed by Job name.
std::vector<std::string> FlowsReadyToCreate(const api::JobFlow& flow,
                                            const std::map<std::string, FlowJob>& jobs);

// The status for `jobs` (the flow's Jobs, in spec order); keeps status.jobStatusList entries
// and their runningHistories, opening a history entry at `now` when a Job's phase changed.
// The phase is the next one (NextJobFlowPhase).
api::JobFlowStatus ComputeJobFlowStatus(const api::JobFlow& flow, const std::vector<FlowJob>& jobs,
                                        api::Time now);

std::string NextJobFlowPhase(std::string_view current, const api::JobFlowStatus& status,
                             size_t flows);

}  // namespace basalt::controllers
