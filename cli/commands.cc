#include "cli/commands.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "cli/api.h"
#include "cli/log_follower.h"
#include "cli/output.h"
#include "cli/printer.h"
#include "cli/wait.h"
#include "cli/yaml_json.h"
#include "common/api/batch.h"
#include "common/api/codec.h"
#include "common/api/core.h"
#include "common/api/flow.h"
#include "common/api/scheduling.h"
#include "common/api/vocabulary.h"
#include "common/client/config.h"
#include "common/client/errors.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::cli {
namespace {

using client::ResourceRef;

// Prints a failed API call's message; the exit code of API errors.
int Fail(Printer& p, const absl::Status& s) {
  p.Err(MessageOf(s));
  return kExitApiError;
}

api::Time Now() { return std::chrono::system_clock::now(); }

template <typename View>
absl::StatusOr<std::vector<View>> Decode(std::vector<json::Document> docs) {
  std::vector<View> out;
  out.reserve(docs.size());
  for (json::Document& d : docs) {
    absl::StatusOr<api::Object> obj = api::Object::FromDocument(std::move(d));
    if (!obj.ok()) return obj.status();
    // LIST items come without kind; the typed views accept an absent kind.
    absl::StatusOr<View> v = View::FromObject(*std::move(obj));
    if (!v.ok()) return v.status();
    out.push_back(*std::move(v));
  }
  return out;
}

template <typename View>
absl::StatusOr<View> DecodeOne(json::Document doc) {
  absl::StatusOr<api::Object> obj = api::Object::FromDocument(std::move(doc));
  if (!obj.ok()) return obj.status();
  return View::FromObject(*std::move(obj));
}

api::OwnerReference RefTo(const api::Object& obj, std::string_view api_version,
                          std::string_view kind) {
  return api::ControllerRef(api_version, kind, obj.name(), obj.uid());
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

client::ListOptions Selecting(std::string label_selector, std::string field_selector = {}) {
  client::ListOptions o;
  o.label_selector = std::move(label_selector);
  o.field_selector = std::move(field_selector);
  return o;
}

// "cpu=1000m,memory=100Mi" -> {"cpu":"1000m","memory":"100Mi"} (Volcano's
// populateResourceListV1; quantities are checked by the API server).
absl::StatusOr<json::Value> ResourceListJson(std::string_view spec, json::Allocator& a) {
  json::Value obj(rapidjson::kObjectType);
  if (spec.empty()) return obj;
  for (std::string_view statement : Split(spec, ',')) {
    std::vector<std::string_view> parts = Split(statement, '=');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          fmt::format("invalid argument syntax {}, expected <resource>=<value>", statement));
    }
    json::Set(obj, parts[0], json::MakeString(parts[1], a), a);
  }
  return obj;
}

std::string ResolveNamespace(const Options& o, client::Client& c) {
  return o.namespace_name.empty() ? c.default_namespace() : o.namespace_name;
}

// --- job run ---------------------------------------------------------------------------

