#include "webhook/jobs/validate_job.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/api/batch.h"
#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "webhook/jobs/policies.h"
#include "webhook/jobs/task_topology.h"
#include "webhook/pods/gpu_attributes.h"

namespace basalt::webhook {
namespace {

constexpr std::string_view kImmutableSpecMessage =
    "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under "
    "spec` and `PriorityClassName`";
constexpr size_t kMaxReportedChanges = 8;

const std::vector<std::string>& TopologyPolicies() {
  static const auto* policies =
      new std::vector<std::string>{"none", "best-effort", "restricted", "single-numa-node"};
  return *policies;
}

std::string_view JobName(api::FieldReader& job) { return job.Child("metadata").View("name"); }

// Value of a Go-style flag (`--name=v`, `-name=v`, `--name v`) in the argument list of
// spec.plugins[plugin] (an argument that is not a string reads as "").
std::optional<std::string> FlagValue(api::FieldReader& plugins, std::string_view plugin,
                                     std::string_view flag) {
  std::vector<std::string_view> args;
  plugins.ForEachString(plugin, [&](std::optional<std::string_view> arg, size_t) {
    args.push_back(arg.value_or(std::string_view()));
  });
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.empty() || arg.front() != '-') continue;
    arg.remove_prefix(arg.size() > 1 && arg[1] == '-' ? 2 : 1);
    size_t eq = arg.find('=');
    if (eq != std::string_view::npos) {
      if (arg.substr(0, eq) == flag) return std::string(arg.substr(eq + 1));
    } else if (arg == flag && i + 1 < args.size()) {
      return std::string(args[i + 1]);
    }
  }
  return std::nullopt;
}

// spec.tasks[i].replicas as a number the sums can use: an integer beyond int64 (a review sent
// straight to the webhook is not bounded by the CRD schema) counts as the largest int64.
int64_t TaskReplicas(const api::FieldReader& task) {
  const json::Value* v = task.Member("replicas");
  if (v == nullptr || !v->IsNumber()) return 0;
  if (v->IsInt64()) return v->GetInt64();
  return v->GetDouble() > 0 ? std::numeric_limits<int64_t>::max() : -1;
}

std::string MaxJobPodsMessage(std::string_view value, const JobLimits& limits) {
  return fmt::format("Invalid value: {}: must be no more than {} (the webhook's --max-job-pods)",
                     value, limits.max_pods);
}

// Rules on counts shared by CREATE and UPDATE for one task. Returns whether replicas is within
// --max-job-pods.
bool ValidateTaskCounts(api::FieldReader& task, const FieldPath& tp, std::string_view job_name,
                        const JobLimits& limits, ErrorList& errors) {
  std::string_view name = task.View("name");
  int64_t replicas = TaskReplicas(task);
  bool within_limit = true;
  if (replicas < 0) {
    errors.Invalid(tp.Child("replicas"),
                   fmt::format("'replicas' < 0 in task: {}, job: {}", name, job_name));
  } else if (replicas > limits.max_pods) {
    within_limit = false;
    errors.Invalid(tp.Child("replicas"), MaxJobPodsMessage(task.Raw("replicas"), limits));
  }
  std::optional<int64_t> min_available = task.OptInt("minAvailable");
  if (min_available && *min_available < 0) {
    errors.Invalid(tp.Child("minAvailable"),
                   fmt::format("'minAvailable' < 0 in task: {}, job: {}", name, job_name));
  } else if (min_available && *min_available > replicas) {
    errors.Invalid(tp.Child("minAvailable"),
                   fmt::format("'minAvailable' is greater than 'replicas' in task: {}, job: {}",
                               name, job_name));
  }
  if (task.ObjectAt("partitionPolicy") == nullptr) return within_limit;
  api::FieldReader pp = task.Child("partitionPolicy");
  FieldPath pp_path = tp.Child("partitionPolicy");
  int64_t total = pp.Int("totalPartitions");
  int64_t size = pp.Int("partitionSize");
  int64_t min_partitions = pp.Int("minPartitions");
  if (total <= 0) {
    errors.Invalid(pp_path.Child("totalPartitions"),
                   fmt::format("'totalPartitions' must be greater than 0 in task: {}", name));
  }
  if (size <= 0) {
    errors.Invalid(pp_path.Child("partitionSize"),
                   fmt::format("'partitionSize' must be greater than 0 in task: {}", name));
  }
  if (min_partitions < 0) {
    errors.Invalid(pp_path.Child("minPartitions"),
                   fmt::format("'minPartitions' must be >= 0 in task: {}", name));
  }
  if (total > 0 && size > 0 && replicas != SaturatingMul(total, size)) {
    errors.Invalid(tp.Child("replicas"),
                   fmt::format("'replicas' ({}) must equal 'totalPartitions' ({}) x "
                               "'partitionSize' ({}) in task: {}",
                               replicas, total, size, name));
  }
  if (min_partitions > 0 && size > 0 && min_available &&
      *min_available != SaturatingMul(min_partitions, size)) {
    errors.Invalid(tp.Child("minAvailable"),
                   fmt::format("'minAvailable' ({}) must equal 'minPartitions' ({}) x "
                               "'partitionSize' ({}) in task: {}",
                               *min_available, min_partitions, size, name));
  }
  return within_limit;
}

