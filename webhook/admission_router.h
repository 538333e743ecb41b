#pragma once
// NewAdmissionRouter: the one place that lists Basalt's admission endpoints and wires each
// to its handler.
//
//   /jobs/mutate        JobMutator        (CREATE)
//   /jobs/validate      JobValidator      (CREATE, UPDATE)
//   /cronjobs/validate  CronJobValidator  (CREATE, UPDATE)
//   /queues/mutate      QueueMutator      (CREATE)
//   /queues/validate    QueueValidator    (CREATE, UPDATE, DELETE)
//   /podgroups/mutate   PodGroupMutator   (CREATE)
//   /podgroups/validate PodGroupValidator (CREATE)
//   /pods/validate      PodValidator      (CREATE)
//
// Each path admits one kind; other kinds are denied as a configuration error and subresource
// requests (jobs/status) are allowed untouched (see Router::Register).
//
// The HTTP layer calls router->Serve(request_target, request_body) for each POST and writes
// the HttpReply back (status, Content-Type, body); it owns TLS, the POST method and
// Content-Type: application/json checks, and the body size cap (read at most
// kMaxAdmissionReviewBytes + 1 bytes, Serve answers 413 beyond the limit).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "webhook/jobs/validate_job.h"
#include "webhook/lister.h"
#include "webhook/router.h"

namespace basalt::webhook {

struct AdmissionOptions {
  // --scheduler-name: the first is the default for Job spec.schedulerName; pods validated by
  // /pods/validate are those whose schedulerName is one of these.
  std::vector<std::string> scheduler_names = {"volcano"};
  // --max-queue-depth: maximum depth of the queue hierarchy (root is depth 1).
  int max_queue_depth = 5;
  // --enable-root-queue-protection: the `root` queue's capability/deserved/guarantee are
  // immutable.
  bool root_queue_protection = true;
  // --max-job-pods: most replicas of one Job task, and of all its tasks together.
  int64_t max_job_pods = kDefaultMaxJobPods;
};

struct AdmissionDeps {
  // Required; not owned; must outlive the router. Called concurrently.
  const ClusterLister* lister = nullptr;
  AdmissionOptions options;
};

// Builds the router with every Basalt admission handler registered. Aborts if deps.lister is
// null (a wiring bug).
std::unique_ptr<Router> NewAdmissionRouter(const AdmissionDeps& deps);

}  // namespace basalt::webhook
