#include "controllers/job/controller/job_controller.h"

#include <string>
#include <vector>

#include "common/api/batch.h"
#include "common/api/views.h"
#include "common/api/vocabulary.h"
#include "common/client/resource.h"
#include "common/informer/shared_informer.h"
#include "common/util/log.h"
#include "controllers/job/controller/job_reconciler.h"
#include "controllers/job/requests/requests.h"
#include "controllers/job/status/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

// The Job a PodGroup belongs to: its controller owner of kind Job, else its own name.
std::string JobNameOfPodGroup(const json::Value& pg) {
  return std::string(api::view::ControllerName(pg, api::kJobKind).value_or(api::view::Name(pg)));
}

class JobController final : public Controller {
 public:
  explicit JobController(const ControllerContext& ctx) : ctx_(ctx) {
    auto* f = ctx.informers;
    jobs_ = f->InformerFor(client::VolcanoJobs());
    pods_ = SharedPodInformer(*f, {{kPodsByJobIndex, PodsByJobIndexFunc()}});
    pod_groups_ = f->InformerFor(client::PodGroups());
    commands_ = f->InformerFor(client::Commands());
    priority_classes_ = f->InformerFor(client::PriorityClasses());
    queues_ = f->InformerFor(client::Queues());
    if (ctx.metrics_registry != nullptr) {
      metrics_ = std::make_unique<JobMetrics>(*ctx.metrics_registry);
    }
    reconciler_ = std::make_unique<JobReconciler>(
        ctx.client,
        JobListers{&jobs_->store(), &pods_->store(), &pod_groups_->store(),
                   &priority_classes_->store(), &queues_->store()},
        JobReconcilerOptions{.clock = ctx.clock,
                             .recorder = ctx.recorder,
                             .max_job_pods = ctx.max_job_pods,
                             .metrics = metrics_.get()});
    const int max_requeues = ctx.max_requeue_num;
    loop_ = std::make_unique<ReconcileLoop>(
        ReconcileLoopOptions{
            .name = "job",
            .clock = ctx.clock,
            .metrics = ctx.metrics,
            .queue_metrics = ctx.queue_metrics,
            .max_requeues = max_requeues,
            .on_drop =
                [this, max_requeues](const std::string& key, const absl::Status& s) {
                  reconciler_->RetriesExhausted(key, max_requeues, s);
                }},
        [this](const std::string& key) { return reconciler_->Reconcile(key); });
    AddHandlers();
  }

  std::string_view Name() const override { return "job"; }
  void Run(std::stop_token stop) override { loop_->Run(stop, ctx_.workers); }
  bool HasSynced() const override {
    return jobs_->HasSynced() && pods_->HasSynced() && pod_groups_->HasSynced() &&
           commands_->HasSynced() && priority_classes_->HasSynced() && queues_->HasSynced();
  }

 private:
  void Request(const std::string& key, QueuedRequest r) {
    reconciler_->AddRequest(key, std::move(r));
    loop_->Add(key);
  }
  void PodRequest(const JobPodInfo& pod, JobRequest r) {
    QueuedRequest q;
    q.request = std::move(r);
    q.pod_uid = pod.uid;
    q.partition = pod.partition;
    Request(fmt::format("{}/{}", pod.namespace_name, pod.job_name), std::move(q));
  }
  static QueuedRequest Sync() {
    QueuedRequest q;
    q.request.event = Event::kOutOfSync;
    return q;
  }

  // The TaskFailed / TaskCompleted inputs of a pod update: the task's pods in the cache. Runs
  // on the informer thread for every pod update, so it reads only the task's counts from the
  // cached Job instead of decoding the Job (and copying every pod template).
  TaskProgress ProgressFor(const JobPodInfo& pod) {
    TaskProgress none;
    informer::Object job =
        jobs_->store().Get(fmt::format("{}/{}", pod.namespace_name, pod.job_name));
    if (!job) return none;
    std::optional<api::TaskReplicaCounts> task = api::FindTaskReplicaCounts(job.doc(), pod.task);
    if (!task.has_value()) return none;
    std::vector<JobPodInfo> task_pods;
    absl::StatusOr<std::vector<informer::Object>> objs = pods_->store().ByIndex(
        kPodsByJobIndex, fmt::format("{}/{}", pod.namespace_name, pod.job_name));
    if (objs.ok()) {
      for (const informer::Object& o : *objs) {
        std::optional<JobPodInfo> p = ReadJobPod(o.doc());
        if (p && p->task == pod.task && p->job_uid == pod.job_uid) task_pods.push_back(*p);
      }
    }
    return ProgressOf(task->replicas, task->max_retry, task_pods);
  }

