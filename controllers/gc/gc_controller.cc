#include "controllers/gc/gc_controller.h"

#include "common/api/codec.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {

std::optional<api::Time> JobExpiry(const json::Value& job) {
  // Only the three fields it needs, through the model's reader and vocabulary: this runs on
  // every Job event, where decoding the whole Job would cost more than the rest of the gc.
  api::FieldReader root(&job, "");
  const std::optional<int32_t> ttl = root.Child("spec").OptInt32("ttlSecondsAfterFinished");
  if (!ttl || *ttl < 0) return std::nullopt;
  api::FieldReader state = root.Child("status").Child("state");
  if (!api::IsFinishedPhase(api::ParseJobPhase(state.String("phase")))) return std::nullopt;
  const std::optional<api::Time> finished = state.OptTime("lastTransitionTime");
  if (!finished || !root.ok()) return std::nullopt;
  return *finished + std::chrono::seconds(*ttl);
}

namespace {

class GarbageCollector final : public Controller {
 public:
  explicit GarbageCollector(const ControllerContext& ctx)
      : ctx_(ctx), clock_(ctx.clock != nullptr ? ctx.clock : Clock::Real()) {
    jobs_ = ctx.informers->InformerFor(client::VolcanoJobs());
    loop_ =
        std::make_unique<ReconcileLoop>(ReconcileLoopOptions{.name = "gc",
                                                             .clock = ctx.clock,
                                                             .metrics = ctx.metrics,
                                                             .queue_metrics = ctx.queue_metrics},
                                        [this](const std::string& key) { return Reconcile(key); });
    auto consider = [this](const informer::Object& o) {
      if (JobExpiry(o.doc())) loop_->Add(o.key());
    };
    jobs_->AddEventHandler(
        informer::EventHandler{.on_add = consider,
                               .on_update = [consider](const informer::Object&,
                                                       const informer::Object& o) { consider(o); },
                               .on_delete = nullptr});
  }

  std::string_view Name() const override { return "gc"; }
  void Run(std::stop_token stop) override { loop_->Run(stop, 1); }
  bool HasSynced() const override { return jobs_->HasSynced(); }

 private:
  ReconcileResult Reconcile(const std::string& key) {
    informer::Object cached = jobs_->store().Get(key);
    if (!cached) return std::optional<Clock::Duration>();
    std::optional<api::Time> expiry = JobExpiry(cached.doc());
    if (!expiry) return std::optional<Clock::Duration>();
    const api::Time now = clock_->WallNow();
    if (now < *expiry) {
      return std::optional<Clock::Duration>(
          std::chrono::duration_cast<Clock::Duration>(*expiry - now) +
          std::chrono::milliseconds(100));
    }
    // Re-check against the API server: the cache may lag a restart or a TTL change.
    const auto [ns, name] = informer::SplitKey(key);
    absl::StatusOr<json::Document> fresh = ctx_.client->Get(client::VolcanoJobs(), ns, name);
    if (absl::IsNotFound(fresh.status())) return std::optional<Clock::Duration>();
    if (!fresh.ok()) return fresh.status();
    std::optional<api::Time> fresh_expiry = JobExpiry(*fresh);
    if (!fresh_expiry) return std::optional<Clock::Duration>();
    if (now < *fresh_expiry) {
      return std::optional<Clock::Duration>(
          std::chrono::duration_cast<Clock::Duration>(*fresh_expiry - now));
    }
    client::DeleteOptions o;
    o.propagation_policy = "Foreground";
    const json::Value* uid = json::FindPath(*fresh, {"metadata", "uid"});
    if (uid != nullptr) o.precondition_uid = std::string(json::AsView(*uid));
    absl::Status s = ctx_.client->Delete(client::VolcanoJobs(), ns, name, o);
    if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
    if (s.ok()) {
      BASALT_LOG_INFO("Deleted job after ttlSecondsAfterFinished", "job", key);
    }
    return std::optional<Clock::Duration>();
  }

  const ControllerContext ctx_;
  Clock* const clock_;
  informer::SharedInformer* jobs_;
  std::unique_ptr<ReconcileLoop> loop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewGarbageCollector(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new GarbageCollector(ctx));
}

}  // namespace basalt::controllers