// The Job to create: the file's (namespace from -n, else the file, else the context's) or one
// built from the flags as Volcano's constructLaunchJobFlagsJob does.
absl::StatusOr<api::Object> BuildJob(const Options& o, const std::string& default_ns) {
  if (!o.filename.empty()) {
    absl::StatusOr<std::string> text = client::ReadFileToString(o.filename);
    if (!text.ok()) return absl::InvalidArgumentError(std::string(MessageOf(text.status())));
    absl::StatusOr<std::string> json_text = YamlToJson(*text);
    if (!json_text.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}", o.filename, MessageOf(json_text.status())));
    }
    absl::StatusOr<api::Object> obj = api::Object::Parse(*json_text);
    if (!obj.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", o.filename, MessageOf(obj.status())));
    }
    if (!obj->kind().empty() && obj->kind() != api::kJobKind) {
      return absl::InvalidArgumentError(fmt::format("{}: the object is a {}, not a Job ({})",
                                                    o.filename, obj->kind(),
                                                    api::kBatchApiVersion));
    }
    if (obj->api_version().empty() || obj->kind().empty()) {
      obj->SetApiVersionKind(api::kBatchApiVersion, api::kJobKind);
    }
    if (!o.name.empty()) obj->SetName(o.name);
    if (obj->name().empty() && obj->generate_name().empty()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: the job has no metadata.name (give one, or --name)", o.filename));
    }
    if (!o.namespace_name.empty()) {
      obj->SetNamespace(o.namespace_name);
    } else if (obj->namespace_name().empty()) {
      obj->SetNamespace(default_ns);
    }
    if (!o.queue.empty()) {
      obj->SetPath({"spec", "queue"}, json::MakeString(o.queue, obj->allocator()));
    }
    return obj;
  }
  api::Object obj;
  obj.SetApiVersionKind(api::kBatchApiVersion, api::kJobKind);
  obj.SetName(o.name);
  obj.SetNamespace(o.namespace_name.empty() ? default_ns : o.namespace_name);
  json::Allocator& a = obj.allocator();
  absl::StatusOr<json::Value> requests = ResourceListJson(o.requests, a);
  if (!requests.ok()) return requests.status();
  absl::StatusOr<json::Value> limits = ResourceListJson(o.limits, a);
  if (!limits.ok()) return limits.status();
  json::Value& spec = obj.EnsurePath({"spec"});
  json::Set(spec, "minAvailable", json::Value(o.min_available), a);
  json::Set(spec, "schedulerName", json::MakeString(o.scheduler, a), a);
  if (!o.queue.empty()) json::Set(spec, "queue", json::MakeString(o.queue, a), a);
  json::Value container(rapidjson::kObjectType);
  json::Set(container, "name", json::MakeString(o.name, a), a);
  json::Set(container, "image", json::MakeString(o.image, a), a);
  json::Set(container, "imagePullPolicy", json::MakeString("IfNotPresent", a), a);
  json::Value resources(rapidjson::kObjectType);
  json::Set(resources, "limits", std::move(*limits), a);
  json::Set(resources, "requests", std::move(*requests), a);
  json::Set(container, "resources", std::move(resources), a);
  json::Value containers(rapidjson::kArrayType);
  containers.PushBack(std::move(container), a);
  json::Value pod_spec(rapidjson::kObjectType);
  json::Set(pod_spec, "restartPolicy", json::MakeString("Never", a), a);
  json::Set(pod_spec, "containers", std::move(containers), a);
  json::Value labels(rapidjson::kObjectType);
  json::Set(labels, "job.volcano.sh", json::MakeString(o.name, a), a);
  json::Value meta(rapidjson::kObjectType);
  json::Set(meta, "name", json::MakeString(o.name, a), a);
  json::Set(meta, "labels", std::move(labels), a);
  json::Value tmpl(rapidjson::kObjectType);
  json::Set(tmpl, "metadata", std::move(meta), a);
  json::Set(tmpl, "spec", std::move(pod_spec), a);
  json::Value task(rapidjson::kObjectType);
  json::Set(task, "replicas", json::Value(o.replicas), a);
  json::Set(task, "template", std::move(tmpl), a);
  json::Value tasks(rapidjson::kArrayType);
  tasks.PushBack(std::move(task), a);
  json::Set(spec, "tasks", std::move(tasks), a);
  return obj;
}

absl::StatusOr<std::vector<api::Event>> JobEvents(Api& api, std::string_view ns,
                                                  std::string_view name) {
  absl::StatusOr<std::vector<json::Document>> docs =
      api.List(client::Events(), ns, Selecting("", fmt::format("involvedObject.name={}", name)));
  if (!docs.ok()) return docs.status();
  absl::StatusOr<std::vector<api::Event>> events = Decode<api::Event>(*std::move(docs));
  if (!events.ok()) return events.status();
  std::erase_if(*events, [](const api::Event& e) {
    return e.fields().involved_object.kind != api::kJobKind;
  });
  return events;
}

