#include "controllers/jobflow/jobflow_controller.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "common/api/flow.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/informer/shared_informer.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "common/util/stop.h"
#include "controllers/jobflow/sync.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr char kByTemplateIndex[] = "created-by-jobtemplate";
constexpr auto kCrdRecheck = std::chrono::seconds(30);

// The name of the JobFlow that controls a Job document, or "" (uid in *uid when not null).
std::string JobFlowOwner(const json::Value& job, std::string* uid = nullptr) {
  const json::Value* refs = json::FindPath(job, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->IsArray()) return {};
  for (const json::Value& r : refs->GetArray()) {
    if (r.IsObject() && json::GetBool(r, "controller", false) &&
        json::GetString(r, "kind") == api::kJobFlowKind &&
        json::GetString(r, "apiVersion") == api::kFlowApiVersion) {
      if (uid != nullptr) *uid = std::string(json::GetString(r, "uid"));
      return std::string(json::GetString(r, "name"));
    }
  }
  return {};
}

std::string TemplateLabel(const json::Value& job) {
  const json::Value* l = json::FindPath(job, {"metadata", "labels"});
  if (l == nullptr || !l->IsObject()) return {};
  return std::string(json::GetString(*l, api::kCreatedByJobTemplate));
}

class JobFlowController final : public Controller {
 public:
  explicit JobFlowController(const ControllerContext& ctx)
      : ctx_(ctx), clock_(ctx.clock != nullptr ? ctx.clock : Clock::Real()) {
    jobs_ = ctx.informers->InformerFor(client::VolcanoJobs());
    (void)jobs_->AddIndexers(
        {{kByTemplateIndex, informer::IndexBy<json::Document>([](const json::Document& job) {
            std::string t = TemplateLabel(job);
            return t.empty() ? std::vector<std::string>{} : std::vector<std::string>{t};
          })}});
    loop_ =
        std::make_unique<ReconcileLoop>(ReconcileLoopOptions{.name = "jobflow",
                                                             .clock = ctx.clock,
                                                             .metrics = ctx.metrics,
                                                             .queue_metrics = ctx.queue_metrics,
                                                             .max_requeues = ctx.max_requeue_num},
                                        [this](const std::string& key) { return Reconcile(key); });
    auto on_job = [this](const informer::Object& o) {
      if (!started_.load() || !o.Is<json::Document>()) return;
      std::string flow = JobFlowOwner(o.doc());
      if (!flow.empty()) loop_->Add(fmt::format("f/{}/{}", o.namespace_name(), flow));
      std::string t = TemplateLabel(o.doc());
      if (size_t dot = t.find('.'); dot != std::string::npos) {
        loop_->Add(fmt::format("t/{}/{}", t.substr(0, dot), t.substr(dot + 1)));
      }
    };
    jobs_->AddEventHandler(informer::EventHandler{
        .on_add = on_job,
        .on_update = [on_job](const informer::Object&, const informer::Object& o) { on_job(o); },
        .on_delete = [on_job](const informer::Object& o, bool) { on_job(o); }});
  }

  std::string_view Name() const override { return "jobflow"; }

  void Run(std::stop_token stop) override {
    if (!WaitForCrds(stop)) return;
    flows_ = ctx_.informers->InformerFor(client::JobFlows());
    templates_ = ctx_.informers->InformerFor(client::JobTemplates());
    auto add = [this](std::string_view prefix) {
      return informer::EventHandler{
          .on_add = [this, prefix](const informer::Object& o) { Enqueue(prefix, o); },
          .on_update = [this, prefix](const informer::Object&,
                                      const informer::Object& o) { Enqueue(prefix, o); },
          .on_delete = nullptr};
    };
    flows_->AddEventHandler(add("f"));
    templates_->AddEventHandler(add("t"));
    // The factory starts informers created after Start(); wait for their first list (woken by
    // the informers, not polled).
    while (!informer::WaitForCacheSync(stop, std::chrono::minutes(1), {flows_, templates_})) {
      if (stop.stop_requested()) break;
    }
    started_ = true;
    // Jobs listed before the flow informers existed: one pass over every flow and template.
    for (const informer::Object& o : flows_->store().List()) Enqueue("f", o);
    for (const informer::Object& o : templates_->store().List()) Enqueue("t", o);
    loop_->Run(stop, std::max(1, ctx_.workers / 4));
  }

  bool HasSynced() const override {
    if (!jobs_->HasSynced()) return false;
    if (!crds_present_.load()) return true;  // nothing to list
    return started_.load();
  }

 private:
  void Enqueue(std::string_view prefix, const informer::Object& o) {
    loop_->Add(fmt::format("{}/{}", prefix, o.key()));
  }