// The sum of the tasks' replicas against --max-job-pods, reported only when every task is
// within the limit on its own (otherwise the task's own error says it).
void ValidateTotalReplicas(int64_t total_replicas, bool tasks_within_limit,
                           const FieldPath& tasks_path, const JobLimits& limits,
                           ErrorList& errors) {
  if (!tasks_within_limit || total_replicas <= limits.max_pods) return;
  errors.Invalid(tasks_path,
                 fmt::format("Invalid value: {}: the tasks' replicas must add up to no more "
                             "than {} (the webhook's --max-job-pods)",
                             total_replicas, limits.max_pods));
}

void ValidatePriorityClass(std::string_view name, const FieldPath& path,
                           const ClusterLister& lister, ErrorList& errors) {
  if (name.empty() || lister.PriorityClassExists(name)) return;
  errors.Forbidden(path, fmt::format("PriorityClass \"{}\" not found", name));
}

// A narrow subset of Kubernetes' PodTemplate validation: what would otherwise only fail at
// pod creation, after the job was admitted and its PodGroup queued.
void ValidatePodTemplate(api::FieldReader& task, size_t task_index, const FieldPath& tp,
                         const ClusterLister& lister, ErrorList& errors) {
  api::FieldReader pod_template = task.Child("template");
  api::FieldReader metadata = pod_template.Child("metadata");
  // Labels and annotations the API server would refuse on every pod (422 FailedCreate, the
  // Job Pending for ever). The job controller adds its own annotations to each pod, so the
  // template gets Kubernetes' limit less room for those.
  ValidateLabelsAndAnnotations(
      metadata, tp.Child("template").Child("metadata"),
      kTotalAnnotationSizeLimitBytes - kControllerAnnotationReserveBytes,
      fmt::format("Kubernetes allows {} per pod, of which {} are kept for the annotations the "
                  "job controller adds",
                  kTotalAnnotationSizeLimitBytes, kControllerAnnotationReserveBytes),
      errors);
  ValidateGpuAttributeAnnotations(metadata.value(), tp.Child("template").Child("metadata"), errors);
  FieldPath spec_path = tp.Child("template").Child("spec");
  api::FieldReader pod_spec = pod_template.Child("spec");
  const json::Value* containers = pod_spec.Member("containers");
  if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
    errors.Invalid(spec_path.Child("containers"),
                   "Required value: the pod template needs at least one container");
    return;
  }
  std::string_view topology = task.View("topologyPolicy");
  bool integer_cpu = !topology.empty() && topology != "none";
  std::set<std::string, std::less<>> names;
  for (std::string_view list_name : {"initContainers", "containers"}) {
    size_t j = 0;
    pod_spec.ForEachItem(list_name, [&](api::FieldReader& c) {
      const size_t index = j++;
      FieldPath cp = spec_path.Child(list_name).Index(index);
      std::string_view cname = c.View("name");
      if (cname.empty()) {
        errors.Invalid(cp.Child("name"), "Required value");
      } else if (!IsDns1123Label(cname)) {
        errors.Invalid(cp.Child("name"),
                       fmt::format("container name \"{}\" must be a DNS-1123 label", cname));
      } else if (!names.emplace(cname).second) {
        errors.Invalid(cp.Child("name"), fmt::format("Duplicate value: \"{}\"", cname));
      }
      if (c.View("image").empty()) errors.Invalid(cp.Child("image"), "Required value");
      FieldPath rp = cp.Child("resources");
      api::FieldReader resources = c.Child("resources");
      auto requests = ReadResourceList(resources.Member("requests"), rp.Child("requests"), errors);
      auto limits = ReadResourceList(resources.Member("limits"), rp.Child("limits"), errors);
      for (const auto& [resource, request] : requests) {
        auto limit = limits.find(resource);
        if (limit != limits.end() && request > limit->second) {
          errors.Invalid(rp.Child("requests").Key(resource),
                         fmt::format("must be less than or equal to {} limit of {}", resource,
                                     limit->second.String()));
        }
      }
      if (integer_cpu && list_name == "containers") {
        auto cpu = requests.find("cpu");
        if (cpu != requests.end() && cpu->second.MilliValue() % 1000 != 0) {
          errors.Invalid(rp.Child("requests").Key("cpu"),
                         fmt::format("the cpu request isn't an integer in spec.task[{}] "
                                     "container[{}].",
                                     task_index, index));
        }
      }
    });
  }
  ValidatePriorityClass(pod_spec.View("priorityClassName"), spec_path.Child("priorityClassName"),
                        lister, errors);
}

