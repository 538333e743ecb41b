#include "controllers/job/plugins/svc/svc.h"

#include <cctype>

#include "common/api/vocabulary.h"
#include "controllers/job/plugins/objects.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

std::string Underscored(std::string_view task) {
  std::string t(task);
  for (char& c : t) {
    if (c == '-') c = '_';
  }
  return t;
}

std::string UpperUnderscored(std::string_view task) {
  std::string t = Underscored(task);
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return t;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

class SvcPlugin final : public JobPlugin {
 public:
  SvcPlugin(bool publish_not_ready, bool disable_network_policy, bool inject_hosts_env)
      : publish_not_ready_(publish_not_ready),
        disable_network_policy_(disable_network_policy),
        inject_hosts_env_(inject_hosts_env) {}

  std::string_view Name() const override { return kSvcPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec&,
                           int32_t) override {
    auto& a = pod.GetAllocator();
    json::Value& spec = json::EnsureObject(pod, "spec", a);
    if (json::GetString(spec, "hostname").empty()) {
      const json::Value* meta = json::Find(pod, "metadata");
      const std::string_view name = meta ? json::GetString(*meta, "name") : std::string_view();
      json::Set(spec, "hostname", json::MakeString(name, a), a);
    }
    if (json::GetString(spec, "subdomain").empty()) {
      json::Set(spec, "subdomain", json::MakeString(job.name(), a), a);
    }
    const std::string cm = SvcConfigMapName(job.name());
    AddVolume(pod, ConfigMapVolume(cm, cm, a));
    const VolumeMount mount{cm, std::string(kSvcConfigMapMountPath), ""};
    ForEachContainer(pod, /*init=*/true, [&](json::Value& c) {
      AddVolumeMount(c, EncodeVolumeMount(mount, a), a);
      if (!inject_hosts_env_) return;
      for (const auto& task : job.spec().tasks) {
        const std::string hosts = HostsEnvName(task.name);
        const std::string num = NumEnvName(task.name);
        AddEnvFromConfigMap(c, hosts, cm, hosts, a);
        AddEnvFromConfigMap(c, num, cm, num, a);
      }
    });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job& job) override {
    std::vector<json::Document> out;
    out.push_back(ConfigMap(job));
    out.push_back(Service(job));
    if (!disable_network_policy_) out.push_back(NetworkPolicy(job));
    return out;
  }

  absl::StatusOr<std::vector<json::Document>> OnJobUpdate(const api::Job& job) override {
    std::vector<json::Document> out;
    out.push_back(ConfigMap(job));
    return out;
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job& job) override {
    std::vector<ObjectRef> refs = {
        {"v1", "ConfigMap", std::string(job.namespace_name()), SvcConfigMapName(job.name())},
        {"v1", "Service", std::string(job.namespace_name()), std::string(job.name())},
    };
    if (!disable_network_policy_) {
      refs.push_back({"networking.k8s.io/v1", "NetworkPolicy", std::string(job.namespace_name()),
                      std::string(job.name())});
    }
    return refs;
  }

 private:
  json::Document ConfigMap(const api::Job& job) const {
    return BuildConfigMap(job, SvcConfigMapName(job.name()), SvcHostsData(job));
  }

  json::Document Service(const api::Job& job) const {
    ServiceSpec spec;
    spec.headless = true;
    spec.selector = JobPodSelector(job);
    spec.publish_not_ready_addresses = publish_not_ready_;
    return BuildService(job, job.name(), spec);
  }

  json::Document NetworkPolicy(const api::Job& job) const {
    return BuildIngressFromPeersPolicy(job, job.name(), JobPodSelector(job));
  }

  const bool publish_not_ready_;
  const bool disable_network_policy_;
  const bool inject_hosts_env_;
};

}  // namespace

std::string SvcConfigMapName(std::string_view job) { return fmt::format("{}-svc", job); }

std::string HostsEnvName(std::string_view task) {
  return fmt::format("VC_{}_HOSTS", UpperUnderscored(task));
}

std::string NumEnvName(std::string_view task) {
  return fmt::format("VC_{}_NUM", UpperUnderscored(task));
}

std::map<std::string, std::string> SvcHostsData(const api::Job& job) {
  std::map<std::string, std::string> data;
  for (const auto& task : job.spec().tasks) {
    const std::vector<std::string> hosts = TaskHosts(job, task);
    data[fmt::format("{}.host", Underscored(task.name))] = Join(hosts, "\n");
    data[HostsEnvName(task.name)] = Join(hosts, ",");
    data[NumEnvName(task.name)] = std::to_string(hosts.size());
  }
  return data;
}

absl::StatusOr<std::unique_ptr<JobPlugin>> NewSvcPlugin(const std::vector<std::string>& args) {
  bool publish_not_ready = false;
  bool disable_network_policy = false;
  bool inject_hosts_env = true;
  FlagSet flags(kSvcPluginName);
  flags.Bool("publish-not-ready-addresses", &publish_not_ready);
  flags.Bool("disable-network-policy", &disable_network_policy);
  flags.Bool("inject-hosts-env", &inject_hosts_env);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<SvcPlugin>(publish_not_ready, disable_network_policy, inject_hosts_env);
}

}  // namespace basalt::controllers