  void AddHandlers() {
    jobs_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { Request(o.key(), Sync()); },
        .on_update =
            [this](const informer::Object& old_obj, const informer::Object& new_obj) {
              if (JobUpdateNeedsSync(old_obj.doc(), new_obj.doc())) Request(new_obj.key(), Sync());
            },
        .on_delete = [this](const informer::Object& o, bool) { loop_->Add(o.key()); }});

    pods_->AddEventHandler(informer::EventHandler{
        .on_add =
            [this](const informer::Object& o) {
              if (auto pod = ReadJobPod(o.doc())) PodRequest(*pod, RequestForPodAdd(*pod));
            },
        .on_update =
            [this](const informer::Object& old_obj, const informer::Object& new_obj) {
              if (old_obj.resource_version() == new_obj.resource_version()) return;
              auto new_pod = ReadJobPod(new_obj.doc());
              if (!new_pod) return;
              auto old_pod = ReadJobPod(old_obj.doc());
              if (!old_pod) old_pod = new_pod;
              PodRequest(*new_pod, RequestForPodUpdate(*old_pod, *new_pod, ProgressFor(*new_pod)));
            },
        .on_delete =
            [this](const informer::Object& o, bool) {
              auto pod = ReadJobPod(o.doc());
              if (!pod) return;
              // Decision 10: pods this controller deleted never count as evicted.
              const bool own = pod->out_of_sync || reconciler_->DeletedByController(pod->uid);
              PodRequest(*pod, RequestForPodDelete(*pod, /*in_cache=*/!own));
            }});

    auto pg_request = [this](const informer::Object& o) {
      QueuedRequest q = Sync();
      q.request.event = Event::kNone;
      Request(fmt::format("{}/{}", o.namespace_name(), JobNameOfPodGroup(o.doc())), std::move(q));
    };
    pod_groups_->AddEventHandler(informer::EventHandler{
        .on_add = pg_request,
        .on_update =
            [this](const informer::Object& old_obj, const informer::Object& new_obj) {
              std::optional<JobRequest> r = RequestForPodGroupUpdate(
                  api::view::PodGroupPhase(old_obj.doc()), api::view::PodGroupPhase(new_obj.doc()));
              if (!r) {
                // A new scheduler condition: the job's PodGroupPending event says why it waits.
                if (api::view::SamePodGroupConditions(old_obj.doc(), new_obj.doc())) return;
                r = JobRequest{};
              }
              QueuedRequest q;
              q.request = *r;
              Request(
                  fmt::format("{}/{}", new_obj.namespace_name(), JobNameOfPodGroup(new_obj.doc())),
                  std::move(q));
            },
        .on_delete = [pg_request](const informer::Object& o, bool) { pg_request(o); }});

    // A Queue created after jobs that name it: those jobs were waiting (QueueNotFound), and
    // may have been dropped from the work queue after their retries.
    queues_->AddEventHandler(informer::EventHandler{
        .on_add =
            [this](const informer::Object& q) {
              for (const informer::Object& j : jobs_->store().List()) {
                const std::string_view queue = api::view::JobQueue(j.doc());
                const std::string_view phase = api::view::JobPhase(j.doc());
                if (queue == q.name() && (phase.empty() || phase == "Pending")) {
                  Request(j.key(), Sync());
                }
              }
            },
        .on_update = nullptr,
        .on_delete = nullptr});

    commands_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { OnCommand(o); },
        .on_update = [this](const informer::Object&, const informer::Object& o) { OnCommand(o); },
        .on_delete = nullptr});
  }

  void OnCommand(const informer::Object& o) {
    const api::view::CommandTarget target = api::view::CommandTargetOf(o.doc());
    if (!target.present || target.kind != api::kJobKind) return;
    const std::string_view api_version = target.api_version;
    if (!api_version.empty() && api_version.substr(0, api_version.find('/')) != api::kBatchGroup) {
      return;
    }
    QueuedRequest q;
    q.request = RequestForCommand(api::view::CommandAction(o.doc()));
    q.request.job_uid = std::string(target.uid);
    q.command_namespace = std::string(o.namespace_name());
    q.command_name = std::string(o.name());
    q.command_uid = std::string(api::view::Uid(o.doc()));
    BASALT_LOG_INFO("Command issued", "command", o.key(), "action", *q.request.action, "job",
                    target.name);
    Request(fmt::format("{}/{}", o.namespace_name(), target.name), std::move(q));
  }

  const ControllerContext ctx_;
  informer::SharedInformer* jobs_;
  informer::SharedInformer* pods_;
  informer::SharedInformer* pod_groups_;
  informer::SharedInformer* commands_;
  informer::SharedInformer* priority_classes_;
  informer::SharedInformer* queues_;
  std::unique_ptr<JobMetrics> metrics_;  // null without a registry; outlives reconciler_
  std::unique_ptr<JobReconciler> reconciler_;
  std::unique_ptr<ReconcileLoop> loop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewJobController(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new JobController(ctx));
}

}  // namespace basalt::controllers