void ValidateVolumes(api::FieldReader& spec, const FieldPath& path, ErrorList& errors) {
  std::vector<api::FieldReader> volumes = spec.Items("volumes");
  std::set<std::string, std::less<>> mount_paths;
  for (size_t i = 0; i < volumes.size(); ++i) {
    api::FieldReader& v = volumes[i];
    FieldPath vp = path.Index(i);
    std::string_view mount_path = v.View("mountPath");
    if (mount_path.empty()) {
      errors.Invalid(vp.Child("mountPath"), "mountPath is required");
    } else if (!mount_paths.emplace(mount_path).second) {
      errors.Invalid(vp.Child("mountPath"), fmt::format("duplicated mountPath: {}", mount_path));
    }
    bool has_claim = v.Has("volumeClaim");
    std::string_view claim_name = v.View("volumeClaimName");
    if (!has_claim && claim_name.empty()) {
      errors.Invalid(vp, "either volumeClaim or volumeClaimName must be specified");
    } else if (has_claim && !claim_name.empty()) {
      errors.Invalid(vp,
                     "conflict: set volumeClaimName to use an existing PVC, or volumeClaim to "
                     "create a new one, not both");
    }
    if (!claim_name.empty() && !IsDns1123Subdomain(claim_name)) {
      errors.Invalid(
          vp.Child("volumeClaimName"),
          fmt::format("invalid volumeClaimName \"{}\": must be a DNS-1123 subdomain", claim_name));
    }
  }
}

