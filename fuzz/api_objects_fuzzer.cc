// fuzz_api_objects: the typed object views of common/api (Job, PodGroup, Queue, Pod, Node,
// Command, PriorityClass, Namespace, Lease, Event) on arbitrary bytes, as they arrive from
// the API server or in an AdmissionReview.
//
// Invariants checked for each kind that accepts the input:
//  - every accessor and conversion runs without undefined behaviour (the sanitizers check);
//  - ToJson() re-parses as the same kind with the same name, namespace and decoded fields
//    (Basalt can read back what it writes);
//  - writing the decoded status (and PodGroup spec) back with the setters and re-parsing gives
//    the same decoded values (a status update never corrupts what it does not change).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/api/batch.h"
#include "common/api/compact.h"
#include "common/api/core.h"
#include "common/api/object.h"
#include "common/api/scheduling.h"
#include "common/api/time.h"
#include "fmt/format.h"
#include "fuzz/fuzz_check.h"

namespace api = basalt::api;

namespace {

// Accessors every kind shares.
void ReadMeta(const api::Object& o) {
  (void)o.api_version();
  (void)o.kind();
  (void)o.name();
  (void)o.generate_name();
  (void)o.namespace_name();
  (void)o.uid();
  (void)o.resource_version();
  (void)o.generation();
  (void)o.labels();
  (void)o.annotations();
  (void)o.owner_references();
  (void)o.controller_ref();
  (void)o.finalizers();
  (void)o.Key();
  for (const auto& t : {o.creation_timestamp(), o.deletion_timestamp()}) {
    if (t) {
      std::string s = api::FormatRfc3339(*t);
      absl::StatusOr<api::Time> back = api::ParseRfc3339(s);
      FUZZ_CHECK(back.ok(), fmt::format("formatted timestamp \"{}\" does not parse: {}", s,
                                        back.status().ToString()));
      (void)api::FormatRfc3339Micro(*t);
    }
  }
}

// Re-parses `o` as the same kind: must succeed with the same identity.
template <typename T>
T Reparse(const T& o, std::string_view what) {
  std::string json = o.ToJson();
  absl::StatusOr<T> again = T::Parse(json);
  FUZZ_CHECK(again.ok(), fmt::format("{} re-encoded as {} does not parse: {}", what, json,
                                     again.status().ToString()));
  FUZZ_CHECK(again->name() == o.name() && again->namespace_name() == o.namespace_name(),
             fmt::format("{} lost its identity when re-encoded", what));
  return *std::move(again);
}

std::optional<api::Time> Seconds(std::optional<api::Time> t) {
  if (t) t = api::FloorToSeconds(*t);
  return t;
}

// metav1.Time has whole seconds: compare statuses at that precision.
api::JobStatus AtSeconds(api::JobStatus s) {
  s.state.last_transition_time = Seconds(s.state.last_transition_time);
  for (auto& c : s.conditions) c.last_transition_time = Seconds(c.last_transition_time);
  for (auto& c : s.typed_conditions) {
    c.last_transition_time = Seconds(c.last_transition_time);
    c.last_probe_time = Seconds(c.last_probe_time);
  }
  return s;
}

api::PodGroupStatus AtSeconds(api::PodGroupStatus s) {
  for (auto& c : s.conditions) {
    c.last_transition_time = Seconds(c.last_transition_time);
    c.last_probe_time = Seconds(c.last_probe_time);
  }
  return s;
}

void FuzzJob(std::string_view text) {
  absl::StatusOr<api::Job> job = api::Job::Parse(text);
  if (!job.ok()) return;
  ReadMeta(*job);
  for (size_t i = 0; i < job->spec().tasks.size() + 1; ++i) (void)job->TaskTemplate(i);
  for (const auto& t : job->spec().tasks) (void)job->FindTask(t.name);
  (void)job->spec().TotalReplicas();
  api::Job again = Reparse(*job, "Job");
  FUZZ_CHECK(again.spec().tasks.size() == job->spec().tasks.size(), "Job tasks changed");
  api::Job copy = *job;
  copy.SetStatus(job->status());
  api::Job written = Reparse(copy, "Job after SetStatus");
  FUZZ_CHECK(AtSeconds(written.status()) == AtSeconds(job->status()),
             fmt::format("Job status changed by SetStatus(status()): {}", copy.ToJson()));
}

void FuzzPodGroup(std::string_view text) {
  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(text);
  if (!pg.ok()) return;
  ReadMeta(*pg);
  (void)pg->FindCondition("Unschedulable");
  api::PodGroup again = Reparse(*pg, "PodGroup");
  FUZZ_CHECK(again.spec() == pg->spec() && again.status() == pg->status(),
             "PodGroup spec or status changed when re-encoded");
  api::PodGroup copy = *pg;
  copy.SetSpec(pg->spec());
  copy.SetStatus(pg->status());
  api::PodGroup written = Reparse(copy, "PodGroup after SetSpec/SetStatus");
  FUZZ_CHECK(written.spec() == pg->spec(),
             fmt::format("PodGroup spec changed by SetSpec(spec()): {}", copy.ToJson()));
  FUZZ_CHECK(AtSeconds(written.status()) == AtSeconds(pg->status()),
             fmt::format("PodGroup status changed by SetStatus(status()): {}", copy.ToJson()));
}

void FuzzQueue(std::string_view text) {
  absl::StatusOr<api::Queue> q = api::Queue::Parse(text);
  if (!q.ok()) return;
  ReadMeta(*q);
  api::Queue again = Reparse(*q, "Queue");
  FUZZ_CHECK(again.status() == q->status(), "Queue status changed when re-encoded");
  api::Queue copy = *q;
  copy.SetStatus(q->status());
  api::Queue written = Reparse(copy, "Queue after SetStatus");
  FUZZ_CHECK(written.status() == q->status(),
             fmt::format("Queue status changed by SetStatus(status()): {}", copy.ToJson()));
}

void FuzzPod(std::string_view text) {
  absl::StatusOr<api::Pod> pod = api::Pod::Parse(text);
  if (!pod.ok()) return;
  ReadMeta(*pod);
  (void)pod->EffectiveRequest();
  (void)pod->GroupName();
  (void)pod->IsTerminated();
  (void)pod->FindCondition("PodScheduled");
  api::CompactPod compact = api::ToCompactPod(*pod);
  (void)compact.Key();
  (void)api::PodPhaseName(compact.phase);
  Reparse(*pod, "Pod");
}

void FuzzNode(std::string_view text) {
  absl::StatusOr<api::Node> node = api::Node::Parse(text);
  if (!node.ok()) return;
  ReadMeta(*node);
  (void)node->Ready();
  (void)api::ToCompactNode(*node);
  api::Node again = Reparse(*node, "Node");
  FUZZ_CHECK(again.allocatable() == node->allocatable() && again.taints() == node->taints(),
             "Node allocatable or taints changed when re-encoded");
}

template <typename T>
void FuzzOther(std::string_view text, std::string_view what) {
  absl::StatusOr<T> o = T::Parse(text);
  if (!o.ok()) return;
  ReadMeta(*o);
  Reparse(*o, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  FuzzJob(text);
  FuzzPodGroup(text);
  FuzzQueue(text);
  FuzzPod(text);
  FuzzNode(text);
  FuzzOther<api::Command>(text, "Command");
  FuzzOther<api::PriorityClass>(text, "PriorityClass");
  FuzzOther<api::Namespace>(text, "Namespace");
  FuzzOther<api::Lease>(text, "Lease");
  FuzzOther<api::Event>(text, "Event");
  return 0;
}
