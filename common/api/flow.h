#pragma once
// Typed views of Volcano's flow.volcano.sh/v1alpha1 JobFlow and JobTemplate (Volcano v1.15).
// A JobTemplate holds a batch Job spec that creates nothing by itself; a JobFlow names
// templates in spec.flows and the controller creates one Job per flow ("<flow>-<template>")
// once the flow's dependsOn.targets are Completed. As the other kinds: the raw document is kept
// whole, the structs are decoded at parse time, and errors name the object and field path.
// Thread-compatible.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/flow_names.h"
#include "common/api/object.h"
#include "common/api/time.h"

namespace basalt::api {

// Label and annotation on a Job made from a template: "<namespace>.<template>" (Volcano's
// CreatedByJobTemplate).
inline constexpr std::string_view kCreatedByJobTemplate = "volcano.sh/createdByJobTemplate";
inline constexpr std::string_view kJobRetainPolicyRetain = "retain";
inline constexpr std::string_view kJobRetainPolicyDelete = "delete";
// status.state.phase of a JobFlow.
inline constexpr std::string_view kFlowPhasePending = "Pending";
inline constexpr std::string_view kFlowPhaseRunning = "Running";
inline constexpr std::string_view kFlowPhaseSucceed = "Succeed";
inline constexpr std::string_view kFlowPhaseTerminating = "Terminating";
inline constexpr std::string_view kFlowPhaseFailed = "Failed";

struct FlowDependsOn {
  std::vector<std::string> targets;
  // spec.flows[].dependsOn.probe is present (httpGetList, tcpSocketList, taskStatusList).
  // Volcano v1.15 declares it but never evaluates it; Basalt's webhook refuses it.
  bool has_probe = false;
};

struct Flow {
  std::string name;  // the JobTemplate's name
  std::optional<FlowDependsOn> depends_on;
};

struct JobFlowSpec {
  std::vector<Flow> flows;
  std::string job_retain_policy;  // "" (= retain), retain, delete
};

struct JobRunningHistory {
  std::optional<Time> start_timestamp;
  std::optional<Time> end_timestamp;
  std::string state;
  friend bool operator==(const JobRunningHistory&, const JobRunningHistory&) = default;
};

struct FlowJobStatus {
  std::string name;
  std::string state;
  std::optional<Time> start_timestamp;
  std::optional<Time> end_timestamp;
  int32_t restart_count = 0;
  std::vector<JobRunningHistory> running_histories;
  friend bool operator==(const FlowJobStatus&, const FlowJobStatus&) = default;
};

struct FlowCondition {
  std::string phase;
  std::optional<Time> create_time;
  std::optional<std::string> running_duration;  // a Go duration string, as the Job's
  // task name -> phase -> pod count (the Job's status.taskStatusCount).
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;
  friend bool operator==(const FlowCondition&, const FlowCondition&) = default;
};

struct JobFlowStatus {
  std::vector<std::string> pending_jobs;
  std::vector<std::string> running_jobs;
  std::vector<std::string> failed_jobs;
  std::vector<std::string> completed_jobs;
  std::vector<std::string> terminated_jobs;
  std::vector<std::string> unknown_jobs;  // status.unKnowJobs (Volcano's spelling)
  std::vector<FlowJobStatus> job_status_list;
  std::map<std::string, FlowCondition> conditions;  // by Job name
  std::string phase;                                // status.state.phase
  friend bool operator==(const JobFlowStatus&, const JobFlowStatus&) = default;
};

class JobFlow : public Object {
 public:
  JobFlow() = default;
  static absl::StatusOr<JobFlow> Parse(std::string_view json_text);
  static absl::StatusOr<JobFlow> FromObject(Object obj);

  const JobFlowSpec& spec() const { return spec_; }
  const JobFlowStatus& status() const { return status_; }
  // Replaces the whole status (times floored to seconds, as the API server keeps them).
  void SetStatus(const JobFlowStatus& status);

 private:
  explicit JobFlow(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  JobFlowSpec spec_;
  JobFlowStatus status_;
};

class JobTemplate : public Object {
 public:
  JobTemplate() = default;
  static absl::StatusOr<JobTemplate> Parse(std::string_view json_text);
  static absl::StatusOr<JobTemplate> FromObject(Object obj);

  // spec: a batch.volcano.sh Job spec, copied into each Job as it is; or null.
  const json::Value* JobSpec() const;
  // status.jobDependsOnList: the Jobs made from this template.
  const std::vector<std::string>& job_depends_on_list() const { return job_depends_on_list_; }
  void SetJobDependsOnList(const std::vector<std::string>& jobs);

 private:
  explicit JobTemplate(Object obj) : Object(std::move(obj)) {}

  std::vector<std::string> job_depends_on_list_;
};

// "<flow>-<template>": the name of the Job a flow creates (Volcano's getJobName).
std::string FlowJobName(std::string_view flow, std::string_view template_name);
// "<namespace>.<template>": the kCreatedByJobTemplate value.
std::string TemplateString(std::string_view namespace_name, std::string_view template_name);

}  // namespace basalt::api
