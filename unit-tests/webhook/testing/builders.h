#pragma once
// Test helpers for the admission handlers: a builder that edits a JSON object by JSON Pointer,
// the examples from /work/shared/examples as JSON baselines, and helpers that run a handler and
// apply its patch.

#include <string>
#include <string_view>

#include "common/util/json.h"
#include "webhook/admission_review.h"
#include "webhook/router.h"

namespace basalt::webhook::testing {

// Edits a JSON object in place: Set("/spec/tasks/0/replicas", "2") parses the value as JSON
// and puts it there, creating missing parent objects. Aborts the test on bad input (these are
// literals in tests).
class JsonBuilder {
 public:
  explicit JsonBuilder(std::string_view json);
  JsonBuilder(const JsonBuilder& other);
  JsonBuilder& operator=(const JsonBuilder& other);
  JsonBuilder(JsonBuilder&&) = default;
  JsonBuilder& operator=(JsonBuilder&&) = default;

  JsonBuilder& Set(std::string_view pointer, std::string_view json_value);
  // Sets a string value (no JSON quoting needed).
  JsonBuilder& SetString(std::string_view pointer, std::string_view value);
  JsonBuilder& Remove(std::string_view pointer);

  std::string Json() const;
  operator std::string() const { return Json(); }  // NOLINT: builders read as values

 private:
  json::Document doc_;
};

// examples/job-bert-pretrain.yaml: 1 task "worker", 4 replicas, minAvailable 4, one PodEvicted
// policy, no queue.
JsonBuilder BertJob();
// The same job after /jobs/mutate, as the validator sees it (queue "default").
JsonBuilder MutatedBertJob();
// examples/queue-ai-training.yaml: weight 10, capability cpu 200, memory 500Gi, 8 GPUs.
JsonBuilder AiTrainingQueue();
// A PodGroup "pg1" in namespace "team-a" with minMember 2.
JsonBuilder SimplePodGroup();
// A pod "p1" with schedulerName volcano.
JsonBuilder SimplePod();

// Runs `handler` on a request built from the objects (empty = absent).
AdmissionResponse Run(const AdmissionHandler& handler, Operation op, const std::string& object,
                      const std::string& old_object = "");

// Applies the response's patch to `object` and returns the result, serialized canonically.
std::string ApplyPatch(std::string_view object, const AdmissionResponse& response);

// Serializes `json` canonically (members sorted) so equal objects compare equal as strings.
std::string Canonical(std::string_view json);

}  // namespace basalt::webhook::testing
