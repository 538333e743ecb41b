#include "controllers/job/job.h"

#include <cmath>
#include <utility>

#include "common/util/duration.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

int32_t ToInt32(int64_t v) {
  if (v > INT32_MAX) return INT32_MAX;
  if (v < INT32_MIN) return INT32_MIN;
  return static_cast<int32_t>(v);
}

std::optional<int32_t> OptionalInt32(const json::Value& obj, std::string_view key) {
  auto v = json::GetOptionalInt(obj, key);
  if (!v) return std::nullopt;
  return ToInt32(*v);
}

std::map<std::string, std::string> StringMap(const json::Value* obj) {
  std::map<std::string, std::string> out;
  if (obj == nullptr || !obj->IsObject()) return out;
  for (const auto& m : obj->GetObject()) {
    if (m.value.IsString()) out.emplace(json::AsView(m.name), json::AsView(m.value));
  }
  return out;
}

absl::StatusOr<std::vector<LifecyclePolicy>> ParsePolicies(const json::Value* list) {
  std::vector<LifecyclePolicy> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& p : list->GetArray()) {
    if (!p.IsObject()) continue;
    LifecyclePolicy policy;
    policy.action = std::string(json::GetString(p, "action"));
    if (auto e = json::GetOptionalString(p, "event")) {
      if (auto ev = ParseEvent(*e); ev && *ev != Event::kNone) policy.events.push_back(*ev);
    }
    if (const json::Value* events = json::Find(p, "events"); events && events->IsArray()) {
      for (const auto& e : events->GetArray()) {
        if (auto ev = ParseEvent(json::AsView(e)); ev && *ev != Event::kNone) {
          policy.events.push_back(*ev);
        }
      }
    }
    policy.exit_code = OptionalInt32(p, "exitCode");
    if (auto t = json::GetOptionalString(p, "timeout")) {
      auto d = ParseGoDuration(*t);
      if (!d.ok()) return d.status();
      policy.timeout = std::chrono::round<std::chrono::milliseconds>(*d);
    }
    out.push_back(std::move(policy));
  }
  return out;
}

std::optional<NetworkTopologyView> ParseNetworkTopology(const json::Value* nt) {
  if (nt == nullptr || !nt->IsObject()) return std::nullopt;
  NetworkTopologyView t;
  t.mode = std::string(json::GetString(*nt, "mode", "hard"));
  t.highest_tier_allowed = OptionalInt32(*nt, "highestTierAllowed");
  t.highest_tier_name = std::string(json::GetString(*nt, "highestTierName"));
  return t;
}

std::shared_ptr<const json::Document> CopyTemplate(const json::Value* tmpl) {
  auto doc = std::make_shared<json::Document>();
  if (tmpl != nullptr && tmpl->IsObject()) {
    doc->CopyFrom(*tmpl, doc->GetAllocator());
  } else {
    doc->SetObject();
  }
  return doc;
}

}  // namespace

std::string_view TaskSpecView::TemplateSpecString(std::string_view key) const {
  if (pod_template == nullptr) return {};
  const json::Value* spec = json::Find(*pod_template, "spec");
  return spec == nullptr ? std::string_view() : json::GetString(*spec, key);
}

int32_t JobSpecView::TotalReplicas() const {
  int64_t total = 0;
  for (const auto& t : tasks) total += t.replicas;
  return ToInt32(total);
}

int32_t JobSpecView::TotalTaskMinAvailable() const {
  int64_t total = 0;
  for (const auto& t : tasks) total += t.min_available.value_or(t.replicas);
  return ToInt32(total);
}

