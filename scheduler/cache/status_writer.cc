#include "scheduler/cache/status_writer.h"

#include <chrono>
#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {

namespace {

constexpr char kPodGroupsDiscoveryPath[] = "/apis/scheduling.volcano.sh/v1beta1";

prometheus::Registry& RegistryOr(prometheus::Registry* given,
                                 std::unique_ptr<prometheus::Registry>& owned) {
  if (given != nullptr) return *given;
  owned = std::make_unique<prometheus::Registry>();
  return *owned;
}

// Whether an APIResourceList names "podgroups/status".
absl::StatusOr<bool> ServesPodGroupStatus(std::string_view body) {
  BASALT_ASSIGN_OR_RETURN(json::Document doc, json::Parse(body));
  const json::Value* resources = json::Find(doc, "resources");
  if (resources == nullptr || !resources->IsArray()) {
    return absl::InternalError(
        fmt::format("GET {}: no resources in the answer", kPodGroupsDiscoveryPath));
  }
  bool podgroups = false;
  for (const json::Value& r : resources->GetArray()) {
    const std::string_view name = json::GetString(r, "name");
    if (name == "podgroups/status") return true;
    if (name == "podgroups") podgroups = true;
  }
  if (!podgroups) {
    return absl::NotFoundError(
        fmt::format("GET {}: podgroups are not served", kPodGroupsDiscoveryPath));
  }
  return false;
}

}  // namespace

ApiStatusWriter::ApiStatusWriter(client::Client* client, ClusterState* state,
                                 ctrlkit::EventRecorder* recorder, int workers,
                                 prometheus::Registry* registry, Clock* clock)
    : dropped_(prometheus::BuildCounter()
                   .Name("basalt_scheduler_status_writes_dropped_total")
                   .Help("Status writes given up, by kind (podgroup, pod, queue) and reason "
                         "(deleted, conflict, forbidden, invalid, unavailable, error); a later "
                         "cycle writes the object again unless it was deleted")
                   .Register(RegistryOr(registry, owned_registry_))),
      subresource_gauge_(
          prometheus::BuildGauge()
              .Name("basalt_scheduler_podgroup_status_subresource")
              .Help("1 while PodGroup status is written through podgroups/<name>/status, 0 while "
                    "it is written on the object (a CRD without a status subresource)")
              .Register(registry != nullptr ? *registry : *owned_registry_)
              .Add({})),
      client_(client),
      state_(state),
      recorder_(recorder),
      clock_(clock != nullptr ? clock : Clock::Real()),
      writer_(AsyncWriterOptions{.name = "status", .workers = workers, .clock = clock_},
              [this](Write& write) { Send(write); }) {
  subresource_gauge_.Set(1);
}

std::string_view ApiStatusWriter::DropReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return "deleted";
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kAlreadyExists:
      return "conflict";
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return "forbidden";
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      return "invalid";
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return "unavailable";
    default:
      return "error";
  }
}

void ApiStatusWriter::Dropped(std::string_view kind, const std::string& what,
                              const absl::Status& status) {
  const std::string_view reason = DropReason(status);
  dropped_.Add({{"kind", std::string(kind)}, {"reason", std::string(reason)}}).Increment();
  if (reason == "deleted") {
    BASALT_LOG_INFO("Status not written: the object was deleted", "object", what, "error",
                    MessageOf(status));
  } else {
    BASALT_LOG_WARNING("Status not written; a later cycle retries", "object", what, "reason",
                       reason, "error", MessageOf(status));
  }
}

