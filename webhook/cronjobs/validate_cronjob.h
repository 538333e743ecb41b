#pragma once
// CronJobValidator (/cronjobs/validate): admission rules for batch.volcano.sh/v1alpha1
// CronJobs, on CREATE and UPDATE. Each message starts with the field path:
//   - metadata.name at most 52 characters (the Jobs are named "<name>-<minutes>" and their
//     pods carry the Job name in 63-character label values; Kubernetes' CronJob rule);
//   - spec.schedule: present and valid (five fields, a descriptor or @every; see
//     controllers/cronjob/schedule.h), and firing at least once in the next 5 years; no TZ=
//     prefix;
//   - spec.timeZone: a time zone of the IANA database;
//   - spec.concurrencyPolicy: Allow, Forbid or Replace;
//   - spec.startingDeadlineSeconds, successfulJobsHistoryLimit, failedJobsHistoryLimit >= 0;
//   - spec.jobTemplate: present; its spec, defaulted as the Job webhook would, passes every
//     CREATE rule of the Job webhook (webhook/jobs), reported under spec.jobTemplate.spec, so
//     a CronJob never creates Jobs that would all be refused.
// Thread-safe if the lister is.

#include "webhook/jobs/validate_job.h"
#include "webhook/lister.h"
#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

inline constexpr size_t kMaxCronJobNameLength = 52;

ErrorList ValidateCronJob(const json::Value& cron_job, const ClusterLister& lister,
                          std::string_view scheduler_name, const JobLimits& limits = {});

class CronJobValidator : public AdmissionHandler {
 public:
  CronJobValidator(const ClusterLister& lister, std::string scheduler_name, JobLimits limits)
      : lister_(lister), scheduler_name_(std::move(scheduler_name)), limits_(limits) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;

 private:
  const ClusterLister& lister_;
  const std::string scheduler_name_;
  const JobLimits limits_;
};

}  // namespace basalt::webhook
