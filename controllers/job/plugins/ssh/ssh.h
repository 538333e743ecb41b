#pragma once
// The ssh job plugin: password-less ssh between a job's pods (MPI launchers rely on it).
//
// OnJobAdd creates a Secret `<job>-ssh` with keys `id_rsa` (a 2048-bit RSA private key, PKCS#1
// PEM, generated unless --ssh-private-key is given), `id_rsa.pub` and `authorized_keys` (the
// OpenSSH public key) and `config` (StrictHostKeyChecking off, no known_hosts, then for every
// pod `Host <hostname>` / `HostName <hostname>.<subdomain>` / `Port <port>`). OnPodCreate
// mounts the Secret at the key path (default /root/.ssh, sub-path `.ssh`) in every container and
// init container, file mode 0600 (0644 with a custom path). OnJobDelete deletes the Secret.
// OnJobUpdate does nothing: sub-path Secret mounts do not refresh anyway.
//
// Flags: --ssh-key-file-path (/root/.ssh), --ssh-private-key, --ssh-public-key,
// --ssh-port (22; a value outside 1..65535 means 22).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kSshPluginName = api::kSshPlugin;
inline constexpr std::string_view kSshDefaultKeyPath = "/root/.ssh";
inline constexpr std::string_view kSshRelativePath = ".ssh";
inline constexpr std::string_view kSshPrivateKey = "id_rsa";
inline constexpr std::string_view kSshPublicKey = "id_rsa.pub";
inline constexpr std::string_view kSshAuthorizedKeys = "authorized_keys";
inline constexpr std::string_view kSshConfig = "config";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewSshPlugin(const std::vector<std::string>& args);

// `<job>-ssh`.
std::string SshSecretName(std::string_view job);
// The `config` file for `job` with `port`.
std::string SshConfig(const api::Job& job, int64_t port);

}  // namespace basalt::controllers