absl::Status ApiStatusWriter::DetectPodGroupStatusSubresource() {
  std::lock_guard<std::mutex> l(discovery_mu_);
  client::Request request;
  request.verb = "GET";
  request.path = kPodGroupsDiscoveryPath;
  absl::StatusOr<client::Response> response = client_->Raw(request);
  absl::StatusOr<bool> served = absl::UnknownError("");
  if (!response.ok()) {
    served = response.status();
  } else if (response->status_code != 200) {
    served = absl::UnavailableError(fmt::format("GET {}: HTTP {}: {}", kPodGroupsDiscoveryPath,
                                                response->status_code, response->body));
  } else {
    served = ServesPodGroupStatus(response->body);
  }
  if (!served.ok()) {
    BASALT_LOG_WARNING(
        "Cannot tell whether the PodGroup CRD has a status subresource; keeping "
        "the current way of writing PodGroup status",
        "subresource", podgroup_status_subresource_.load(), "error", MessageOf(served.status()));
    return served.status();
  }
  const bool before = podgroup_status_subresource_.exchange(*served);
  subresource_gauge_.Set(*served ? 1 : 0);
  if (!*served) {
    BASALT_LOG_INFO(
        "The PodGroup CRD has no status subresource (Volcano's CRD): PodGroup status is written "
        "with a patch of the PodGroup itself");
  } else if (!before) {
    BASALT_LOG_INFO("The PodGroup CRD serves podgroups/status again: writing status there");
  }
  return absl::OkStatus();
}

void ApiStatusWriter::Rediscover() { (void)DetectPodGroupStatusSubresource(); }

ApiStatusWriter::~ApiStatusWriter() { Shutdown(); }

bool ApiStatusWriter::Enqueue(std::string key, Write write, Clock::Duration min_interval,
                              std::optional<Clock::Duration> hold) {
  const Admission a = hold.has_value() ? writer_.EnqueueHeld(key, std::move(write), *hold)
                                       : writer_.Enqueue(key, std::move(write), min_interval);
  if (a != Admission::kShutdown) return true;
  BASALT_LOG_WARNING("Status not written: the writer is shut down", "object", key);
  return false;
}

void ApiStatusWriter::UpdatePodGroupStatus(PodGroupStatusUpdate update) {
  state_->SetPodGroupStatus(update.job_id, update.status);
  std::string key = "pg/" + update.job_id;
  const std::string job_id = update.job_id;
  std::optional<Clock::Duration> hold;
  if (update.settling) hold = kSettlingHold;
  if (!Enqueue(std::move(key), std::move(update), {}, hold)) state_->ForgetPodGroupStatus(job_id);
}

void ApiStatusWriter::UpdatePodCondition(PodConditionUpdate update) {
  state_->SetPodCondition(update.task_uid, update.condition);
  std::string key = "pod/" + update.task_uid;
  const std::string uid = update.task_uid;
  if (!Enqueue(std::move(key), std::move(update))) state_->ForgetPodCondition(uid);
}

void ApiStatusWriter::UpdateQueueStatus(QueueStatusUpdate update) {
  Resource previous = state_->QueueAllocatedInApi(update.queue);
  state_->SetQueueAllocated(update.queue, update.allocated);
  ClusterState::QueueShareStatus before =
      state_->SetQueueShare(update.queue, update.deserved, update.guarantee);
  // A write replaces one still pending for the queue: carry the deserved and guarantee known
  // (and not changed now) too, so the pending one's are not lost.
  if (!update.deserved.has_value() && !before.deserved.IsEmpty()) update.deserved = before.deserved;
  if (!update.guarantee.has_value() && !before.guarantee.IsEmpty()) {
    update.guarantee = before.guarantee;
  }
  std::string key = "queue/" + update.queue;
  const std::string queue = update.queue;
  if (!Enqueue(std::move(key),
               QueueWrite{std::move(update), std::move(previous), std::move(before)},
               kQueueWriteInterval)) {
    state_->ForgetQueueAllocated(queue);
  }
}

void ApiStatusWriter::RecordEvent(EventRecord event) {
  if (recorder_ == nullptr) return;
  std::optional<api::ObjectReference> ref;
  if (event.kind == "Pod") {
    ref = state_->PodReference(event.namespace_name, event.name);
  } else if (event.kind == "PodGroup") {
    ref = state_->PodGroupReference(event.namespace_name, event.name);
  }
  if (!ref.has_value()) return;
  recorder_->Event(
      *ref, event.type == "Warning" ? ctrlkit::EventType::kWarning : ctrlkit::EventType::kNormal,
      event.reason, event.message);
}

