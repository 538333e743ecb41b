#include "controllers/job/controller/pod_group_control.h"

#include "common/api/codec.h"
#include "common/api/scheduling.h"
#include "common/api/views.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/client/resource.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "controllers/job/controller/job_index.h"
#include "controllers/job/pods/pod_group.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {}  // namespace

absl::StatusOr<PodGroupControl::Ensured> PodGroupControl::Ensure(const api::Job& job,
                                                                 const json::Document& desired,
                                                                 bool lost_while_running,
                                                                 PodGroupMemory& memory,
                                                                 std::string* problem) {
  const std::string key = JobKey(job.namespace_name(), job.name());
  informer::Object cached = pod_groups_->Get(key);
  std::shared_ptr<const json::Document> existing;
  if (cached) {
    const std::string uid(api::view::Uid(cached.doc()));
    if (memory.deleted_uids.count(uid) > 0) {
      cached = informer::Object();
    } else if (!PodGroupOwnedBy(cached.doc(), job.uid())) {
      // Decision 3: a PodGroup of an earlier Job with this name; replace it.
      client::DeleteOptions o;
      o.precondition_uid = uid;
      absl::Status s = client_->Delete(client::PodGroups(), job.namespace_name(), job.name(), o);
      if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
      memory.deleted_uids.insert(uid);
      BASALT_LOG_INFO("Deleted a stale PodGroup of an earlier Job", "podgroup", key, "uid", uid);
      cached = informer::Object();
    } else {
      existing = cached.Share<json::Document>();
      memory.uid = uid;
    }
  }
  if (!existing) {
    // Basalt deletes a job's PodGroup only on whole-job kills, after which the job is not
    // Running; a PodGroup missing otherwise was deleted by someone else (by hand, a script).
    const bool remembered = !memory.uid.empty() && memory.deleted_uids.count(memory.uid) == 0;
    if (remembered) {
      // We created (or saw) it and have not deleted it: most often the informer has not yet
      // delivered our own creation. A read settles it; a second POST would cost a write, a 409
      // and this same read.
      absl::StatusOr<json::Document> got =
          client_->Get(client::PodGroups(), job.namespace_name(), job.name());
      if (got.ok() && api::view::Uid(*got) == memory.uid) {
        return Ensured{std::string(api::view::PodGroupPhase(*got)), false};
      }
      if (!got.ok() && !absl::IsNotFound(got.status())) return got.status();
      // Gone, or replaced by someone else's: fall through to (re)create.
    }
    const bool lost = remembered || lost_while_running;
    absl::StatusOr<json::Document> created =
        client_->Create(client::PodGroups(), job.namespace_name(), json::Serialize(desired));
    if (created.ok()) {
      memory.uid = std::string(api::view::Uid(*created));
      return Ensured{std::string(api::view::PodGroupPhase(*created)), lost};
    }
    if (!absl::IsAlreadyExists(created.status())) {
      *problem = fmt::format("Error creating PodGroup {}: {}", key, MessageOf(created.status()));
      return created.status();
    }
    BASALT_ASSIGN_OR_RETURN(json::Document got,
                            client_->Get(client::PodGroups(), job.namespace_name(), job.name()));
    const std::string uid(api::view::Uid(got));
    if (!PodGroupOwnedBy(got, job.uid()) || memory.deleted_uids.count(uid) > 0) {
      return absl::UnavailableError(
          fmt::format("PodGroup {} of an earlier job is still being deleted", key));
    }
    return Ensured{std::string(api::view::PodGroupPhase(got)), false};
  }
  if (PodGroupSpecDiffers(*existing, desired)) {
    if (const json::Value* spec = json::Find(desired, "spec")) {
      json::Document patch(rapidjson::kObjectType);
      json::Value copy(*spec, patch.GetAllocator());
      json::Set(patch, "spec", std::move(copy), patch.GetAllocator());
      absl::StatusOr<json::Document> r =
          client_->Patch(client::PodGroups(), job.namespace_name(), job.name(),
                         client::PatchType::kMerge, json::Serialize(patch));
      if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
    }
  }
  return Ensured{std::string(api::view::PodGroupPhase(*existing)), false};
}

absl::Status PodGroupControl::Delete(const api::Job& job, PodGroupMemory& memory) {
  informer::Object cached = pod_groups_->Get(JobKey(job.namespace_name(), job.name()));
  if (!cached) return absl::OkStatus();
  const std::string uid(api::view::Uid(cached.doc()));
  if (memory.deleted_uids.count(uid) > 0) return absl::OkStatus();
  if (!PodGroupOwnedBy(cached.doc(), job.uid())) return absl::OkStatus();
  client::DeleteOptions o;
  o.precondition_uid = uid;
  absl::Status s = client_->Delete(client::PodGroups(), job.namespace_name(), job.name(), o);
  if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
  memory.deleted_uids.insert(uid);
  memory.uid.clear();
  return absl::OkStatus();
}

std::optional<api::Condition> PodGroupControl::PendingCondition(const api::Job& job) const {
  informer::Object cached = pod_groups_->Get(JobKey(job.namespace_name(), job.name()));
  if (!cached) return std::nullopt;
  // Only the conditions are decoded (the model's reader, not the whole PodGroup): this runs on
  // every visit of a Pending job.
  api::FieldReader status(json::Find(cached.doc(), "status"), "status");
  const std::vector<api::Condition> conditions = status.Conditions("conditions");
  const api::Condition* newest = nullptr;
  for (const api::Condition& c : conditions) {
    if (c.status != "True") continue;
    if (newest == nullptr || c.last_transition_time.value_or(api::Time::min()) >=
                                 newest->last_transition_time.value_or(api::Time::min())) {
      newest = &c;
    }
  }
  if (newest == nullptr || newest->type == api::kPodGroupScheduled) return std::nullopt;
  api::Condition out;
  out.type = newest->type;
  out.status = "True";
  out.message = newest->message;
  return out;
}

}  // namespace basalt::controllers
