#pragma once
// JobStatusWriter writes a Job's status through the status subresource. The controller is the
// only writer of the status, so a conflict means the spec or metadata moved (or the cache
// lagged): the status is put on the current object and written again, a few times.
//
// DecodeJob is how the job controller decodes a Job document, once per reconcile and once per
// object read back: only the spec can fail to decode in ways the CRD schema does not catch.
//
// Thread-safe (the client is); knows nothing of the reconciler.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/client/client.h"
#include "common/util/json.h"

namespace basalt::controllers {

// The Job in `doc`. When its spec does not decode (e.g. a policy timeout that is not a Go
// duration), `spec_problem` says why ("spec: policies[0].timeout: ...") and the Job is decoded
// without its spec, the rest of it (metadata, status) being still usable.
absl::StatusOr<api::Job> DecodeJob(const json::Value& doc, std::string* spec_problem);

// What the reconciler asks of status writes (JobStatusWriter does it against the API server;
// tests fake it).
class JobStatusWriterInterface {
 public:
  struct Written {
    // The Job as written: `job` with `status` at the resourceVersion the API server gave it
    // (or the current object with `status`, after a conflict).
    api::Job job;
    // The API server's answer.
    std::shared_ptr<const json::Document> doc;
  };
  virtual ~JobStatusWriterInterface() = default;
  virtual absl::StatusOr<Written> Write(const api::Job& job, const api::JobStatus& status) = 0;
};

class JobStatusWriter : public JobStatusWriterInterface {
 public:
  // Conflicts retried after the first attempt.
  static constexpr int kConflictRetries = 4;

  // Borrows `client`.
  explicit JobStatusWriter(client::Client* client) : client_(client) {}

  // Writes `status` on `job`. kNotFound when the Job was replaced by another of the same name.
  absl::StatusOr<Written> Write(const api::Job& job, const api::JobStatus& status) override;

 private:
  client::Client* const client_;
};

}  // namespace basalt::controllers
