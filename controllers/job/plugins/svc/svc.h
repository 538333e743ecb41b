#pragma once
// The svc job plugin: makes a job's pods find each other by name.
//
// OnJobAdd creates a ConfigMap `<job>-svc` whose data lists each task's pod DNS names — for
// task T (with '-' replaced by '_'): `T.host` (newline-separated), `VC_<UPPER T>_HOSTS`
// (comma-separated) and `VC_<UPPER T>_NUM` (count) —, a headless Service `<job>` selecting the
// job's pods, and (unless --disable-network-policy) a NetworkPolicy `<job>` admitting ingress
// to the job's pods only from the job's pods. OnJobUpdate rewrites the ConfigMap (scaling).
// OnPodCreate sets hostname/subdomain, mounts the ConfigMap at /etc/volcano and (unless
// --inject-hosts-env=false) adds the VC_<T>_HOSTS / VC_<T>_NUM env of every task.
//
// Flags: --publish-not-ready-addresses (false), --disable-network-policy (false),
// --inject-hosts-env (true).

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kSvcPluginName = api::kSvcPlugin;
inline constexpr std::string_view kSvcConfigMapMountPath = "/etc/volcano";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewSvcPlugin(const std::vector<std::string>& args);

// `<job>-svc`.
std::string SvcConfigMapName(std::string_view job);
// The ConfigMap data described above, key -> value.
std::map<std::string, std::string> SvcHostsData(const api::Job& job);
// "VC_<UPPER task, '-' -> '_'>_HOSTS" and "..._NUM".
std::string HostsEnvName(std::string_view task);
std::string NumEnvName(std::string_view task);

}  // namespace basalt::controllers
