#include "controllers/job/controller/job_status_writer.h"

#include <string_view>
#include <utility>

#include "common/api/views.h"
#include "common/client/errors.h"
#include "common/client/resource.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {

absl::StatusOr<api::Job> DecodeJob(const json::Value& doc, std::string* spec_problem) {
  BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::CopyOf(doc));
  const std::string described = fmt::format("Job {}/{}: ", obj.namespace_name(), obj.name());
  absl::StatusOr<api::Job> job = api::Job::FromObject(std::move(obj));
  if (job.ok() || json::Find(doc, "spec") == nullptr) return job;
  std::string_view message = MessageOf(job.status());
  if (message.substr(0, described.size()) == described) message.remove_prefix(described.size());
  if (message.substr(0, 5) == "spec.") message.remove_prefix(5);
  *spec_problem = fmt::format("spec: {}", message);
  BASALT_ASSIGN_OR_RETURN(api::Object without_spec, api::Object::CopyOf(doc));
  json::Remove(without_spec.mutable_doc(), "spec");
  return api::Job::FromObject(std::move(without_spec));
}

absl::StatusOr<JobStatusWriter::Written> JobStatusWriter::Write(const api::Job& job,
                                                                const api::JobStatus& status) {
  api::Job target = job;
  absl::StatusOr<json::Document> written;
  for (int attempt = 0;; ++attempt) {
    target.SetStatus(status);
    written = client_->UpdateStatus(client::VolcanoJobs(), target.namespace_name(), target.name(),
                                    target.ToJson());
    if (written.ok() || !client::IsConflict(written.status()) || attempt >= kConflictRetries) {
      break;
    }
    BASALT_ASSIGN_OR_RETURN(json::Document fresh,
                            client_->Get(client::VolcanoJobs(), job.namespace_name(), job.name()));
    std::string spec_problem;
    BASALT_ASSIGN_OR_RETURN(target, DecodeJob(fresh, &spec_problem));
    if (target.uid() != job.uid()) return absl::NotFoundError("the job was replaced");
  }
  if (!written.ok()) return written.status();
  auto doc = std::make_shared<json::Document>(std::move(*written));
  if (std::string_view rv = api::view::ResourceVersion(*doc); !rv.empty()) {
    target.SetResourceVersion(rv);
  }
  return Written{std::move(target), std::move(doc)};
}

}  // namespace basalt::controllers