int WaitForJob(const Options& o, client::Client& client, Api& api, const std::string& ns,
               const std::string& name, const std::string& uid, Printer& p) {
  using Clock = std::chrono::steady_clock;
  const bool has_deadline = o.timeout.count() > 0;
  const Clock::time_point deadline =
      has_deadline ? Clock::now() + std::chrono::duration_cast<Clock::duration>(o.timeout)
                   : Clock::time_point::max();
  JobWaiter waiter(uid);
  std::optional<api::Job> last;
  std::optional<LogFollower> logs;
  if (!o.logs_task.empty()) logs.emplace(client, ns, name, o.logs_task, p);
  auto observe = [&](api::Job&& job) {
    for (const std::string& line : waiter.Observe(job)) p.Out(line);
    last = std::move(job);
  };
  std::string rv;
  int failures = 0;
  bool timed_out = false;
  while (!waiter.outcome()) {
    if (rv.empty()) {
      absl::StatusOr<json::Document> doc = api.Get(client::VolcanoJobs(), ns, name);
      if (absl::IsNotFound(doc.status())) {
        for (const std::string& line : waiter.ObserveDeleted()) p.Out(line);
        break;
      }
      if (!doc.ok()) {
        if (++failures > 5) return Fail(p, doc.status());
        p.Err(fmt::format("vcctl: {} (retrying)", MessageOf(doc.status())));
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      absl::StatusOr<api::Job> job = DecodeOne<api::Job>(*std::move(doc));
      if (!job.ok()) return Fail(p, job.status());
      rv = std::string(job->resource_version());
      observe(*std::move(job));
      if (waiter.outcome()) break;
    }
    int64_t watch_seconds = 300;
    if (has_deadline) {
      const auto remaining = deadline - Clock::now();
      if (remaining <= Clock::duration::zero()) {
        timed_out = true;
        break;
      }
      watch_seconds =
          std::clamp<int64_t>(std::chrono::ceil<std::chrono::seconds>(remaining).count(), 1, 300);
    }
    client::ListOptions lo;
    lo.field_selector = fmt::format("metadata.name={}", name);
    lo.resource_version = rv;
    lo.timeout_seconds = watch_seconds;
    absl::Status s =
        client.Watch(client::VolcanoJobs(), ns, lo, [&](client::WatchEvent&& e) -> absl::Status {
          rv = std::string(json::GetString(json::FindPath(e.object, {"metadata"})
                                               ? *json::FindPath(e.object, {"metadata"})
                                               : e.object,
                                           "resourceVersion", rv));
          if (e.type == client::WatchEventType::kBookmark) return absl::OkStatus();
          if (e.type == client::WatchEventType::kDeleted) {
            for (const std::string& line : waiter.ObserveDeleted()) p.Out(line);
            return absl::CancelledError("deleted");
          }
          absl::StatusOr<api::Job> job = DecodeOne<api::Job>(std::move(e.object));
          if (!job.ok()) return job.status();
          observe(*std::move(job));
          return waiter.outcome() ? absl::CancelledError("finished") : absl::OkStatus();
        });
    if (waiter.outcome()) break;
    if (s.ok()) {
      failures = 0;
      continue;  // the server ended the watch (timeoutSeconds): watch on from rv
    }
    rv.clear();  // re-read, then watch again
    if (client::IsGone(s)) continue;
    if (++failures > 5) return Fail(p, s);
    p.Err(fmt::format("vcctl: watching job {}/{}: {} (retrying)", ns, name, MessageOf(s)));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (logs) logs->Stop();
  if (timed_out) {
    p.Err(TimeoutSummary(fmt::format("{}/{}", ns, name), waiter.phase(), o.timeout_text));
    return kExitTimeout;
  }
  const ExitCode code = *waiter.outcome();
  std::vector<api::Event> events;
  std::vector<api::Pod> pods;
  if (code != kExitOk) {
    if (absl::StatusOr<std::vector<api::Event>> ev = JobEvents(api, ns, name); ev.ok()) {
      events = *std::move(ev);
    }
    absl::StatusOr<std::vector<json::Document>> docs =
        api.List(client::Pods(), ns, Selecting(fmt::format("{}={}", api::kJobNameKey, name)));
    if (docs.ok()) {
      if (absl::StatusOr<std::vector<api::Pod>> v = Decode<api::Pod>(*std::move(docs)); v.ok()) {
        pods = *std::move(v);
      }
    }
  }
  const std::string summary = FinalSummary(code, last ? &*last : nullptr, events, pods);
  if (code == kExitOk) {
    p.Out(summary);
  } else {
    p.Err(summary);
  }
  return code;
}

int JobRun(const Options& o, client::Client& client, Api& api, Printer& p) {
  absl::StatusOr<api::Object> obj = BuildJob(o, client.default_namespace());
  if (!obj.ok()) {
    p.Err(fmt::format("vcctl: {}", MessageOf(obj.status())));
    return kExitUsage;
  }
  if (!o.logs_task.empty()) {
    absl::StatusOr<api::Job> job = api::Job::FromObject(*obj);
    if (job.ok() && job->FindTask(o.logs_task) == nullptr) {
      std::vector<std::string> names;
      for (const api::TaskSpec& t : job->spec().tasks) names.push_back(t.name);
      p.Err(fmt::format("vcctl: --logs {}: the job has no such task (tasks: {})", o.logs_task,
                        fmt::join(names, ", ")));
      return kExitUsage;
    }
  }
  const std::string ns(obj->namespace_name());
  absl::StatusOr<json::Document> created = api.Create(client::VolcanoJobs(), ns, obj->ToJson());
  if (!created.ok()) return Fail(p, created.status());
  const std::string name(json::GetString(*json::FindPath(*created, {"metadata"}), "name"));
  const std::string uid(json::GetString(*json::FindPath(*created, {"metadata"}), "uid"));
  p.Out(fmt::format("run job {} successfully", name));
  if (!o.wait) return kExitOk;
  return WaitForJob(o, client, api, ns, name, uid, p);
}

// --- other job commands ------------------------------------------------------------------

int JobList(const Options& o, client::Client& client, Api& api, Printer& p) {
  const std::string ns = o.all_namespaces ? "" : ResolveNamespace(o, client);
  absl::StatusOr<std::vector<json::Document>> docs = api.List(client::VolcanoJobs(), ns);
  if (!docs.ok()) return Fail(p, docs.status());
  absl::StatusOr<std::vector<api::Job>> jobs = Decode<api::Job>(*std::move(docs));
  if (!jobs.ok()) return Fail(p, jobs.status());
  std::erase_if(*jobs, [&](const api::Job& j) {
    return (!o.scheduler.empty() && j.spec().scheduler_name != o.scheduler) ||
           j.name().find(o.selector) == std::string_view::npos;
  });
  if (jobs->empty()) {
    p.Out(kNoResources);
    return kExitOk;
  }
  p.Out(FormatJobList(*jobs, o.all_namespaces));
  return kExitOk;
}

int JobView(const Options& o, client::Client& client, Api& api, Printer& p) {
  const std::string ns = ResolveNamespace(o, client);
  absl::StatusOr<json::Document> doc = api.Get(client::VolcanoJobs(), ns, o.name);
  if (!doc.ok()) return Fail(p, doc.status());
  absl::StatusOr<api::Job> job = DecodeOne<api::Job>(*std::move(doc));
  if (!job.ok()) return Fail(p, job.status());
  absl::StatusOr<std::vector<api::Event>> events = JobEvents(api, ns, o.name);
  p.Out(FormatJobView(*job, events.ok() ? *events : std::vector<api::Event>{}, Now()));
  return kExitOk;
}

int JobCommand(const Options& o, client::Client& client, Api& api, Printer& p, api::Action action) {
  const std::string ns = ResolveNamespace(o, client);
  absl::StatusOr<json::Document> doc = api.Get(client::VolcanoJobs(), ns, o.name);
  if (!doc.ok()) return Fail(p, doc.status());
  absl::StatusOr<api::Object> job = api::Object::FromDocument(*std::move(doc));
  if (!job.ok()) return Fail(p, job.status());
  api::Command cmd = api::Command::Make(ns, api::ActionName(action),
                                        RefTo(*job, api::kBatchApiVersion, api::kJobKind));
  absl::StatusOr<json::Document> created = api.Create(client::Commands(), ns, cmd.ToJson());
  if (!created.ok()) return Fail(p, created.status());
  p.Out(fmt::format("{} job {} successfully (command {})",
                    action == api::Action::kAbortJob ? "suspend" : "resume", o.name,
                    json::GetString(*json::FindPath(*created, {"metadata"}), "name")));
  return kExitOk;
}

int JobDelete(const Options& o, client::Client& client, Api& api, Printer& p) {
  const std::string ns = ResolveNamespace(o, client);
  if (absl::Status s = api.Delete(client::VolcanoJobs(), ns, o.name); !s.ok()) return Fail(p, s);
  p.Out(fmt::format("delete job {} successfully", o.name));
  return kExitOk;
}

// --- queues ------------------------------------------------------------------------------

// Queue Commands live in "default", as Volcano's vcctl creates them.
constexpr std::string_view kQueueCommandNamespace = "default";

int QueueCommand(Api& api, Printer& p, const std::string& name, api::Action action) {
  absl::StatusOr<json::Document> doc = api.Get(client::Queues(), "", name);
  if (!doc.ok()) return Fail(p, doc.status());
  absl::StatusOr<api::Object> queue = api::Object::FromDocument(*std::move(doc));
  if (!queue.ok()) return Fail(p, queue.status());
  api::Command cmd = api::Command::Make(kQueueCommandNamespace, api::ActionName(action),
                                        RefTo(*queue, api::kSchedulingApiVersion, api::kQueueKind));
  absl::StatusOr<json::Document> created =
      api.Create(client::Commands(), kQueueCommandNamespace, cmd.ToJson());
  if (!created.ok()) return Fail(p, created.status());
  p.Out(fmt::format("{} queue {} successfully (command {})",
                    action == api::Action::kOpenQueue ? "open" : "close", name,
                    json::GetString(*json::FindPath(*created, {"metadata"}), "name")));
  return kExitOk;
}

int QueueCreate(const Options& o, Api& api, Printer& p) {
  api::Queue queue = api::Queue::Make(o.name);
  queue.SetPath({"spec", "weight"}, json::Value(o.weight));
  absl::StatusOr<json::Document> created = api.Create(client::Queues(), "", queue.ToJson());
  if (!created.ok()) return Fail(p, created.status());
  p.Out(fmt::format("create queue {} successfully", o.name));
  // The state is the queue controller's to write (status subresource): ask it to close.
  if (o.state == api::kQueueClosed) return QueueCommand(api, p, o.name, api::Action::kCloseQueue);
  return kExitOk;
}

int QueueList(Api& api, Printer& p) {
  absl::StatusOr<std::vector<json::Document>> docs = api.List(client::Queues(), "");
  if (!docs.ok()) return Fail(p, docs.status());
  absl::StatusOr<std::vector<api::Queue>> queues = Decode<api::Queue>(*std::move(docs));
  if (!queues.ok()) return Fail(p, queues.status());
  if (queues->empty()) {
    p.Out(kNoResources);
    return kExitOk;
  }
  absl::StatusOr<std::vector<json::Document>> pg_docs = api.List(client::PodGroups(), "");
  if (!pg_docs.ok()) return Fail(p, pg_docs.status());
  absl::StatusOr<std::vector<api::PodGroup>> pgs = Decode<api::PodGroup>(*std::move(pg_docs));
  if (!pgs.ok()) return Fail(p, pgs.status());
  p.Out(FormatQueueList(*queues, CountPodGroupsByQueue(*pgs)));
  return kExitOk;
}

int QueueGet(const Options& o, Api& api, Printer& p) {
  absl::StatusOr<json::Document> doc = api.Get(client::Queues(), "", o.name);
  if (!doc.ok()) return Fail(p, doc.status());
  absl::StatusOr<api::Queue> queue = DecodeOne<api::Queue>(*std::move(doc));
  if (!queue.ok()) return Fail(p, queue.status());
  p.Out(FormatQueue(*queue));
  return kExitOk;
}

int QueueOperate(const Options& o, Api& api, Printer& p) {
  if (o.action == "update") {
    absl::StatusOr<json::Document> r = api.MergePatch(
        client::Queues(), "", o.name, fmt::format(R"({{"spec":{{"weight":{}}}}})", o.weight));
    if (!r.ok()) return Fail(p, r.status());
    p.Out(fmt::format("update queue {} weight to {} successfully", o.name, o.weight));
    return kExitOk;
  }
  return QueueCommand(api, p, o.name,
                      o.action == "open" ? api::Action::kOpenQueue : api::Action::kCloseQueue);
}

int QueueDelete(const Options& o, Api& api, Printer& p) {
  if (absl::Status s = api.Delete(client::Queues(), "", o.name); !s.ok()) return Fail(p, s);
  p.Out(fmt::format("delete queue {} successfully", o.name));
  return kExitOk;
}

// --- pods and podgroups ----------------------------------------------------------------

int PodList(const Options& o, client::Client& client, Api& api, Printer& p) {
  const std::string ns = o.all_namespaces ? "" : ResolveNamespace(o, client);
  client::ListOptions lo;
  // Volcano: a job selects its pods by label; a queue alone looks at every pod (Volcano's
  // job pods carry the queue label, other workloads the PodGroup queue annotation).
  if (!o.job.empty()) {
    lo.label_selector = fmt::format("{}={}", api::kJobNameKey, o.job);
  } else if (o.queue.empty()) {
    lo.label_selector = std::string(api::kJobNameKey);
  }
  absl::StatusOr<std::vector<json::Document>> docs = api.List(client::Pods(), ns, lo);
  if (!docs.ok()) return Fail(p, docs.status());
  absl::StatusOr<std::vector<api::Pod>> pods = Decode<api::Pod>(*std::move(docs));
  if (!pods.ok()) return Fail(p, pods.status());
  if (!o.queue.empty()) {
    auto in_queue = [&](const api::Pod& pod) {
      return pod.label(api::kQueueNameKey) == o.queue ||
             pod.annotation(api::kPodGroupQueueAnnotation) == o.queue;
    };
    if (!o.job.empty()) {
      for (const api::Pod& pod : *pods) {
        if (pod.label(api::kQueueNameKey) && !in_queue(pod)) {
          p.Err(fmt::format("the input vcjob {} does not match the queue {}", o.job, o.queue));
          return kExitUsage;
        }
      }
    } else {
      std::erase_if(*pods, [&](const api::Pod& pod) { return !in_queue(pod); });
    }
  }
  if (pods->empty()) {
    p.Out(kNoResources);
    return kExitOk;
  }
  p.Out(FormatPodList(*pods, o.all_namespaces, Now()));
  return kExitOk;
}

int PodGroupList(const Options& o, client::Client& client, Api& api, Printer& p) {
  const std::string ns = o.all_namespaces ? "" : ResolveNamespace(o, client);
  client::ListOptions lo;
  if (!o.job.empty()) lo.label_selector = fmt::format("{}={}", api::kJobNameKey, o.job);
  absl::StatusOr<std::vector<json::Document>> docs = api.List(client::PodGroups(), ns, lo);
  if (!docs.ok()) return Fail(p, docs.status());
  absl::StatusOr<std::vector<api::PodGroup>> pgs = Decode<api::PodGroup>(*std::move(docs));
  if (!pgs.ok()) return Fail(p, pgs.status());
  if (!o.queue.empty()) {
    std::erase_if(*pgs, [&](const api::PodGroup& pg) { return pg.spec().queue != o.queue; });
  }
  if (pgs->empty()) {
    p.Out(kNoResources);
    return kExitOk;
  }
  p.Out(FormatPodGroupList(*pgs, o.all_namespaces, Now()));
  return kExitOk;
}

// --- jobflows and jobtemplates (flow.volcano.sh/v1alpha1) -------------------------------------

int FlowList(const Options& o, client::Client& client, Api& api, Printer& p) {
  const bool flows = o.group == "jobflow";
  const std::string ns = o.all_namespaces ? "" : ResolveNamespace(o, client);
  absl::StatusOr<std::vector<json::Document>> docs =
      api.List(flows ? client::JobFlows() : client::JobTemplates(), ns);
  if (absl::IsNotFound(docs.status())) {
    p.Err(fmt::format("{} (is the {}.{} CRD installed?)", MessageOf(docs.status()),
                      flows ? api::kJobFlowPlural : api::kJobTemplatePlural, api::kFlowGroup));
    return kExitApiError;
  }
  if (!docs.ok()) return Fail(p, docs.status());
  std::vector<api::Object> objects;
  for (json::Document& d : *docs) {
    absl::StatusOr<api::Object> obj = api::Object::FromDocument(std::move(d));
    if (!obj.ok()) return Fail(p, obj.status());
    objects.push_back(*std::move(obj));
  }
  if (objects.empty()) {
    p.Out(kNoResources);
    return kExitOk;
  }
  p.Out(flows ? FormatJobFlowList(objects, Now()) : FormatJobTemplateList(objects));
  return kExitOk;
}

// The documents of a YAML file, split at "---" lines as Volcano's vcctl does; blank documents
// are skipped. Each is one object of `kind` (an absent kind is taken as `kind`).
absl::StatusOr<std::vector<api::Object>> ReadFlowFile(const std::string& path,
                                                      std::string_view kind,
                                                      const std::string& default_ns) {
  absl::StatusOr<std::string> text = client::ReadFileToString(path);
  if (!text.ok()) return absl::InvalidArgumentError(std::string(MessageOf(text.status())));
  std::vector<std::string> docs(1);
  std::vector<int> first_line(1, 1);
  int line_no = 0;
  for (std::string_view line : Split(*text, '\n')) {
    ++line_no;
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r')) {
      trimmed.remove_suffix(1);
    }
    if (trimmed == "---" || trimmed.rfind("--- ", 0) == 0) {
      docs.emplace_back();
      first_line.push_back(line_no + 1);
      continue;
    }
    docs.back() += std::string(line) + "\n";
  }
  std::vector<api::Object> out;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].find_first_not_of(" \t\r\n") == std::string::npos) continue;
    bool only_comments = true;
    for (std::string_view line : Split(docs[i], '\n')) {
      const size_t at = line.find_first_not_of(" \t\r");
      if (at != std::string_view::npos && line[at] != '#') only_comments = false;
    }
    if (only_comments) continue;
    const std::string where =
        docs.size() > 1 ? fmt::format("{} (document at line {})", path, first_line[i]) : path;
    absl::StatusOr<std::string> json_text = YamlToJson(docs[i]);
    if (!json_text.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}", where, MessageOf(json_text.status())));
    }
    absl::StatusOr<api::Object> obj = api::Object::Parse(*json_text);
    if (!obj.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", where, MessageOf(obj.status())));
    }
    if (!obj->kind().empty() && obj->kind() != kind) {
      return absl::InvalidArgumentError(fmt::format("{}: the object is a {}, not a {} ({})", where,
                                                    obj->kind(), kind, api::kFlowApiVersion));
    }
    if (obj->api_version().empty() || obj->kind().empty()) {
      obj->SetApiVersionKind(api::kFlowApiVersion, kind);
    }
    if (obj->name().empty()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: the {} has no metadata.name", where, kind));
    }
    if (obj->namespace_name().empty()) obj->SetNamespace(default_ns);
    out.push_back(*std::move(obj));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no {} in the file", path, kind));
  }
  return out;
}

