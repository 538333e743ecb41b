#pragma once
// Building blocks shared by the admission handlers: Kubernetes-style field paths
// ("spec.tasks[1].minAvailable"), an error list that turns into one denial message, and the
// name rules of Kubernetes (DNS-1123 label and subdomain, qualified name).
//
// All types are plain values; not thread-safe for concurrent mutation.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/field_reader.h"
#include "common/resource/quantity.h"
#include "common/util/json.h"
#include "webhook/admission_review.h"
#include "webhook/lister.h"

namespace basalt::webhook {

// A path to a field of the object under review, printed the way kubectl users read them:
// `spec.tasks[1].minAvailable`, `spec.capability[nvidia.com/gpu]`.
class FieldPath {
 public:
  FieldPath() = default;
  explicit FieldPath(std::string_view root) : path_(root) {}

  // `spec` -> `spec.tasks`.
  FieldPath Child(std::string_view name) const;
  // `spec.tasks` -> `spec.tasks[1]`.
  FieldPath Index(size_t i) const;
  // `spec.capability` -> `spec.capability[cpu]` (map keys).
  FieldPath Key(std::string_view key) const;

  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// Why a request is refused; decides the HTTP code reported to the client.
enum class ErrorKind {
  kInvalid,    // the object itself is wrong: 422 Invalid
  kForbidden,  // the object is fine but the cluster state refuses it: 403 Forbidden
  kInternal,   // the webhook could not decide (lookup failed): 500 InternalError
};

struct FieldError {
  std::string path;  // may be empty for whole-object errors
  std::string message;
  ErrorKind kind = ErrorKind::kInvalid;

  // "spec.tasks[1].minAvailable: <message>" (or just the message without a path).
  std::string ToString() const;
};

// Collects every problem of one request so the user sees all of them at once.
class ErrorList {
 public:
  void Invalid(const FieldPath& path, std::string message);
  void Forbidden(const FieldPath& path, std::string message);
  void Internal(const FieldPath& path, std::string message);

  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<FieldError>& errors() const { return errors_; }

  // All errors joined with "; ", in the order they were found.
  std::string Message() const;

  // Allow() when empty; otherwise a denial carrying Message(). The code is 500 if any error
  // is internal, else 403 if any is forbidden, else 422.
  AdmissionResponse ToResponse() const;

 private:
  std::vector<FieldError> errors_;
};

// Kubernetes name rules (k8s.io/apimachinery/pkg/util/validation).
// DNS-1123 label: at most 63 characters of [a-z0-9-], starting and ending alphanumeric.
bool IsDns1123Label(std::string_view name);
// DNS-1123 subdomain: at most 253 characters, dot-separated DNS-1123 labels.
bool IsDns1123Subdomain(std::string_view name);
// Qualified name: optional DNS-1123 subdomain prefix and '/', then at most 63 characters of
// [A-Za-z0-9_.-], starting and ending alphanumeric.
bool IsQualifiedName(std::string_view name);

// The reasons a value is not a qualified name, in Kubernetes' wording; empty when valid.
std::vector<std::string> QualifiedNameErrors(std::string_view name);

// Label values (k8s.io/apimachinery IsValidLabelValue): empty, or at most 63 characters of
// [A-Za-z0-9_.-] starting and ending alphanumeric. The reasons in Kubernetes' wording; empty
// when valid.
std::vector<std::string> LabelValueErrors(std::string_view value);

// Kubernetes' limit on the annotations of one object, keys plus values in bytes
// (apimachinery's TotalAnnotationSizeLimitB).
inline constexpr int64_t kTotalAnnotationSizeLimitBytes = 256 * 1024;

// Checks `metadata.labels` and `metadata.annotations` of `metadata` (an object's or a pod
// template's) as the API server will when the object is created: label keys are qualified
// names and values valid label values, annotation keys are qualified names (case-insensitive)
// and the annotations take at most `annotation_limit` bytes. Errors read as Kubernetes' do,
// under `path`:
//   spec.tasks[0].template.metadata.labels: Invalid value: "a b": name part must consist of ...
//   spec.tasks[0].template.metadata.annotations: Too long: must have at most 262144 bytes
// `limit_note`, when not empty, is appended to the Too long message in parentheses. Absent or
// null maps are fine; values that are not strings are left to the API server's schema check.
// `metadata` is a reader over the metadata object (its value() null when absent or not an
// object: nothing to check).
void ValidateLabelsAndAnnotations(api::FieldReader& metadata, const FieldPath& path,
                                  int64_t annotation_limit, std::string_view limit_note,
                                  ErrorList& errors);
void ValidateLabelsAndAnnotations(const json::Value* metadata, const FieldPath& path,
                                  int64_t annotation_limit, std::string_view limit_note,
                                  ErrorList& errors);

// Sums and products of counts read from untrusted objects (replicas, partitions), clamped to
// the int64 range instead of overflowing: an AdmissionReview sent straight to the webhook is
// not bounded by the CRD's int32 schema.
int64_t SaturatingAdd(int64_t a, int64_t b);
int64_t SaturatingMul(int64_t a, int64_t b);

// Reads a ResourceList (resource name -> quantity, as string or number) found at `path`.
// Invalid quantities are reported with the parser's message ("invalid quantity \"x\": ...")
// and negative ones as "must be greater than or equal to 0" (Kubernetes' wording); valid ones
// are returned.
// Absent or null lists give an empty map.
std::map<std::string, resource::Quantity> ReadResourceList(const json::Value* list,
                                                           const FieldPath& path,
                                                           ErrorList& errors);

// networkTopology (Job, PodGroup, subGroupPolicy): highestTierAllowed and highestTierName
// are mutually exclusive. NetworkTopologyConflicts says whether ValidateNetworkTopology would
// refuse it (so callers build the path only then).
bool NetworkTopologyConflicts(const json::Value* network_topology);
void ValidateNetworkTopology(const json::Value* network_topology, const FieldPath& path,
                             ErrorList& errors);

// The queue a Job, PodGroup, CronJob's job template or JobFlow's template is submitted to,
// looked up once for every handler. `what` names the queue in messages ("job queue" for
// Jobs, "queue" for PodGroups). A queue that does not exist is refused under `path` as
// `unable to find <what>: queues.scheduling.volcano.sh "<name>" not found` (403), a failed
// lookup as `unable to look up <what> "<name>": <reason>` (500); both return nullopt. The
// caller checks state, root and leaf with its own wording.
std::optional<QueueInfo> LookUpQueue(std::string_view queue_name, std::string_view what,
                                     const FieldPath& path, const ClusterLister& lister,
                                     ErrorList& errors);

// Joins strings as "[a b c]" (how Volcano prints lists in its messages).
std::string BracketList(const std::vector<std::string>& items);

}  // namespace basalt::webhook