absl::StatusOr<json::Document> ApiStatusWriter::PatchPodGroup(const PodGroupStatusUpdate& pg,
                                                              const std::string& patch,
                                                              bool via_status) {
  return client_->Patch(client::PodGroups(), pg.namespace_name, pg.name, client::PatchType::kMerge,
                        patch, via_status ? "status" : "");
}

void ApiStatusWriter::SendPodGroup(const PodGroupStatusUpdate& pg) {
  const std::string patch = PodGroupStatusPatch(pg.status);
  const std::string what = fmt::format("podgroup {}", pg.job_id);
  bool via_status = podgroup_status_subresource_.load();
  absl::StatusOr<json::Document> written = PatchPodGroup(pg, patch, via_status);
  if (!written.ok() && via_status && absl::IsNotFound(written.status())) {
    // Either the PodGroup is gone, or its CRD serves no status subresource (Volcano's).
    absl::StatusOr<json::Document> got =
        client_->Get(client::PodGroups(), pg.namespace_name, pg.name);
    if (got.ok()) {
      Rediscover();
      if (!podgroup_status_subresource_.load()) {
        via_status = false;
        written = PatchPodGroup(pg, patch, via_status);
      } else {
        written = absl::FailedPreconditionError(
            fmt::format("{}: /status answered 404 although the PodGroup exists and discovery lists "
                        "podgroups/status ({})",
                        what, MessageOf(written.status())));
      }
    } else if (!absl::IsNotFound(got.status())) {
      written = got.status();  // cannot tell; count what stopped us
    }
  } else if (written.ok() && !via_status) {
    // A write of the object keeps the status unchanged when the CRD has a status subresource
    // (it gained one since discovery): look again, and write through it then.
    const json::Value* status = json::Find(*written, "status");
    const std::string_view phase =
        status != nullptr ? json::GetString(*status, "phase") : std::string_view();
    if (phase != PodGroupPhaseName(pg.status.phase)) {
      Rediscover();
      if (podgroup_status_subresource_.load()) written = PatchPodGroup(pg, patch, true);
    }
  }
  if (!written.ok()) {
    Dropped("podgroup", what, written.status());
    state_->ForgetPodGroupStatus(pg.job_id);
  }
}

void ApiStatusWriter::Send(const Write& write) {
  if (const auto* pg = std::get_if<PodGroupStatusUpdate>(&write)) {
    SendPodGroup(*pg);
    return;
  }
  if (const auto* pod = std::get_if<PodConditionUpdate>(&write)) {
    absl::Status s = client_
                         ->Patch(client::Pods(), pod->namespace_name, pod->pod_name,
                                 client::PatchType::kStrategicMerge,
                                 PodConditionPatch(pod->condition, clock_->WallNow()), "status")
                         .status();
    if (!s.ok()) {
      Dropped("pod", fmt::format("pod {}/{}", pod->namespace_name, pod->pod_name), s);
      state_->ForgetPodCondition(pod->task_uid);
    }
    return;
  }
  const auto& q = std::get<QueueWrite>(write);
  absl::Status s = client_
                       ->Patch(client::Queues(), "", q.update.queue, client::PatchType::kMerge,
                               QueueStatusPatch(q.update, q.previous, q.previous_share.deserved,
                                                q.previous_share.guarantee),
                               "status")
                       .status();
  if (!s.ok()) {
    Dropped("queue", fmt::format("queue {}", q.update.queue), s);
    state_->ForgetQueueAllocated(q.update.queue);
  }
}

void ApiStatusWriter::Shutdown() { writer_.Shutdown(); }

}  // namespace basalt::sched::cache