void ValidateQueue(std::string_view queue_name, const FieldPath& path, const ClusterLister& lister,
                   ErrorList& errors) {
  if (queue_name.empty()) queue_name = api::kDefaultQueue;
  // Queue names may be DNS subdomains of up to 253 characters, but the job controller labels
  // every pod with its queue (volcano.sh/queue-name), and label values stop at 63: such a
  // Job could never create a pod.
  if (std::vector<std::string> label_errors = LabelValueErrors(queue_name); !label_errors.empty()) {
    errors.Invalid(path, fmt::format("Invalid value: \"{}\": {} (the job controller puts it in "
                                     "the pods' volcano.sh/queue-name label)",
                                     queue_name, label_errors.front()));
    return;
  }
  std::optional<QueueInfo> queue = LookUpQueue(queue_name, "job queue", path, lister, errors);
  if (!queue) return;
  if (queue_name == api::kRootQueue) {
    errors.Forbidden(path, "can not submit job to root queue");
    return;
  }
  const std::string state = queue->state.empty() ? std::string(api::kQueueOpen) : queue->state;
  if (state != api::kQueueOpen) {
    errors.Forbidden(path, fmt::format("can only submit job to queue with state `Open`, queue "
                                       "`{}` status is `{}`",
                                       queue_name, state));
  }
  std::vector<std::string> children = lister.ChildQueues(queue_name);
  if (!children.empty()) {
    errors.Forbidden(path, fmt::format("can only submit job to leaf queue, queue `{}` has {} "
                                       "child queues",
                                       queue_name, children.size()));
  }
}

// `task_names[i]`: the name of the task at position i ("" when absent or not an object).
void ValidateDependencies(std::vector<api::FieldReader>& tasks,
                          const std::vector<std::string_view>& task_names, const FieldPath& path,
                          ErrorList& errors) {
  std::map<std::string, size_t, std::less<>> index;
  for (size_t i = 0; i < tasks.size(); ++i) index.emplace(std::string(task_names[i]), i);
  // edges[i] = tasks that task i depends on.
  std::vector<std::vector<size_t>> edges(tasks.size());
  bool any = false;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!tasks[i].Has("dependsOn")) continue;
    tasks[i]
        .Child("dependsOn")
        .ForEachString("name", [&](std::optional<std::string_view> name, size_t k) {
          const std::string_view dep = name.value_or(std::string_view());
          auto it = index.find(dep);
          if (it == index.end()) {
            errors.Invalid(
                path.Index(i).Child("dependsOn").Child("name").Index(k),
                fmt::format("task \"{}\" depends on unknown task \"{}\"", task_names[i], dep));
            return;
          }
          edges[i].push_back(it->second);
          any = true;
        });
  }
  if (!any) return;
  // Kahn's algorithm: repeatedly remove tasks whose dependencies are all removed.
  std::vector<size_t> pending_deps(tasks.size());
  std::vector<std::vector<size_t>> dependents(tasks.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    pending_deps[i] = edges[i].size();
    for (size_t d : edges[i]) dependents[d].push_back(i);
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < pending_deps.size(); ++i) {
    if (pending_deps[i] == 0) ready.push_back(i);
  }
  size_t done = 0;
  while (!ready.empty()) {
    size_t t = ready.back();
    ready.pop_back();
    ++done;
    for (size_t dependent : dependents[t]) {
      if (--pending_deps[dependent] == 0) ready.push_back(dependent);
    }
  }
  if (done != tasks.size()) {
    errors.Invalid(path,
                   "job has dependencies between tasks, but doesn't form a directed acyclic "
                   "graph(DAG)");
  }
}

void ValidatePlugins(api::FieldReader& spec, const std::vector<std::string_view>& task_names,
                     const FieldPath& path, ErrorList& errors) {
  spec.ForEachEntry("plugins", [&](std::string_view name, std::optional<std::string_view>) {
    if (!api::IsSupportedJobPlugin(name)) {
      errors.Invalid(path.Key(name), fmt::format("unable to find job plugin: {}", name));
    }
  });
  api::FieldReader plugin_args = spec.Child("plugins");
  if (plugin_args.Has(api::kMpiPlugin)) {
    std::string master = FlagValue(plugin_args, api::kMpiPlugin, "master").value_or("master");
    bool found = std::find(task_names.begin(), task_names.end(), master) != task_names.end();
    if (!found) {
      errors.Invalid(path.Key(api::kMpiPlugin),
                     fmt::format("The specified mpi master task was not found (no task named "
                                 "\"{}\")",
                                 master));
    }
  }
  // ray: every pod of the job is refused by the plugin (PluginError) without its head task.
  if (plugin_args.Has(api::kRayPlugin)) {
    std::string head = FlagValue(plugin_args, api::kRayPlugin, "head").value_or("head");
    bool found = std::find(task_names.begin(), task_names.end(), head) != task_names.end();
    if (!found) {
      errors.Invalid(path.Key(api::kRayPlugin),
                     fmt::format("the ray head task was not found (no task named \"{}\")", head));
    }
  }
}