using api::kJobFlowKind;
using api::kJobTemplateKind;

struct FlowKind {
  ResourceRef ref;
  std::string_view kind;
};

FlowKind KindOf(const Options& o) {
  if (o.group == "jobflow") return {client::JobFlows(), kJobFlowKind};
  return {client::JobTemplates(), kJobTemplateKind};
}

// Create and delete -f go on past a failed object (Volcano's aggregate error) and exit 6 if any
// failed.
int FlowCreate(const Options& o, client::Client& client, Api& api, Printer& p) {
  const FlowKind k = KindOf(o);
  absl::StatusOr<std::vector<api::Object>> objects =
      ReadFlowFile(o.filename, k.kind, client.default_namespace());
  if (!objects.ok()) {
    p.Err(fmt::format("vcctl: {}", MessageOf(objects.status())));
    return kExitUsage;
  }
  int code = kExitOk;
  for (const api::Object& obj : *objects) {
    const std::string ns(obj.namespace_name());
    absl::StatusOr<json::Document> created = api.Create(k.ref, ns, obj.ToJson());
    if (!created.ok()) {
      p.Err(
          fmt::format("create {} {}/{}: {}", k.kind, ns, obj.name(), MessageOf(created.status())));
      code = kExitApiError;
      continue;
    }
    p.Out(fmt::format("Created {}: {}/{}", k.kind, ns, obj.name()));
  }
  return code;
}