const TaskSpecView* JobSpecView::FindTask(std::string_view name) const {
  for (const auto& t : tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::optional<int32_t> JobCounts::TaskSucceeded(std::string_view task) const {
  auto it = task_status_count.find(std::string(task));
  if (it == task_status_count.end()) return std::nullopt;
  auto p = it->second.find("Succeeded");
  return p == it->second.end() ? 0 : p->second;
}

absl::StatusOr<JobView> ParseJob(const json::Value& job) {
  if (!job.IsObject()) return absl::InvalidArgumentError("job must be a JSON object");
  JobView view;
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value* meta = json::Find(job, "metadata");
  if (meta == nullptr) meta = &kEmpty;
  view.name = std::string(json::GetString(*meta, "name"));
  view.namespace_name = std::string(json::GetString(*meta, "namespace"));
  view.uid = std::string(json::GetString(*meta, "uid"));
  view.labels = StringMap(json::Find(*meta, "labels"));
  view.annotations = StringMap(json::Find(*meta, "annotations"));

  const json::Value* spec = json::Find(job, "spec");
  if (spec == nullptr) spec = &kEmpty;
  JobSpecView& s = view.spec;
  s.scheduler_name = std::string(json::GetString(*spec, "schedulerName"));
  s.queue = std::string(json::GetString(*spec, "queue", "default"));
  if (s.queue.empty()) s.queue = "default";
  s.priority_class_name = std::string(json::GetString(*spec, "priorityClassName"));
  s.min_available = ToInt32(json::GetInt(*spec, "minAvailable", 0));
  s.max_retry = ToInt32(json::GetInt(*spec, "maxRetry", 3));
  s.min_success = OptionalInt32(*spec, "minSuccess");
  s.network_topology = ParseNetworkTopology(json::Find(*spec, "networkTopology"));
  if (const json::Value* vols = json::Find(*spec, "volumes"); vols && vols->IsArray()) {
    for (const auto& v : vols->GetArray()) {
      JobVolumeView vol;
      vol.mount_path = std::string(json::GetString(v, "mountPath"));
      vol.volume_claim_name = std::string(json::GetString(v, "volumeClaimName"));
      if (const json::Value* claim = json::Find(v, "volumeClaim"); claim && claim->IsObject()) {
        vol.volume_claim = CopyTemplate(claim);
      }
      s.volumes.push_back(std::move(vol));
    }
  }
  BASALT_ASSIGN_OR_RETURN(s.policies, ParsePolicies(json::Find(*spec, "policies")));
  if (const json::Value* tasks = json::Find(*spec, "tasks"); tasks && tasks->IsArray()) {
    for (const auto& t : tasks->GetArray()) {
      TaskSpecView task;
      task.name = std::string(json::GetString(t, "name"));
      task.replicas = ToInt32(json::GetInt(t, "replicas", 0));
      task.min_available = OptionalInt32(t, "minAvailable");
      task.max_retry = ToInt32(json::GetInt(t, "maxRetry", 0));
      task.topology_policy = std::string(json::GetString(t, "topologyPolicy"));
      BASALT_ASSIGN_OR_RETURN(task.policies, ParsePolicies(json::Find(t, "policies")));
      if (const json::Value* dep = json::Find(t, "dependsOn"); dep && dep->IsObject()) {
        DependsOnView d;
        if (const json::Value* names = json::Find(*dep, "name"); names && names->IsArray()) {
          for (const auto& n : names->GetArray()) {
            if (n.IsString()) d.names.emplace_back(json::AsView(n));
          }
        }
        d.iteration = std::string(json::GetString(*dep, "iteration"));
        task.depends_on = std::move(d);
      }
      if (const json::Value* pp = json::Find(t, "partitionPolicy"); pp && pp->IsObject()) {
        PartitionPolicyView p;
        p.total_partitions = ToInt32(json::GetInt(*pp, "totalPartitions"));
        p.partition_size = ToInt32(json::GetInt(*pp, "partitionSize"));
        p.min_partitions = ToInt32(json::GetInt(*pp, "minPartitions"));
        p.network_topology = ParseNetworkTopology(json::Find(*pp, "networkTopology"));
        task.partition_policy = std::move(p);
      }
      const json::Value* tmpl = json::Find(t, "template");
      if (tmpl != nullptr && !tmpl->IsObject()) {
        return absl::InvalidArgumentError(
            fmt::format("task \"{}\": template must be an object", task.name));
      }
      task.pod_template = CopyTemplate(tmpl);
      s.tasks.push_back(std::move(task));
    }
  }
  if (const json::Value* plugins = json::Find(*spec, "plugins"); plugins && plugins->IsObject()) {
    for (const auto& p : plugins->GetObject()) {
      std::vector<std::string> args;
      if (p.value.IsArray()) {
        for (const auto& a : p.value.GetArray()) {
          if (a.IsString()) args.emplace_back(json::AsView(a));
        }
      }
      s.plugins.emplace(json::AsView(p.name), std::move(args));
    }
  }

  const json::Value* status = json::Find(job, "status");
  if (status == nullptr) status = &kEmpty;
  if (const json::Value* state = json::Find(*status, "state")) {
    view.phase_name = std::string(json::GetString(*state, "phase"));
  }
  JobCounts& c = view.status;
  c.pending = ToInt32(json::GetInt(*status, "pending"));
  c.running = ToInt32(json::GetInt(*status, "running"));
  c.succeeded = ToInt32(json::GetInt(*status, "succeeded"));
  c.failed = ToInt32(json::GetInt(*status, "failed"));
  c.terminating = ToInt32(json::GetInt(*status, "terminating"));
  c.unknown = ToInt32(json::GetInt(*status, "unknown"));
  c.version = ToInt32(json::GetInt(*status, "version"));
  c.retry_count = ToInt32(json::GetInt(*status, "retryCount"));
  c.min_available = ToInt32(json::GetInt(*status, "minAvailable"));
  view.controlled_resources = StringMap(json::Find(*status, "controlledResources"));
  if (const json::Value* tsc = json::Find(*status, "taskStatusCount"); tsc && tsc->IsObject()) {
    for (const auto& t : tsc->GetObject()) {
      auto& phases = c.task_status_count[std::string(json::AsView(t.name))];
      if (const json::Value* ph = json::Find(t.value, "phase"); ph && ph->IsObject()) {
        for (const auto& p : ph->GetObject()) {
          if (p.value.IsInt64())
            phases[std::string(json::AsView(p.name))] = ToInt32(p.value.GetInt64());
        }
      }
    }
  }
  return view;
}

std::string MakePodName(std::string_view job, std::string_view task, int32_t index) {
  return fmt::format("{}-{}-{}", job, task, index);
}

}  // namespace basalt::controllers