  // Polls for the flow.volcano.sh resources; false when stopped first.
  bool WaitForCrds(const std::stop_token& stop) {
    bool logged = false;
    while (!stop.stop_requested()) {
      client::ListOptions o;
      o.limit = 1;
      absl::Status a = ctx_.client->List(client::JobFlows(), "", o).status();
      absl::Status b = a.ok() ? ctx_.client->List(client::JobTemplates(), "", o).status() : a;
      if (a.ok() && b.ok()) {
        crds_present_ = true;
        if (logged) BASALT_LOG_INFO("flow.volcano.sh CRDs found: the jobflow controller starts");
        return true;
      }
      if (!logged) {
        BASALT_LOG_WARNING(
            "flow.volcano.sh JobFlow/JobTemplate resources are not served (CRDs not installed?): "
            "the jobflow controller waits for them",
            "error", MessageOf(a.ok() ? b : a));
        logged = true;
      }
      SleepFor(stop, kCrdRecheck, clock_);
    }
    return false;
  }

  void Event(const api::Object& obj, bool warning, std::string_view reason,
             std::string_view message) {
    if (ctx_.recorder == nullptr) return;
    ctx_.recorder->Event(obj, warning ? ctrlkit::EventType::kWarning : ctrlkit::EventType::kNormal,
                         reason, message);
  }

  ReconcileResult Reconcile(const std::string& key) {
    if (key.starts_with("f/")) return ReconcileFlow(key.substr(2));
    if (key.starts_with("t/")) return ReconcileTemplate(key.substr(2));
    return std::optional<Clock::Duration>();
  }

  ReconcileResult ReconcileFlow(const std::string& key) {
    informer::Object cached = flows_->store().Get(key);
    if (!cached || !cached.Is<json::Document>()) return std::optional<Clock::Duration>();
    absl::StatusOr<api::Object> obj = api::Object::CopyOf(cached.doc());
    if (!obj.ok()) return obj.status();
    absl::StatusOr<api::JobFlow> parsed = api::JobFlow::FromObject(*std::move(obj));
    if (!parsed.ok()) {
      BASALT_LOG_WARNING("Ignoring an undecodable JobFlow", "jobflow", key, "error",
                         MessageOf(parsed.status()));
      return std::optional<Clock::Duration>();
    }
    api::JobFlow flow = *std::move(parsed);
    if (flow.deletion_timestamp()) return std::optional<Clock::Duration>();
    const std::string ns(flow.namespace_name());

    // This flow's Jobs, by name: the cache, or the live object after an AlreadyExists.
    std::map<std::string, FlowJob> jobs;
    auto consider = [&](const json::Value& doc) {
      std::string uid;
      if (JobFlowOwner(doc, &uid) != flow.name() || uid != flow.uid()) return false;
      FlowJob j = FlowJobOf(doc);
      jobs[j.name] = std::move(j);
      return true;
    };
    for (const api::Flow& f : flow.spec().flows) {
      const std::string name = api::FlowJobName(flow.name(), f.name);
      informer::Object o = jobs_->store().Get(fmt::format("{}/{}", ns, name));
      if (o && o.Is<json::Document>()) consider(o.doc());
    }

    if (flow.spec().job_retain_policy == api::kJobRetainPolicyDelete &&
        flow.status().phase == api::kFlowPhaseSucceed) {
      absl::Status failure;
      for (const auto& [name, j] : jobs) {
        client::DeleteOptions o;
        o.propagation_policy = "Background";
        o.precondition_uid = j.uid;
        absl::Status s = ctx_.client->Delete(client::VolcanoJobs(), ns, name, o);
        if (absl::IsNotFound(s) || client::IsConflict(s)) continue;
        if (!s.ok()) {
          failure.Update(s);
          continue;
        }
        Event(flow, false, "Deleted", fmt::format("deleted job {} (jobRetainPolicy delete)", name));
      }
      if (!failure.ok()) return failure;
      return std::optional<Clock::Duration>();
    }

    absl::Status failure;
    std::optional<Clock::Duration> requeue;
    for (const std::string& tmpl : FlowsReadyToCreate(flow, jobs)) {
      absl::Status s = CreateJob(flow, tmpl, consider);
      if (absl::IsNotFound(s)) {
        requeue = std::chrono::seconds(30);  // the template may come later
        continue;
      }
      if (!s.ok()) failure.Update(s);
    }

    std::vector<FlowJob> ordered;
    for (const api::Flow& f : flow.spec().flows) {
      auto it = jobs.find(api::FlowJobName(flow.name(), f.name));
      if (it != jobs.end()) ordered.push_back(it->second);
    }
    api::JobFlowStatus status = ComputeJobFlowStatus(flow, ordered, clock_->WallNow());
    if (!(status == flow.status())) {
      flow.SetStatus(status);
      absl::StatusOr<json::Document> written =
          ctx_.client->UpdateStatus(client::JobFlows(), ns, flow.name(), flow.ToJson());
      if (!written.ok()) return written.status();
    }
    if (!failure.ok()) return failure;
    return requeue;
  }