int FlowGet(const Options& o, client::Client& client, Api& api, Printer& p) {
  const FlowKind k = KindOf(o);
  const std::string ns = ResolveNamespace(o, client);
  absl::StatusOr<json::Document> doc = api.Get(k.ref, ns, o.name);
  if (!doc.ok()) return Fail(p, doc.status());
  if (o.output == "json") {
    p.Out(FormatJson(*doc));
    return kExitOk;
  }
  if (o.output == "yaml") {
    p.Out(FormatYaml(*doc));
    return kExitOk;
  }
  absl::StatusOr<api::Object> obj = api::Object::FromDocument(*std::move(doc));
  if (!obj.ok()) return Fail(p, obj.status());
  std::vector<api::Object> one;
  one.push_back(*std::move(obj));
  p.Out(o.group == "jobflow" ? FormatJobFlowList(one, Now()) : FormatJobTemplateList(one));
  return kExitOk;
}

// Volcano's separator between the objects `describe` prints without --name.
constexpr std::string_view kDescribeSeparator = "---------------------------------\n";

// `describe`: the object (-N), or every one of the namespace, as YAML (default) or JSON,
// without metadata.managedFields.
int FlowDescribe(const Options& o, client::Client& client, Api& api, Printer& p) {
  const FlowKind k = KindOf(o);
  const std::string ns = ResolveNamespace(o, client);
  std::vector<json::Document> docs;
  if (!o.name.empty()) {
    absl::StatusOr<json::Document> doc = api.Get(k.ref, ns, o.name);
    if (!doc.ok()) return Fail(p, doc.status());
    docs.push_back(*std::move(doc));
  } else {
    absl::StatusOr<std::vector<json::Document>> all = api.List(k.ref, ns);
    if (absl::IsNotFound(all.status())) {
      p.Err(fmt::format("{} (is the {}.{} CRD installed?)", MessageOf(all.status()), k.ref.resource,
                        api::kFlowGroup));
      return kExitApiError;
    }
    if (!all.ok()) return Fail(p, all.status());
    docs = *std::move(all);
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    json::Document& d = docs[i];
    if (!d.IsObject()) continue;
    if (auto m = d.FindMember("metadata"); m != d.MemberEnd() && m->value.IsObject()) {
      api::EraseMember(m->value, "managedFields");
    }
    // A listed item carries no apiVersion/kind; the printed object says what it is.
    if (!d.HasMember("kind")) {
      json::Value v(rapidjson::kObjectType);
      json::Allocator& a = d.GetAllocator();
      json::Set(v, "apiVersion", json::MakeString(api::kFlowApiVersion, a), a);
      json::Set(v, "kind", json::MakeString(k.kind, a), a);
      for (auto& member : d.GetObject()) v.AddMember(member.name, member.value, a);
      static_cast<json::Value&>(d).Swap(v);
    }
    if (i > 0) p.Out(kDescribeSeparator);
    p.Out(o.output == "json" ? FormatJson(d) : FormatYaml(d));
  }
  if (docs.empty()) p.Out(kNoResources);
  return kExitOk;
}

