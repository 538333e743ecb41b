#include "controllers/job/validate/validate.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/resource/resource_list.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

void CheckContainers(const api::TaskSpec& task, size_t t, std::vector<std::string>& out) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value& tmpl = task.pod_template ? *task.pod_template : kEmpty;
  const json::Value* spec = json::Find(tmpl, "spec");
  const json::Value* containers = spec != nullptr ? json::Find(*spec, "containers") : nullptr;
  if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
    out.push_back(fmt::format(
        "spec.tasks[{}].template.spec.containers: at least one container is required", t));
    return;
  }
  auto check_list = [&](std::string_view kind, const json::Value* list) {
    size_t j = 0;
    for (const auto& c : list->GetArray()) {
      if (!c.IsObject()) {
        out.push_back(
            fmt::format("spec.tasks[{}].template.spec.{}[{}]: must be an object", t, kind, j));
      } else {
        for (std::string_view which : {"requests", "limits"}) {
          const json::Value* rl = json::FindPath(c, {"resources", which});
          if (rl == nullptr) continue;
          absl::StatusOr<resource::ResourceList> parsed = resource::ResourceList::FromJson(*rl);
          if (!parsed.ok()) {
            out.push_back(fmt::format("spec.tasks[{}].template.spec.{}[{}].resources.{}: {}", t,
                                      kind, j, which, std::string(parsed.status().message())));
          }
        }
      }
      ++j;
    }
  };
  check_list("containers", containers);
  if (const json::Value* inits = json::Find(*spec, "initContainers"); inits && inits->IsArray()) {
    check_list("initContainers", inits);
  }
}

// A dependsOn cycle as "a -> b -> a", or "" when the graph is a DAG (unknown names are
// reported separately and ignored here).
std::string FindCycle(const api::JobSpec& spec) {
  std::map<std::string, const api::TaskSpec*> by_name;
  for (const auto& t : spec.tasks) by_name.emplace(t.name, &t);
  std::map<std::string, int> state;  // 0 unvisited, 1 on the path, 2 done
  std::vector<std::string> path;
  std::string cycle;
  std::function<bool(const std::string&)> visit = [&](const std::string& name) {
    state[name] = 1;
    path.push_back(name);
    const api::TaskSpec* t = by_name[name];
    if (t->depends_on) {
      for (const std::string& dep : t->depends_on->names) {
        if (by_name.count(dep) == 0) continue;
        if (state[dep] == 1) {
          auto it = std::find(path.begin(), path.end(), dep);
          for (; it != path.end(); ++it) cycle += *it + " -> ";
          cycle += dep;
          return true;
        }
        if (state[dep] == 0 && visit(dep)) return true;
      }
    }
    path.pop_back();
    state[name] = 2;
    return false;
  };
  for (const auto& t : spec.tasks) {
    if (state[t.name] == 0 && visit(t.name)) return cycle;
  }
  return "";
}

}  // namespace

std::vector<std::string> ValidateJobSpec(const api::JobSpec& spec) {
  std::vector<std::string> out;
  if (spec.min_available < 0) {
    out.push_back(
        fmt::format("spec.minAvailable: must not be negative, got {}", spec.min_available));
  }
  if (spec.max_retry < 0) {
    out.push_back(fmt::format("spec.maxRetry: must not be negative, got {}", spec.max_retry));
  }
  if (spec.tasks.empty()) {
    out.push_back("spec.tasks: no task specified in the job spec");
    return out;
  }
  std::set<std::string> names;
  for (const auto& t : spec.tasks) names.insert(t.name);
  std::set<std::string> seen;
  int64_t total = 0;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    const api::TaskSpec& t = spec.tasks[i];
    if (!seen.insert(t.name).second) {
      out.push_back(fmt::format("spec.tasks[{}].name: duplicated task name \"{}\"", i, t.name));
    }
    if (t.replicas < 0) {
      out.push_back(
          fmt::format("spec.tasks[{}].replicas: must not be negative, got {}", i, t.replicas));
    } else {
      total += t.replicas;
    }
    if (t.min_available && *t.min_available < 0) {
      out.push_back(fmt::format("spec.tasks[{}].minAvailable: must not be negative, got {}", i,
                                *t.min_available));
    } else if (t.min_available && *t.min_available > t.replicas && t.replicas >= 0) {
      out.push_back(fmt::format("spec.tasks[{}].minAvailable: {} is greater than replicas {}", i,
                                *t.min_available, t.replicas));
    }
    CheckContainers(t, i, out);
    if (t.depends_on) {
      for (const std::string& dep : t.depends_on->names) {
        if (names.count(dep) == 0) {
          out.push_back(
              fmt::format("spec.tasks[{}].dependsOn.name: task \"{}\" does not exist", i, dep));
        } else if (dep == t.name) {
          out.push_back(
              fmt::format("spec.tasks[{}].dependsOn.name: task \"{}\" depends on itself", i, dep));
        }
      }
    }
  }
  if (spec.min_available > total) {
    out.push_back(
        fmt::format("spec.minAvailable: {} is greater than the total replicas {} of the tasks",
                    spec.min_available, total));
  }
  if (std::string cycle = FindCycle(spec);
      !cycle.empty() && cycle.find(" -> ") != cycle.rfind(" -> ")) {
    out.push_back(fmt::format("spec.tasks: dependsOn forms a cycle ({})", cycle));
  }
  std::set<std::string> mount_paths;
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    const api::JobVolume& v = spec.volumes[i];
    if (v.mount_path.empty()) {
      out.push_back(fmt::format("spec.volumes[{}].mountPath: required", i));
    } else if (!mount_paths.insert(v.mount_path).second) {
      out.push_back(
          fmt::format("spec.volumes[{}].mountPath: duplicated mount path \"{}\"", i, v.mount_path));
    }
    if (v.volume_claim_name.empty() && !v.volume_claim) {
      out.push_back(fmt::format(
          "spec.volumes[{}]: either volumeClaim or volumeClaimName must be specified", i));
    }
  }
  return out;
}

std::vector<std::string> ValidateJobSize(const api::JobSpec& spec, int64_t max_pods) {
  int64_t total = 0;
  for (const api::TaskSpec& t : spec.tasks) total += std::max<int64_t>(t.replicas, 0);
  if (total <= max_pods) return {};
  return {fmt::format(
      "spec.tasks: {} pods in total is more than the job controller creates for one job "
      "(--max-job-pods={}); no pod is created: lower the tasks' replicas, or raise "
      "--max-job-pods of vc-controller-manager (and of the webhook)",
      total, max_pods)};
}

std::string JoinProblems(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& p : problems) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return out;
}

}  // namespace basalt::controllers