void CheckNonNegative(api::FieldReader& obj, std::string_view key, const FieldPath& path,
                      std::string_view message, ErrorList& errors) {
  std::optional<int64_t> v = obj.OptInt(key);
  if (v && *v < 0) errors.Invalid(path.Child(key), std::string(message));
}

// Collects the paths where `a` and `b` differ (absent == null), at most kMaxReportedChanges.
void DiffPaths(const json::Value* a, const json::Value* b, const FieldPath& path,
               std::vector<std::string>& out) {
  if (out.size() >= kMaxReportedChanges) return;
  if (a != nullptr && a->IsNull()) a = nullptr;
  if (b != nullptr && b->IsNull()) b = nullptr;
  if (a == nullptr && b == nullptr) return;
  if (a == nullptr || b == nullptr) {
    out.push_back(path.str());
    return;
  }
  if (a->IsObject() && b->IsObject()) {
    for (const auto& m : b->GetObject()) {
      DiffPaths(json::Find(*a, json::AsView(m.name)), &m.value, path.Child(json::AsView(m.name)),
                out);
    }
    for (const auto& m : a->GetObject()) {
      if (json::Find(*b, json::AsView(m.name)) == nullptr) {
        DiffPaths(&m.value, nullptr, path.Child(json::AsView(m.name)), out);
      }
    }
    return;
  }
  if (a->IsArray() && b->IsArray() && a->Size() == b->Size()) {
    for (rapidjson::SizeType i = 0; i < a->Size(); ++i)
      DiffPaths(&(*a)[i], &(*b)[i], path.Index(i), out);
    return;
  }
  if (*a != *b) out.push_back(path.str());
}

}  // namespace

const std::vector<std::string>& KnownJobPlugins() {
  static const auto* plugins =
      new std::vector<std::string>(std::begin(api::kJobPlugins), std::end(api::kJobPlugins));
  return *plugins;
}

