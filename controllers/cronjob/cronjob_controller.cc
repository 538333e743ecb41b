#include "controllers/cronjob/cronjob_controller.h"

#include <string>
#include <vector>

#include "common/api/batch.h"
#include "common/api/cronjob.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "controllers/cronjob/sync.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr char kByCronJobIndex[] = "cronjob-owner";

// The UID of the CronJob that controls a Job document, or "".
std::string CronJobOwnerUid(const json::Value& job) {
  const json::Value* refs = json::FindPath(job, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return {};
  for (const json::Value& r : refs->GetArray()) {
    if (!r.IsObject() || !json::GetBool(r, "controller", false)) continue;
    if (json::GetString(r, "kind") != "CronJob" ||
        json::GetString(r, "apiVersion") != api::kBatchApiVersion) {
      continue;
    }
    return std::string(json::GetString(r, "uid"));
  }
  return {};
}

std::string CronJobOwnerName(const json::Value& job) {
  const json::Value* refs = json::FindPath(job, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return {};
  for (const json::Value& r : refs->GetArray()) {
    if (r.IsObject() && json::GetBool(r, "controller", false) &&
        json::GetString(r, "kind") == "CronJob" &&
        json::GetString(r, "apiVersion") == api::kBatchApiVersion) {
      return std::string(json::GetString(r, "name"));
    }
  }
  return {};
}

std::optional<api::Time> TimeAt(const json::Value& doc, std::initializer_list<std::string_view> p) {
  const json::Value* v = json::FindPath(doc, p);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  absl::StatusOr<api::Time> t = api::ParseRfc3339(json::AsView(*v));
  if (!t.ok()) return std::nullopt;
  return *t;
}

OwnedJob OwnedJobOf(const json::Value& doc) {
  OwnedJob j;
  j.name = std::string(json::AsView(*json::FindPath(doc, {"metadata", "name"})));
  if (const json::Value* uid = json::FindPath(doc, {"metadata", "uid"})) {
    j.uid = std::string(json::AsView(*uid));
  }
  if (const json::Value* phase = json::FindPath(doc, {"status", "state", "phase"})) {
    j.phase = std::string(json::AsView(*phase));
  }
  j.creation_timestamp = TimeAt(doc, {"metadata", "creationTimestamp"});
  j.last_transition_time = TimeAt(doc, {"status", "state", "lastTransitionTime"});
  return j;
}

class CronJobController final : public Controller {
 public:
  explicit CronJobController(const ControllerContext& ctx)
      : ctx_(ctx), clock_(ctx.clock != nullptr ? ctx.clock : Clock::Real()) {
    cron_jobs_ = ctx.informers->InformerFor(client::VolcanoCronJobs());
    jobs_ = ctx.informers->InformerFor(client::VolcanoJobs());
    (void)jobs_->AddIndexers(
        {{kByCronJobIndex, informer::IndexBy<json::Document>([](const json::Document& job) {
            std::string uid = CronJobOwnerUid(job);
            return uid.empty() ? std::vector<std::string>{} : std::vector<std::string>{uid};
          })}});
    loop_ =
        std::make_unique<ReconcileLoop>(ReconcileLoopOptions{.name = "cronjob",
                                                             .clock = ctx.clock,
                                                             .metrics = ctx.metrics,
                                                             .queue_metrics = ctx.queue_metrics,
                                                             .max_requeues = ctx.max_requeue_num},
                                        [this](const std::string& key) { return Reconcile(key); });
    cron_jobs_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { loop_->Add(o.key()); },
        .on_update = [this](const informer::Object&,
                            const informer::Object& o) { loop_->Add(o.key()); },
        .on_delete = nullptr});
    auto owner = [this](const informer::Object& o) {
      if (!o.Is<json::Document>()) return;
      std::string name = CronJobOwnerName(o.doc());
      if (!name.empty()) loop_->Add(fmt::format("{}/{}", o.namespace_name(), name));
    };
    jobs_->AddEventHandler(informer::EventHandler{
        .on_add = owner,
        .on_update = [owner](const informer::Object&, const informer::Object& o) { owner(o); },
        .on_delete = [owner](const informer::Object& o, bool) { owner(o); }});
  }

  std::string_view Name() const override { return "cronjob"; }
  void Run(std::stop_token stop) override { loop_->Run(stop, std::max(1, ctx_.workers / 4)); }
  bool HasSynced() const override { return cron_jobs_->HasSynced() && jobs_->HasSynced(); }

 private:
  void Event(const api::CronJob& cj, bool warning, std::string_view reason,
             std::string_view message) {
    if (ctx_.recorder == nullptr) return;
    ctx_.recorder->Event(cj, warning ? ctrlkit::EventType::kWarning : ctrlkit::EventType::kNormal,
                         reason, message);
  }

  ReconcileResult Reconcile(const std::string& key) {
    informer::Object cached = cron_jobs_->store().Get(key);
    if (!cached || !cached.Is<json::Document>()) return std::optional<Clock::Duration>();
    absl::StatusOr<api::Object> obj = api::Object::CopyOf(cached.doc());
    if (!obj.ok()) return obj.status();
    absl::StatusOr<api::CronJob> parsed = api::CronJob::FromObject(*std::move(obj));
    if (!parsed.ok()) {
      BASALT_LOG_WARNING("Ignoring an undecodable CronJob", "cronjob", key, "error",
                         MessageOf(parsed.status()));
      return std::optional<Clock::Duration>();
    }
    api::CronJob cj = *std::move(parsed);
    if (cj.deletion_timestamp()) return std::optional<Clock::Duration>();

    // The Jobs it owns: the cache, plus active ones the cache does not show yet (a Job just
    // created), confirmed with a live read.
    std::vector<OwnedJob> owned;
    absl::StatusOr<std::vector<informer::Object>> by_owner =
        jobs_->store().ByIndex(kByCronJobIndex, cj.uid());
    if (by_owner.ok()) {
      for (const informer::Object& o : *by_owner) {
        if (o.Is<json::Document>()) owned.push_back(OwnedJobOf(o.doc()));
      }
    }
    for (const api::ObjectReference& ref : cj.status().active) {
      const bool known = std::any_of(owned.begin(), owned.end(),
                                     [&](const OwnedJob& j) { return j.uid == ref.uid; });
      if (known) continue;
      absl::StatusOr<json::Document> live =
          ctx_.client->Get(client::VolcanoJobs(), cj.namespace_name(), ref.name);
      if (absl::IsNotFound(live.status())) continue;
      if (!live.ok()) return live.status();
      if (CronJobOwnerUid(*live) == cj.uid()) owned.push_back(OwnedJobOf(*live));
    }

    absl::StatusOr<CronSchedule> schedule =
        CronSchedule::Parse(cj.spec().schedule, cj.spec().time_zone);
    const api::Time now = clock_->WallNow();
    CronPlan plan = PlanCronJob(cj, owned, schedule, now);
    for (const CronEvent& e : plan.events) Event(cj, e.warning, e.reason, e.message);
    api::CronJobStatus status = plan.status;
    absl::Status failure;

    for (const OwnedJob& j : plan.delete_jobs) {
      absl::Status s = DeleteJob(cj, j.name, j.uid);
      if (!s.ok()) failure.Update(s);
    }
    bool replaced = true;
    for (const api::ObjectReference& ref : plan.replace_jobs) {
      absl::Status s = DeleteJob(cj, ref.name, ref.uid);
      if (!s.ok()) {
        failure.Update(s);
        replaced = false;
        continue;
      }
      std::erase_if(status.active, [&](const api::ObjectReference& r) { return r.uid == ref.uid; });
    }
    if (plan.start && replaced && schedule.ok()) {
      absl::Status s = StartJob(cj, *schedule, *plan.start, status);
      if (!s.ok()) failure.Update(s);
    }

    if (!(status == cj.status())) {
      cj.SetStatus(status);
      absl::StatusOr<json::Document> written = ctx_.client->UpdateStatus(
          client::VolcanoCronJobs(), cj.namespace_name(), cj.name(), cj.ToJson());
      if (!written.ok()) return written.status();
    }
    if (!failure.ok()) return failure;
    return plan.requeue_after;
  }

  absl::Status DeleteJob(const api::CronJob& cj, const std::string& name, const std::string& uid) {
    client::DeleteOptions o;
    o.propagation_policy = "Background";
    o.precondition_uid = uid;
    absl::Status s = ctx_.client->Delete(client::VolcanoJobs(), cj.namespace_name(), name, o);
    if (absl::IsNotFound(s) || client::IsConflict(s)) return absl::OkStatus();
    if (!s.ok()) {
      Event(cj, true, "FailedDelete", fmt::format("Error deleting job {}: {}", name, MessageOf(s)));
      return s;
    }
    Event(cj, false, "SuccessfulDelete", fmt::format("Deleted job {}", name));
    return absl::OkStatus();
  }

  // Creates the Job of `start`; on success (or finding its own Job of that name) records it in
  // `status` (active, lastScheduleTime).
  absl::Status StartJob(const api::CronJob& cj, const CronSchedule& schedule, api::Time start,
                        api::CronJobStatus& status) {
    api::Object job = BuildCronJobJob(cj, schedule, start);
    const std::string name(job.name());
    absl::StatusOr<json::Document> created =
        ctx_.client->Create(client::VolcanoJobs(), cj.namespace_name(), job.ToJson());
    const json::Value* doc = nullptr;
    absl::StatusOr<json::Document> existing;
    if (created.ok()) {
      doc = &*created;
      Event(cj, false, "SuccessfulCreate", fmt::format("Created job {}", name));
    } else if (absl::IsAlreadyExists(created.status())) {
      existing = ctx_.client->Get(client::VolcanoJobs(), cj.namespace_name(), name);
      if (!existing.ok()) return existing.status();
      if (CronJobOwnerUid(*existing) != cj.uid()) {
        Event(cj, true, "ForeignJob",
              fmt::format("Job {} exists but is not owned by this CronJob: start time {} skipped",
                          name, schedule.FormatInZone(start)));
        status.last_schedule_time = start;
        return absl::OkStatus();
      }
      doc = &*existing;
    } else {
      Event(cj, true, "FailedCreate",
            fmt::format("Error creating job {}: {}", name, MessageOf(created.status())));
      return created.status();
    }
    OwnedJob j = OwnedJobOf(*doc);
    if (!JobFinished(j.phase) &&
        std::none_of(status.active.begin(), status.active.end(),
                     [&](const api::ObjectReference& r) { return r.uid == j.uid; })) {
      std::string rv;
      if (const json::Value* v = json::FindPath(*doc, {"metadata", "resourceVersion"})) {
        rv = std::string(json::AsView(*v));
      }
      status.active.push_back(api::ObjectReference{std::string(api::kBatchApiVersion), "Job",
                                                   std::string(cj.namespace_name()), j.name, j.uid,
                                                   rv, ""});
    }
    status.last_schedule_time = start;
    return absl::OkStatus();
  }

  const ControllerContext ctx_;
  Clock* const clock_;
  informer::SharedInformer* cron_jobs_;
  informer::SharedInformer* jobs_;
  std::unique_ptr<ReconcileLoop> loop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewCronJobController(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new CronJobController(ctx));
}

}  // namespace basalt::controllers
