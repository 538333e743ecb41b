#include "controllers/app/controller.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/hypernode/hypernode_controller.h"
#include "controllers/job/controller/job_controller.h"
#include "controllers/jobflow/jobflow_controller.h"
#include "controllers/podgroup/podgroup_controller.h"
#include "controllers/queue/queue_controller.h"

namespace basalt::controllers {

std::map<std::string, ControllerFactory, std::less<>> NewControllerRegistry() {
  return {
      {"cronjob", NewCronJobController},     {"gc", NewGarbageCollector},
      {"hypernode", NewHyperNodeController}, {"job", NewJobController},
      {"jobflow", NewJobFlowController},     {"podgroup", NewPodGroupController},
      {"queue", NewQueueController},
  };
}

}  // namespace basalt::controllers