ErrorList ValidateJobCreate(const json::Value& job, const ClusterLister& lister,
                            const JobLimits& limits) {
  ErrorList errors;
  const FieldPath spec_path("spec");
  const FieldPath tasks_path = spec_path.Child("tasks");
  // Read through the shared model; a field of the wrong type reads as absent, as before (the
  // API server's schema refuses it before admission), so the reader's own error is not used.
  api::FieldReader reader(&job, "");
  api::FieldReader spec = reader.Child("spec");
  std::vector<api::FieldReader> tasks = spec.Items("tasks");  // none when not a list
  if (tasks.empty()) {
    errors.Invalid(tasks_path, "No task specified in job spec");
    return errors;
  }
  std::vector<std::string_view> names_by_position;
  names_by_position.reserve(tasks.size());
  for (api::FieldReader& t : tasks) names_by_position.push_back(t.View("name"));
  std::string_view job_name = JobName(reader);

  ValidateNetworkTopology(spec.Member("networkTopology"), spec_path.Child("networkTopology"),
                          errors);

  std::set<std::string, std::less<>> task_names;
  int64_t total_replicas = 0;
  bool tasks_within_limit = true;
  for (size_t i = 0; i < tasks.size(); ++i) {
    api::FieldReader& task = tasks[i];
    FieldPath tp = tasks_path.Index(i);
    if (tasks[i].value() == nullptr) {
      errors.Invalid(tp, "task must be an object");
      continue;
    }
    std::string_view name = names_by_position[i];
    if (!task_names.emplace(name).second) {
      // Volcano counts the duplicate's replicas before it stops, so a job whose minAvailable
      // the mutator summed over every task is not also told it exceeds the total.
      total_replicas = SaturatingAdd(total_replicas, std::max<int64_t>(TaskReplicas(task), 0));
      errors.Invalid(tp.Child("name"), fmt::format("duplicated task name {}", name));
      break;
    }
    if (name.empty()) {
      errors.Invalid(tp.Child("name"), "task name must not be empty");
    } else if (!IsDns1123Label(name)) {
      errors.Invalid(tp.Child("name"),
                     fmt::format("task name \"{}\" must be a DNS-1123 label (at most 63 lowercase "
                                 "alphanumeric characters or '-', starting and ending with an "
                                 "alphanumeric character)",
                                 name));
    }
    int64_t replicas = TaskReplicas(task);
    total_replicas = SaturatingAdd(total_replicas, std::max<int64_t>(replicas, 0));
    tasks_within_limit &= ValidateTaskCounts(task, tp, job_name, limits, errors);
    CheckNonNegative(task, "maxRetry", tp, "'maxRetry' cannot be less than zero.", errors);
    ValidatePolicies(task.Member("policies"), tp.Child("policies"), errors);
    if (!job_name.empty() && !name.empty()) {
      std::string pod_name =
          fmt::format("{}-{}-{}", job_name, name, std::max<int64_t>(replicas, 1) - 1);
      std::vector<std::string> name_errors = QualifiedNameErrors(pod_name);
      if (!name_errors.empty()) {
        errors.Invalid(tp.Child("name"), fmt::format("create pod with name {} validate failed {}",
                                                     pod_name, BracketList(name_errors)));
      }
    }
    std::string_view topology = task.View("topologyPolicy");
    const auto& topologies = TopologyPolicies();
    if (!topology.empty() &&
        std::find(topologies.begin(), topologies.end(), topology) == topologies.end()) {
      errors.Invalid(tp.Child("topologyPolicy"),
                     fmt::format("unsupported topologyPolicy \"{}\", supported values are {}",
                                 topology, BracketList(topologies)));
    }
    ValidatePodTemplate(task, i, tp, lister, errors);
  }
  ValidateTotalReplicas(total_replicas, tasks_within_limit, tasks_path, limits, errors);

  if (!job_name.empty()) {
    std::vector<std::string> name_errors = QualifiedNameErrors(job_name);
    if (!name_errors.empty()) {
      errors.Invalid(FieldPath("metadata").Child("name"),
                     fmt::format("create job with name {} validate failed {}", job_name,
                                 BracketList(name_errors)));
    }
  }
  int64_t min_available = spec.Int("minAvailable");
  if (min_available < 0) {
    errors.Invalid(spec_path.Child("minAvailable"), "job 'minAvailable' must be >= 0.");
  } else if (min_available > total_replicas) {
    errors.Invalid(spec_path.Child("minAvailable"),
                   "job 'minAvailable' should not be greater than total replicas in tasks");
  }
  CheckNonNegative(spec, "maxRetry", spec_path, "'maxRetry' cannot be less than zero.", errors);
  CheckNonNegative(spec, "ttlSecondsAfterFinished", spec_path,
                   "'ttlSecondsAfterFinished' cannot be less than zero.", errors);
  if (auto min_success = spec.OptInt("minSuccess"); min_success && *min_success < 1) {
    errors.Invalid(spec_path.Child("minSuccess"), "'minSuccess' must be >= 1");
  }
  ValidatePolicies(spec.Member("policies"), spec_path.Child("policies"), errors);
  ValidatePlugins(spec, names_by_position, spec_path.Child("plugins"), errors);
  ValidateVolumes(spec, spec_path.Child("volumes"), errors);
  ValidateDependencies(tasks, names_by_position, tasks_path, errors);
  ValidatePriorityClass(spec.View("priorityClassName"), spec_path.Child("priorityClassName"),
                        lister, errors);
  ValidateQueue(spec.View("queue"), spec_path.Child("queue"), lister, errors);
  ValidateTaskTopologyAnnotations(reader, errors);
  return errors;
}

