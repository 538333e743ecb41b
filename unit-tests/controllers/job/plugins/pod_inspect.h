#pragma once
// Read helpers over built pods for the plugin tests.

#include <optional>
#include <string>
#include <vector>

#include "common/util/json.h"
#include "controllers/job/pods/pods.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers::testing {

// The containers (or init containers) of a pod.
inline std::vector<const json::Value*> Containers(const json::Value& pod, bool init = false) {
  std::vector<const json::Value*> out;
  const json::Value* list = json::FindPath(pod, {"spec", init ? "initContainers" : "containers"});
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& c : list->GetArray()) out.push_back(&c);
  return out;
}

// The literal value of env `name` in a container, nullopt when not set.
inline std::optional<std::string> Env(const json::Value& container, std::string_view name) {
  const json::Value* env = json::Find(container, "env");
  if (env == nullptr) return std::nullopt;
  for (const auto& e : env->GetArray()) {
    if (json::GetString(e, "name") == name) return std::string(json::GetString(e, "value"));
  }
  return std::nullopt;
}

// "configmap/key" of env `name` set from a ConfigMap, nullopt when not set that way.
inline std::optional<std::string> EnvFromConfigMap(const json::Value& container,
                                                   std::string_view name) {
  const json::Value* env = json::Find(container, "env");
  if (env == nullptr) return std::nullopt;
  for (const auto& e : env->GetArray()) {
    if (json::GetString(e, "name") != name) continue;
    const json::Value* ref = json::FindPath(e, {"valueFrom", "configMapKeyRef"});
    if (ref == nullptr) return std::nullopt;
    return std::string(json::GetString(*ref, "name")) + "/" +
           std::string(json::GetString(*ref, "key"));
  }
  return std::nullopt;
}

// The volume named `name` of a pod, or nullptr.
inline const json::Value* Volume(const json::Value& pod, std::string_view name) {
  const json::Value* vols = json::FindPath(pod, {"spec", "volumes"});
  if (vols == nullptr) return nullptr;
  for (const auto& v : vols->GetArray()) {
    if (json::GetString(v, "name") == name) return &v;
  }
  return nullptr;
}

// The mount of volume `name` in a container, or nullptr.
inline const json::Value* Mount(const json::Value& container, std::string_view name) {
  const json::Value* mounts = json::Find(container, "volumeMounts");
  if (mounts == nullptr) return nullptr;
  for (const auto& m : mounts->GetArray()) {
    if (json::GetString(m, "name") == name) return &m;
  }
  return nullptr;
}

// containerPort of the port named `name`, or -1.
inline int64_t PortNamed(const json::Value& container, std::string_view name) {
  const json::Value* ports = json::Find(container, "ports");
  if (ports == nullptr) return -1;
  for (const auto& p : ports->GetArray()) {
    if (json::GetString(p, "name") == name) return json::GetInt(p, "containerPort");
  }
  return -1;
}

// Builds pod `index` of the task named `task` and runs `plugin.OnPodCreate` on it.
inline json::Document PodWith(JobPlugin& plugin, const api::Job& job, std::string_view task,
                              int32_t index) {
  const api::TaskSpec* t = job.spec().FindTask(task);
  REQUIRE(t != nullptr);
  auto pod = BuildPod(job, *t, index);
  REQUIRE(pod.ok());
  REQUIRE(plugin.OnPodCreate(*pod, job, *t, index).ok());
  return *std::move(pod);
}

}  // namespace basalt::controllers::testing