int FlowDelete(const Options& o, client::Client& client, Api& api, Printer& p) {
  const FlowKind k = KindOf(o);
  if (o.filename.empty()) {
    const std::string ns = ResolveNamespace(o, client);
    if (absl::Status s = api.Delete(k.ref, ns, o.name); !s.ok()) return Fail(p, s);
    p.Out(fmt::format("Deleted {}: {}/{}", k.kind, ns, o.name));
    return kExitOk;
  }
  const std::string default_ns = ResolveNamespace(o, client);
  absl::StatusOr<std::vector<api::Object>> objects = ReadFlowFile(o.filename, k.kind, default_ns);
  if (!objects.ok()) {
    p.Err(fmt::format("vcctl: {}", MessageOf(objects.status())));
    return kExitUsage;
  }
  int code = kExitOk;
  for (const api::Object& obj : *objects) {
    const std::string ns(obj.namespace_name());
    if (absl::Status s = api.Delete(k.ref, ns, obj.name()); !s.ok()) {
      p.Err(fmt::format("delete {} {}/{}: {}", k.kind, ns, obj.name(), MessageOf(s)));
      code = kExitApiError;
      continue;
    }
    p.Out(fmt::format("Deleted {}: {}/{}", k.kind, ns, obj.name()));
  }
  return code;
}

}  // namespace