ErrorList ValidateJobUpdate(const json::Value& old_job, const json::Value& job,
                            const ClusterLister& lister, const JobLimits& limits) {
  ErrorList errors;
  const FieldPath spec_path("spec");
  api::FieldReader old_reader(&old_job, "");
  api::FieldReader reader(&job, "");
  api::FieldReader old_spec_reader = old_reader.Child("spec");
  api::FieldReader spec_reader = reader.Child("spec");
  const json::Value* old_spec = old_spec_reader.value();
  const json::Value* spec = spec_reader.value();
  if (spec == nullptr) {
    errors.Invalid(spec_path, "Required value");
    return errors;
  }
  // Status and metadata writes (controllers, kubectl label) do not touch the spec.
  if (old_spec != nullptr && *old_spec == *spec) return errors;

  std::string_view job_name = JobName(reader);
  int64_t min_available = spec_reader.Int("minAvailable");
  if (min_available < 0) {
    errors.Invalid(spec_path.Child("minAvailable"), "job 'minAvailable' must be >= 0.");
  }
  std::vector<api::FieldReader> tasks = spec_reader.Items("tasks");
  size_t task_count = tasks.size();
  size_t old_task_count = old_spec_reader.Items("tasks").size();
  if (task_count != old_task_count) {
    errors.Invalid(spec_path.Child("tasks"), "job updates may not add or remove tasks");
  }
  int64_t total_replicas = 0;
  bool tasks_within_limit = true;
  for (size_t i = 0; i < task_count; ++i) {
    api::FieldReader& task = tasks[i];
    total_replicas = SaturatingAdd(total_replicas, std::max<int64_t>(TaskReplicas(task), 0));
    tasks_within_limit &=
        ValidateTaskCounts(task, spec_path.Child("tasks").Index(i), job_name, limits, errors);
  }
  ValidateTotalReplicas(total_replicas, tasks_within_limit, spec_path.Child("tasks"), limits,
                        errors);
  if (min_available > total_replicas) {
    errors.Invalid(spec_path.Child("minAvailable"),
                   "job 'minAvailable' must not be greater than total replicas");
  }
  ValidateNetworkTopology(spec_reader.Member("networkTopology"), spec_path.Child("networkTopology"),
                          errors);

  json::Document scratch;
  json::Value old_copy(rapidjson::kObjectType);
  if (old_spec != nullptr) {
    old_copy.CopyFrom(*old_spec, scratch.GetAllocator());
  }
  json::Value new_copy(*spec, scratch.GetAllocator());
  api::StripUpdatableJobSpecFields(old_copy, new_copy);
  std::vector<std::string> changed;
  DiffPaths(&old_copy, &new_copy, spec_path, changed);
  if (!changed.empty()) {
    std::string list;
    for (const auto& p : changed) list += (list.empty() ? "" : ", ") + p;
    if (changed.size() >= kMaxReportedChanges) list += ", ...";
    errors.Invalid(spec_path, fmt::format("{} (changed: {})", kImmutableSpecMessage, list));
  }

  std::string_view priority_class = spec_reader.View("priorityClassName");
  if (old_spec == nullptr || priority_class != old_spec_reader.View("priorityClassName")) {
    ValidatePriorityClass(priority_class, spec_path.Child("priorityClassName"), lister, errors);
  }
  return errors;
}

AdmissionResponse JobValidator::Handle(const AdmissionRequest& request) const {
  switch (request.operation) {
    case Operation::kCreate:
      if (request.object == nullptr) break;
      return ValidateJobCreate(*request.object, lister_, limits_).ToResponse();
    case Operation::kUpdate:
      if (request.object == nullptr || request.old_object == nullptr) break;
      return ValidateJobUpdate(*request.old_object, *request.object, lister_, limits_).ToResponse();
    default:
      break;
  }
  return AdmissionResponse::Allow();
}

}  // namespace basalt::webhook
