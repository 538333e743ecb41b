#include "controllers/job/plugins/ssh/ssh.h"

#include <charconv>

#include "controllers/job/plugins/objects.h"
#include "controllers/job/plugins/ssh/key_pair.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr int kRsaBits = 2048;
constexpr int kModeOwnerReadWrite = 0600;
constexpr int kModeWorldReadable = 0644;

class SshPlugin final : public JobPlugin {
 public:
  SshPlugin(std::string key_path, std::string private_key, std::string public_key, int64_t port)
      : key_path_(std::move(key_path)),
        private_key_(std::move(private_key)),
        public_key_(std::move(public_key)),
        port_(port) {}

  std::string_view Name() const override { return kSshPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec&,
                           int32_t) override {
    auto& a = pod.GetAllocator();
    const std::string secret = SshSecretName(job.name());
    std::vector<KeyToPath> items;
    for (std::string_view key : {kSshPrivateKey, kSshPublicKey, kSshAuthorizedKeys, kSshConfig}) {
      items.push_back({std::string(key), fmt::format("{}/{}", kSshRelativePath, key)});
    }
    // ssh refuses private keys other users can read; a custom path is often shared with
    // non-root users, hence 0644 there (as Volcano does).
    const int mode = key_path_ == kSshDefaultKeyPath ? kModeOwnerReadWrite : kModeWorldReadable;
    AddVolume(pod, SecretVolume(secret, secret, items, mode, a));
    const VolumeMount mount{secret, key_path_, std::string(kSshRelativePath)};
    ForEachContainer(pod, /*init=*/true,
                     [&](json::Value& c) { AddVolumeMount(c, EncodeVolumeMount(mount, a), a); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job& job) override {
    SshKeyPair keys;
    if (private_key_.empty()) {
      auto generated = GenerateRsaKeyPair(kRsaBits);
      if (!generated.ok()) return generated.status();
      keys = *std::move(generated);
    } else {
      keys.private_key_pem = private_key_;
      keys.public_key = public_key_;
      if (keys.public_key.empty()) {
        auto derived = OpenSshPublicKeyFromPrivatePem(private_key_);
        if (!derived.ok()) {
          return absl::InvalidArgumentError(
              fmt::format("plugin ssh: --ssh-private-key: {}", derived.status().ToString()));
        }
        keys.public_key = *std::move(derived);
      }
    }
    const std::vector<std::pair<std::string, std::string>> data = {
        {std::string(kSshPrivateKey), keys.private_key_pem},
        {std::string(kSshPublicKey), keys.public_key},
        {std::string(kSshAuthorizedKeys), keys.public_key},
        {std::string(kSshConfig), SshConfig(job, port_)},
    };
    std::vector<json::Document> out;
    out.push_back(BuildOpaqueSecret(job, SshSecretName(job.name()), data));
    return out;
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job& job) override {
    return {{"v1", "Secret", std::string(job.namespace_name()), SshSecretName(job.name())}};
  }

 private:
  const std::string key_path_;
  const std::string private_key_;
  const std::string public_key_;
  const int64_t port_;
};

}  // namespace

std::string SshSecretName(std::string_view job) { return fmt::format("{}-ssh", job); }

std::string SshConfig(const api::Job& job, int64_t port) {
  std::string config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n";
  for (const auto& task : job.spec().tasks) {
    const std::string_view tmpl_hostname = task.TemplateSpecString("hostname");
    std::string_view subdomain = task.TemplateSpecString("subdomain");
    if (subdomain.empty()) subdomain = job.name();
    for (int32_t i = 0; i < task.replicas; ++i) {
      const std::string hostname = tmpl_hostname.empty() ? MakePodName(job.name(), task.name, i)
                                                         : std::string(tmpl_hostname);
      config += fmt::format("Host {}\n  HostName {}.{}\n  Port {}\n", hostname, hostname, subdomain,
                            port);
      if (!tmpl_hostname.empty()) break;  // every pod of the task has the same name
    }
  }
  return config;
}

absl::StatusOr<std::unique_ptr<JobPlugin>> NewSshPlugin(const std::vector<std::string>& args) {
  std::string key_path(kSshDefaultKeyPath);
  std::string private_key;
  std::string public_key;
  std::string port_text = "22";
  FlagSet flags(kSshPluginName);
  flags.String("ssh-key-file-path", &key_path);
  flags.String("ssh-private-key", &private_key);
  flags.String("ssh-public-key", &public_key);
  flags.String("ssh-port", &port_text);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  // A port that is not a number in 1..65535 falls back to 22, as in Volcano.
  int64_t port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 1 || port > 65535) {
    port = 22;
  }
  if (key_path.empty()) key_path = std::string(kSshDefaultKeyPath);
  return std::make_unique<SshPlugin>(std::move(key_path), std::move(private_key),
                                     std::move(public_key), port);
}

}  // namespace basalt::controllers
