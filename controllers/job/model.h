#pragma once
// How the job controller names the one Job model of common/api (batch.h): the Job, its spec
// and status are api::Job, decoded once per reconcile; phases, actions, events, plugin names
// and label/annotation keys come from common/api/vocabulary.h and are used unqualified here.
// What this header adds is the controller's own arithmetic over a Job's status: the
// inputs and outputs of the phase table, and the names of task pods.
//
// Plain value types and pure functions; thread-compatible.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/api/batch.h"
#include "common/api/vocabulary.h"

namespace basalt::controllers {

using api::Action;
using api::ActionName;
using Event = api::JobEvent;
using api::EventName;
using api::IsFinishedPhase;
using api::JobPhase;
using api::JobPhaseName;
using api::kAllActions;
using api::kAllJobPhases;
using api::LifecyclePolicy;
using api::ParseAction;
using api::ParseEvent;
using api::ParseJobPhase;

// Pod counters and bookkeeping of status, the inputs of the phase table: the counters part of
// api::JobStatus itself (declared once, in common/api/batch.h).
using JobCounts = api::JobStatusCounts;

// The state machine's counts from an api::JobStatus (its JobStatusCounts part).
JobCounts CountsFromApi(const api::JobStatus& status);

// `<job>-<task>-<index>`, the name of a task's pod.
std::string MakePodName(std::string_view job, std::string_view task, int32_t index);

}  // namespace basalt::controllers
