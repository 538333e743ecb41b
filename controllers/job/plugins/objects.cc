#include "controllers/job/plugins/objects.h"

#include "absl/strings/escaping.h"
#include "common/api/codec.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {
namespace {

using api::WriteInt;
using api::WriteString;
using api::WriteStringMap;

// {matchLabels: labels}.
json::Value MatchLabels(const api::StringMap& labels, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  WriteStringMap(v, "matchLabels", labels, a);
  return v;
}

}  // namespace

api::StringMap JobPodSelector(const api::Job& job) {
  return api::StringMap{{std::string(api::kJobNameKey), std::string(job.name())},
                        {std::string(api::kJobNamespaceKey), std::string(job.namespace_name())}};
}

json::Document BuildService(const api::Job& job, std::string_view name, const ServiceSpec& spec) {
  json::Document svc = NewOwnedObject(job, "v1", "Service", name);
  auto& a = svc.GetAllocator();
  json::Value s(rapidjson::kObjectType);
  if (spec.headless) WriteString(s, "clusterIP", "None", a);
  WriteStringMap(s, "selector", spec.selector, a);
  if (spec.publish_not_ready_addresses) {
    api::WriteBool(s, "publishNotReadyAddresses", *spec.publish_not_ready_addresses, a);
  }
  if (!spec.ports.empty()) {
    json::Value ports(rapidjson::kArrayType);
    for (const ServicePort& p : spec.ports) {
      json::Value v(rapidjson::kObjectType);
      WriteString(v, "name", p.name, a);
      WriteInt(v, "port", p.port, a);
      WriteString(v, "targetPort", p.target_port, a);
      WriteString(v, "protocol", "TCP", a);
      ports.PushBack(std::move(v), a);
    }
    json::Set(s, "ports", std::move(ports), a);
  }
  json::Set(svc, "spec", std::move(s), a);
  return svc;
}

json::Document BuildConfigMap(const api::Job& job, std::string_view name,
                              const std::map<std::string, std::string>& data) {
  json::Document cm = NewOwnedObject(job, "v1", "ConfigMap", name);
  WriteStringMap(cm, "data", api::StringMap(data.begin(), data.end()), cm.GetAllocator());
  return cm;
}

json::Document BuildOpaqueSecret(const api::Job& job, std::string_view name,
                                 const std::vector<std::pair<std::string, std::string>>& data) {
  json::Document secret = NewOwnedObject(job, "v1", "Secret", name);
  auto& a = secret.GetAllocator();
  WriteString(secret, "type", "Opaque", a);
  json::Value encoded(rapidjson::kObjectType);
  for (const auto& [k, v] : data) WriteString(encoded, k, absl::Base64Escape(v), a);
  json::Set(secret, "data", std::move(encoded), a);
  return secret;
}

json::Document BuildIngressFromPeersPolicy(const api::Job& job, std::string_view name,
                                           const api::StringMap& pod_labels) {
  json::Document np = NewOwnedObject(job, "networking.k8s.io/v1", "NetworkPolicy", name);
  auto& a = np.GetAllocator();
  json::Value peer(rapidjson::kObjectType);
  json::Set(peer, "podSelector", MatchLabels(pod_labels, a), a);
  json::Value from(rapidjson::kArrayType);
  from.PushBack(std::move(peer), a);
  json::Value rule(rapidjson::kObjectType);
  json::Set(rule, "from", std::move(from), a);
  json::Value ingress(rapidjson::kArrayType);
  ingress.PushBack(std::move(rule), a);
  json::Value s(rapidjson::kObjectType);
  json::Set(s, "podSelector", MatchLabels(pod_labels, a), a);
  json::Set(s, "ingress", std::move(ingress), a);
  api::WriteStringList(s, "policyTypes", {"Ingress"}, a);
  json::Set(np, "spec", std::move(s), a);
  return np;
}

json::Value ConfigMapVolume(std::string_view name, std::string_view config_map,
                            json::Allocator& alloc) {
  json::Value source(rapidjson::kObjectType);
  WriteString(source, "name", config_map, alloc);
  json::Value volume(rapidjson::kObjectType);
  WriteString(volume, "name", name, alloc);
  json::Set(volume, "configMap", std::move(source), alloc);
  return volume;
}

json::Value SecretVolume(std::string_view name, std::string_view secret,
                         const std::vector<KeyToPath>& items, int32_t default_mode,
                         json::Allocator& alloc) {
  json::Value list(rapidjson::kArrayType);
  for (const KeyToPath& item : items) {
    json::Value v(rapidjson::kObjectType);
    WriteString(v, "key", item.key, alloc);
    WriteString(v, "path", item.path, alloc);
    list.PushBack(std::move(v), alloc);
  }
  json::Value source(rapidjson::kObjectType);
  WriteString(source, "secretName", secret, alloc);
  json::Set(source, "items", std::move(list), alloc);
  WriteInt(source, "defaultMode", default_mode, alloc);
  json::Value volume(rapidjson::kObjectType);
  WriteString(volume, "name", name, alloc);
  json::Set(volume, "secret", std::move(source), alloc);
  return volume;
}

json::Value EncodeVolumeMount(const VolumeMount& mount, json::Allocator& alloc) {
  json::Value v(rapidjson::kObjectType);
  WriteString(v, "name", mount.name, alloc);
  WriteString(v, "mountPath", mount.mount_path, alloc);
  if (!mount.sub_path.empty()) WriteString(v, "subPath", mount.sub_path, alloc);
  return v;
}

json::Value ShellCommand(std::string_view script, json::Allocator& alloc) {
  json::Value command(rapidjson::kArrayType);
  for (std::string_view arg : {std::string_view("sh"), std::string_view("-c"), script}) {
    command.PushBack(json::MakeString(arg, alloc), alloc);
  }
  return command;
}

}  // namespace basalt::controllers
