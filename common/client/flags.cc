#include "common/client/flags.h"

#include <stdlib.h>

namespace basalt::client {
void ClientOptions::AddFlags(FlagSet& flags) {
  flags.String("kubeconfig", &kubeconfig,
               "Path to kubeconfig file(s) with authorization and master location information");
  flags.String("master", &master,
               "The address of the Kubernetes API server (overrides kubeconfig)");
  flags.String("context", &context, "The kubeconfig context to use");
  flags.Double("kube-api-qps", &kube_api_qps, "QPS to use while talking with the API server");
  flags.Int("kube-api-burst", &kube_api_burst, "Burst to use while talking with the API server");
}

absl::StatusOr<RestConfig> ConfigFromOptions(const ClientOptions& options) {
  absl::StatusOr<RestConfig> config;
  const char* env = getenv("KUBECONFIG");
  const char* home = getenv("HOME");
  std::string home_config = home != nullptr ? std::string(home) + "/.kube/config" : "";
  if (!options.kubeconfig.empty()) {
    config = LoadKubeconfig({SplitKubeconfigPaths(options.kubeconfig), true, options.context});
  } else if (env != nullptr && *env != '\0') {
    config = LoadKubeconfig({SplitKubeconfigPaths(env), false, options.context});
  } else if (InClusterEnvironment()) {
    config = InClusterConfig();
  } else if (!home_config.empty() && ReadFileToString(home_config).ok()) {
    config = LoadKubeconfig({{home_config}, true, options.context});
  } else if (!options.master.empty()) {
    config = RestConfig{};
    config->source = "--master";
  } else {
    return absl::FailedPreconditionError(
        "no API server configuration: pass --kubeconfig or --master, set KUBECONFIG, or run in "
        "a cluster");
  }
  if (!config.ok()) return config.status();
  if (!options.master.empty()) config->server = options.master;
  config->qps = options.kube_api_qps;
  config->burst = options.kube_api_burst;
  return config;
}

}  // namespace basalt::client
