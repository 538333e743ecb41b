#pragma once
// Controller is one reconcile loop of vc-controller-manager (job, queue, podgroup, gc, cronjob): it
// registers the informers and handlers it needs on the process's shared informer factory when
// it is created, and runs its workers in Run() until stopped. NewControllerRegistry() lists
// them by the names --controllers accepts.
//
// Thread-safety: Run() once, from one thread; HasSynced() from any thread. Ownership: a
// controller borrows everything in the ControllerContext, which must outlive it.

#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/client.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/ctrlkit/work_queue_metrics.h"
#include "common/informer/informer_factory.h"
#include "common/util/clock.h"
#include "controllers/app/reconcile_loop.h"

namespace basalt::controllers {

struct ControllerContext {
  client::Client* client = nullptr;
  informer::SharedInformerFactory* informers = nullptr;
  ctrlkit::EventRecorder* recorder = nullptr;  // may be null (tests)
  ReconcileMetrics* metrics = nullptr;         // may be null
  ctrlkit::WorkQueueMetrics* queue_metrics = nullptr;
  // Where controllers register their own series (Volcano's volcano_* names); may be null.
  prometheus::Registry* metrics_registry = nullptr;
  Clock* clock = nullptr;  // nullptr: Clock::Real()
  int workers = 8;
  // --max-requeue-num: rate-limited retries of a failing job key before it is dropped until
  // the next event (-1 = unlimited). Volcano's default.
  int max_requeue_num = 15;
  // --max-job-pods: the job controller creates no pods for a Job with more in total (it gets
  // an InvalidJobSpec Warning instead); see kDefaultMaxJobPods.
  int64_t max_job_pods = 100000;
  // Pods of these schedulers get a PodGroup from the podgroup controller.
  std::vector<std::string> scheduler_names = {"volcano"};
  // --bare-pod-podgroups: the podgroup controller also makes a PodGroup for bare pods (no
  // controller owner) that declare no gang (no scheduling.volcano.sh/group-min-member
  // annotation), as Volcano does. false: it leaves them alone; the scheduler places them
  // through a shadow job of its cache (scheduler/cache/cluster_state.h).
  bool bare_pod_podgroups = true;
  // --hypernode-discovery-config: Volcano's volcano-controller.conf with the
  // networkTopologyDiscovery section (hypernode controller); empty: no discovery.
  std::string hypernode_discovery_config;
};

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string_view Name() const = 0;
  // Runs the workers until `stop` fires; returns after they have finished.
  virtual void Run(std::stop_token stop) = 0;
  // The informers this controller reads have listed once.
  virtual bool HasSynced() const = 0;
};

using ControllerFactory =
    std::function<absl::StatusOr<std::unique_ptr<Controller>>(const ControllerContext& ctx)>;

// "cronjob", "gc", "hypernode", "job", "podgroup", "queue" -> factory (explicit registry, no static
// registration).
std::map<std::string, ControllerFactory, std::less<>> NewControllerRegistry();

// Resolves --controllers: every name must be in `known`; "*" or an empty list means all.
// Returns the sorted, de-duplicated set; kInvalidArgument names an unknown controller.
absl::StatusOr<std::vector<std::string>> ResolveControllers(
    const std::vector<std::string>& requested, const std::vector<std::string>& known);

// The Lease name for a set of controllers: "vc-controller-manager-<names joined by '-'>", so
// processes running different sets do not compete for one Lease.
std::string LeaseNameFor(const std::vector<std::string>& controllers);

// What the controllers keep of a pod in their cache: metadata without managedFields;
// spec.schedulerName, priorityClassName, nodeName, overhead and the containers' and init
// containers' names and resources; status.phase, the PodScheduled condition's type and status,
// and the container statuses' ready, restartCount and terminated exit code. A whole pod document is
// several times larger, and 10,000 of them made most of the process's memory.
json::Document TrimPodForControllers(const json::Value& pod);
// Informer transform: pod document -> TrimPodForControllers document (name "controller-pod").
informer::Transform ControllerPodTransform();

// The pods informer every controller of the process shares (TrimPodForControllers
// documents), indexed by job with `job_index` (see JobReconciler).
informer::SharedInformer* SharedPodInformer(informer::SharedInformerFactory& factory,
                                            informer::Indexers job_index);

// Runs fn(i) for i in [0, n) on up to `concurrency` threads (the calling thread included).
void ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn);

}  // namespace basalt::controllers