  template <typename Consider>
  absl::Status CreateJob(const api::JobFlow& flow, const std::string& tmpl, Consider& consider) {
    const std::string ns(flow.namespace_name());
    const std::string name = api::FlowJobName(flow.name(), tmpl);
    informer::Object t = templates_->store().Get(fmt::format("{}/{}", ns, tmpl));
    if (!t || !t.Is<json::Document>()) {
      Event(flow, true, "TemplateNotFound",
            fmt::format("jobtemplate {} of flow {} not found in namespace {}", tmpl, tmpl, ns));
      return absl::NotFoundError(fmt::format("jobtemplate {}/{} not found", ns, tmpl));
    }
    json::Document job(rapidjson::kObjectType);
    json::Allocator& a = job.GetAllocator();
    json::Set(job, "apiVersion", json::MakeString(api::kBatchApiVersion, a), a);
    json::Set(job, "kind", json::MakeString("Job", a), a);
    json::Value meta(rapidjson::kObjectType);
    json::Set(meta, "name", json::MakeString(name, a), a);
    json::Set(meta, "namespace", json::MakeString(ns, a), a);
    const std::string by = api::TemplateString(ns, tmpl);
    for (const char* field : {"labels", "annotations"}) {
      json::Value m(rapidjson::kObjectType);
      json::Set(m, api::kCreatedByJobTemplate, json::MakeString(by, a), a);
      json::Set(meta, field, std::move(m), a);
    }
    json::Value refs(rapidjson::kArrayType);
    refs.PushBack(
        api::EncodeOwnerReference(
            api::ControllerRef(api::kFlowApiVersion, api::kJobFlowKind, flow.name(), flow.uid()),
            a),
        a);
    json::Set(meta, "ownerReferences", std::move(refs), a);
    json::Set(job, "metadata", std::move(meta), a);
    const json::Value* spec = json::Find(t.doc(), "spec");
    json::Set(job, "spec",
              spec != nullptr && spec->IsObject() ? json::Value(*spec, a)
                                                  : json::Value(rapidjson::kObjectType),
              a);
    absl::StatusOr<json::Document> created =
        ctx_.client->Create(client::VolcanoJobs(), ns, json::Serialize(job));
    if (created.ok()) {
      consider(*created);
      Event(flow, false, "Created", fmt::format("create a job named {}!", name));
      return absl::OkStatus();
    }
    if (absl::IsAlreadyExists(created.status())) {
      // Made before a restart (the cache has not shown it yet), or someone else's Job.
      absl::StatusOr<json::Document> live = ctx_.client->Get(client::VolcanoJobs(), ns, name);
      if (!live.ok()) return live.status();
      if (!consider(*live)) {
        Event(flow, true, "FailedCreate",
              fmt::format("job {} exists and is not controlled by this jobflow", name));
      }
      return absl::OkStatus();
    }
    Event(flow, true, "FailedCreate",
          fmt::format("Error creating job {}: {}", name, MessageOf(created.status())));
    return created.status();
  }

  ReconcileResult ReconcileTemplate(const std::string& key) {
    informer::Object cached = templates_->store().Get(key);
    if (!cached || !cached.Is<json::Document>()) return std::optional<Clock::Duration>();
    absl::StatusOr<api::Object> obj = api::Object::CopyOf(cached.doc());
    if (!obj.ok()) return obj.status();
    absl::StatusOr<api::JobTemplate> parsed = api::JobTemplate::FromObject(*std::move(obj));
    if (!parsed.ok()) return std::optional<Clock::Duration>();
    api::JobTemplate jt = *std::move(parsed);
    if (jt.deletion_timestamp()) return std::optional<Clock::Duration>();
    std::vector<std::string> names;
    absl::StatusOr<std::vector<informer::Object>> made = jobs_->store().ByIndex(
        kByTemplateIndex, api::TemplateString(jt.namespace_name(), jt.name()));
    if (made.ok()) {
      for (const informer::Object& o : *made) {
        if (o.namespace_name() == jt.namespace_name()) names.push_back(std::string(o.name()));
      }
    }
    std::sort(names.begin(), names.end());
    // As Volcano: a template no Job was made from keeps its status.
    if (names.empty() || names == jt.job_depends_on_list()) {
      return std::optional<Clock::Duration>();
    }
    jt.SetJobDependsOnList(names);
    absl::StatusOr<json::Document> written = ctx_.client->UpdateStatus(
        client::JobTemplates(), jt.namespace_name(), jt.name(), jt.ToJson());
    if (!written.ok()) return written.status();
    return std::optional<Clock::Duration>();
  }

  ControllerContext ctx_;
  Clock* clock_;
  informer::SharedInformer* jobs_ = nullptr;
  informer::SharedInformer* flows_ = nullptr;
  informer::SharedInformer* templates_ = nullptr;
  std::unique_ptr<ReconcileLoop> loop_;
  std::atomic<bool> crds_present_{false};
  std::atomic<bool> started_{false};
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewJobFlowController(const ControllerContext& ctx) {
  return std::make_unique<JobFlowController>(ctx);
}

}  // namespace basalt::controllers
