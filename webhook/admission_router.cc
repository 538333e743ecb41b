#include "webhook/admission_router.h"

#include <cstdlib>

#include "common/util/log.h"
#include "webhook/cronjobs/validate_cronjob.h"
#include "webhook/jobflows/validate_jobflow.h"
#include "webhook/jobs/mutate_job.h"
#include "webhook/jobs/validate_job.h"
#include "webhook/podgroups/mutate_podgroup.h"
#include "webhook/podgroups/validate_podgroup.h"
#include "webhook/pods/validate_pod.h"
#include "webhook/queues/mutate_queue.h"
#include "webhook/queues/validate_queue.h"

namespace basalt::webhook {

std::unique_ptr<Router> NewAdmissionRouter(const AdmissionDeps& deps) {
  if (deps.lister == nullptr) {
    BASALT_LOG_ERROR("NewAdmissionRouter: AdmissionDeps.lister is null (wiring bug)");
    std::abort();
  }
  const ClusterLister& lister = *deps.lister;
  const AdmissionOptions& options = deps.options;
  std::string scheduler_name =
      options.scheduler_names.empty() ? std::string("volcano") : options.scheduler_names.front();

  auto router = std::make_unique<Router>();
  router->Register("/jobs/mutate", "Job", std::make_unique<JobMutator>(scheduler_name));
  router->Register(
      "/jobs/validate", "Job",
      std::make_unique<JobValidator>(lister, JobLimits{.max_pods = options.max_job_pods}));
  router->Register("/cronjobs/validate", "CronJob",
                   std::make_unique<CronJobValidator>(lister, scheduler_name,
                                                      JobLimits{.max_pods = options.max_job_pods}));
  router->Register("/jobflows/validate", "JobFlow", std::make_unique<JobFlowValidator>());
  router->Register("/queues/mutate", "Queue", std::make_unique<QueueMutator>());
  router->Register("/queues/validate", "Queue", std::make_unique<QueueValidator>(lister, options));
  router->Register("/podgroups/mutate", "PodGroup", std::make_unique<PodGroupMutator>(lister));
  router->Register("/podgroups/validate", "PodGroup", std::make_unique<PodGroupValidator>(lister));
  router->Register("/pods/validate", "Pod",
                   std::make_unique<PodValidator>(options.scheduler_names));
  return router;
}

}  // namespace basalt::webhook
