#pragma once
// Job plugins (spec.plugins: env, svc, ssh, mpi, pytorch, tensorflow, ray, hcclrank): the JobPlugin
// interface, the Go-flag-style argument parser they share, and small helpers for editing pod JSON.
//
// A JobPlugin is created per job from the job's argument list (see registry.h) and is
// stateless beyond its parsed arguments; the reconcile loop calls
//   OnJobAdd     when the job is (re)initiated: objects to create (AlreadyExists is fine),
//   OnJobUpdate  on each later sync: objects to replace,
//   OnPodCreate  on each pod before it is created: edits the pod,
//   OnJobDelete  on each kill: objects to delete (NotFound is fine).
// The loop also keeps status.controlledResources["plugin-<name>"] = <name>: set after OnJobAdd
// succeeds, removed after OnJobDelete, and skips OnJobAdd while the key is present.
//
// Plugins are immutable after construction; thread-safe.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/util/json.h"
#include "controllers/job/model.h"

namespace basalt::controllers {

// A namespaced object a plugin owns, for deletion.
struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
  bool operator==(const ObjectRef&) const = default;
};

class JobPlugin {
 public:
  virtual ~JobPlugin() = default;

  // The name in spec.plugins ("svc").
  virtual std::string_view Name() const = 0;

  // Edits `pod` (as built by BuildPod for pod `index` of `task`) before it is created.
  virtual absl::Status OnPodCreate(json::Document& pod, const api::Job& job,
                                   const api::TaskSpec& task, int32_t index) = 0;

  // Objects to create when the job is initiated.
  virtual absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job& job) = 0;

  // Objects to replace on each sync after initiation (default: none).
  virtual absl::StatusOr<std::vector<json::Document>> OnJobUpdate(const api::Job& job);

  // Objects to delete when the job's pods are killed.
  virtual std::vector<ObjectRef> OnJobDelete(const api::Job& job) = 0;
};

// status.controlledResources key of a plugin: "plugin-<name>".
std::string ControlledResourceKey(std::string_view plugin);
// Whether the plugin's OnJobAdd still has to run for `job` (its controlledResources key is
// absent: never added, or removed by a kill's OnJobDelete).
bool NeedsOnJobAdd(const api::Job& job, std::string_view plugin);

// Parses plugin arguments the way Go's flag package does: "--name=value", "-name=value",
// "--name value" (non-bool flags), "--name" (bool flags, = true), "--name=false"; parsing stops
// at "--" or at the first argument that is not a flag. Flags keep their defaults when absent.
class FlagSet {
 public:
  explicit FlagSet(std::string_view plugin) : plugin_(plugin) {}
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // Registers a flag writing into `*target` (whose current value is the default). `target`
  // must outlive Parse().
  void String(std::string name, std::string* target);
  void Int(std::string name, int64_t* target);
  void Bool(std::string name, bool* target);

  // Errors (kInvalidArgument) name the plugin and the flag: an undefined flag, a missing or
  // malformed value. Deliberate difference: Volcano logs the error and runs the plugin with
  // whatever was parsed so far; Basalt reports it (PluginError), and the webhook can reject the
  // job up front with the same parser.
  absl::Status Parse(const std::vector<std::string>& args);

 private:
  enum class Kind { kString, kInt, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* target;
  };
  std::string plugin_;
  std::vector<Flag> flags_;
};

// ---- Pod editing helpers (pod = a Pod object built by BuildPod) ------------------------------

// Calls `fn` for every container, then (if `init`) every init container of pod.spec.
void ForEachContainer(json::Document& pod, bool init, const std::function<void(json::Value&)>& fn);
// Appends env {name, value} unless the container already defines `name` (user values win).
void AddEnv(json::Value& container, std::string_view name, std::string_view value,
            json::Allocator& alloc);
// Appends env {name, valueFrom.configMapKeyRef{name: config_map, key}} unless defined.
void AddEnvFromConfigMap(json::Value& container, std::string_view name, std::string_view config_map,
                         std::string_view key, json::Allocator& alloc);
// Appends `volume` to pod.spec.volumes unless a volume of that name exists.
void AddVolume(json::Document& pod, json::Value volume);
// Appends `mount` to the container's volumeMounts unless its mountPath is already mounted.
void AddVolumeMount(json::Value& container, json::Value mount, json::Allocator& alloc);
// Appends ports[] {name, containerPort, protocol TCP} unless that port number or name exists.
void AddContainerPort(json::Value& container, std::string_view name, int64_t port,
                      json::Allocator& alloc);
// pod.spec.<key> ("" when absent).
std::string_view PodSpecString(const json::Document& pod, std::string_view key);

// The DNS names of a task's pods, `<hostname>.<subdomain>`: hostname = the template's hostname
// (then a single entry, as all pods share it) or `<job>-<task>-<i>`; subdomain = the
// template's subdomain or the job name (the svc plugin's headless Service).
std::vector<std::string> TaskHosts(const api::Job& job, const api::TaskSpec& task);

// A new object {apiVersion, kind, metadata{name, namespace, labels{volcano.sh/job-name,
// volcano.sh/job-namespace}, ownerReferences[job]}} to fill in.
json::Document NewOwnedObject(const api::Job& job, std::string_view api_version,
                              std::string_view kind, std::string_view name);

}  // namespace basalt::controllers
