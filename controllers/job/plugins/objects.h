#pragma once
// The Kubernetes objects job plugins own and the pod parts they add, built from small typed
// descriptions instead of member-by-member JSON: Service, ConfigMap, Secret, NetworkPolicy
// (each with the job's controller ownerReference and its volcano.sh/job-name and
// job-namespace labels), and the ConfigMap and Secret volumes, volume mounts and commands
// plugins add to pods. Each builder writes the members in one fixed order.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/api/object.h"
#include "common/util/json.h"
#include "controllers/job/model.h"

namespace basalt::controllers {

// volcano.sh/job-name and volcano.sh/job-namespace of `job`: what selects the job's pods.
api::StringMap JobPodSelector(const api::Job& job);

// One spec.ports entry of a Service (protocol TCP); target_port names a container port.
struct ServicePort {
  std::string name;
  int64_t port = 0;
  std::string target_port;
};

struct ServiceSpec {
  bool headless = false;  // clusterIP: None
  api::StringMap selector;
  std::optional<bool> publish_not_ready_addresses;
  std::vector<ServicePort> ports;  // spec.ports, omitted when empty
};

// A v1 Service `name` owned by `job`: spec {clusterIP, selector, publishNotReadyAddresses,
// ports}, each only when set.
json::Document BuildService(const api::Job& job, std::string_view name, const ServiceSpec& spec);

// A v1 ConfigMap `name` owned by `job` with `data`.
json::Document BuildConfigMap(const api::Job& job, std::string_view name,
                              const std::map<std::string, std::string>& data);

// A v1 Secret `name` owned by `job`, type Opaque, with `data` (key, value) given in plain
// text and in the order to write (values written base64-encoded, as the data field requires).
json::Document BuildOpaqueSecret(const api::Job& job, std::string_view name,
                                 const std::vector<std::pair<std::string, std::string>>& data);

// A networking.k8s.io/v1 NetworkPolicy `name` owned by `job`: the pods matching `pod_labels`
// accept ingress only from pods matching the same labels.
json::Document BuildIngressFromPeersPolicy(const api::Job& job, std::string_view name,
                                           const api::StringMap& pod_labels);

// ---- Pod parts ---------------------------------------------------------------------------

// A volume {name, configMap{name: config_map}}.
json::Value ConfigMapVolume(std::string_view name, std::string_view config_map,
                            json::Allocator& alloc);

// One secret.items entry: the secret's `key` projected to `path`.
struct KeyToPath {
  std::string key;
  std::string path;
};

// A volume {name, secret{secretName, items, defaultMode}}.
json::Value SecretVolume(std::string_view name, std::string_view secret,
                         const std::vector<KeyToPath>& items, int32_t default_mode,
                         json::Allocator& alloc);

struct VolumeMount {
  std::string name;
  std::string mount_path;
  std::string sub_path;  // omitted when empty
};
json::Value EncodeVolumeMount(const VolumeMount& mount, json::Allocator& alloc);

// A container's command: ["sh", "-c", script].
json::Value ShellCommand(std::string_view script, json::Allocator& alloc);

}  // namespace basalt::controllers