int RunCommand(const Options& o, client::Client& client, std::ostream& out, std::ostream& err) {
  Printer p(out, err);
  Api api(&client);
  const std::string& g = o.group;
  const std::string& v = o.verb;
  if (g == "job") {
    if (v == "run") return JobRun(o, client, api, p);
    if (v == "list") return JobList(o, client, api, p);
    if (v == "view") return JobView(o, client, api, p);
    if (v == "suspend") return JobCommand(o, client, api, p, api::Action::kAbortJob);
    if (v == "resume") return JobCommand(o, client, api, p, api::Action::kResumeJob);
    if (v == "delete") return JobDelete(o, client, api, p);
  }
  if (g == "queue") {
    if (v == "create") return QueueCreate(o, api, p);
    if (v == "list") return QueueList(api, p);
    if (v == "get") return QueueGet(o, api, p);
    if (v == "operate") return QueueOperate(o, api, p);
    if (v == "delete") return QueueDelete(o, api, p);
  }
  if (g == "pod" && v == "list") return PodList(o, client, api, p);
  if (g == "podgroup" && v == "list") return PodGroupList(o, client, api, p);
  if (g == "jobflow" || g == "jobtemplate") {
    if (v == "list") return FlowList(o, client, api, p);
    if (v == "create") return FlowCreate(o, client, api, p);
    if (v == "get") return FlowGet(o, client, api, p);
    if (v == "describe") return FlowDescribe(o, client, api, p);
    if (v == "delete") return FlowDelete(o, client, api, p);
  }
  p.Err(fmt::format("vcctl: unknown command \"{} {}\"", g, v));
  return kExitUsage;
}

}  // namespace basalt::cli
