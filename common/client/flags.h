#pragma once
// ClientOptions, the API server connection flags (--kubeconfig, --master, --context,
// --kube-api-qps, --kube-api-burst) with the client-go rules for choosing a configuration,
// registered on the binaries' FlagSet (common/util/flags.h).
//
//   basalt::FlagSet flags("vc-scheduler");
//   basalt::client::ClientOptions client_options;
//   client_options.AddFlags(flags);
//   int verbosity = 0;
//   flags.Int("v", &verbosity, "log verbosity");
//   if (auto s = flags.Parse(argc, argv); !s.ok()) { ... print s and flags.Usage() ... }
//
// Thread-compatible.

#include <string>

#include "absl/status/statusor.h"
#include "common/client/config.h"
#include "common/util/flags.h"

namespace basalt::client {

// The binaries' flag parser (common/util/flags.h), under the name the options headers use.
using ::basalt::FlagSet;

inline constexpr double kDefaultQps = 50;
inline constexpr int kDefaultBurst = 100;

struct ClientOptions {
  std::string kubeconfig;  // ':'-separated list allowed
  std::string master;      // overrides the server of the kubeconfig
  std::string context;
  double kube_api_qps = kDefaultQps;
  int kube_api_burst = kDefaultBurst;

  void AddFlags(FlagSet& flags);
};

// Picks the configuration as client-go's controllers do:
//  1. --kubeconfig (every file must exist), else
//  2. $KUBECONFIG (missing files skipped), else
//  3. the in-cluster service account when KUBERNETES_SERVICE_HOST is set, else
//  4. ~/.kube/config, else
//  5. --master alone (no credentials).
// --master then overrides the server, --context selects the context, qps/burst are copied.
absl::StatusOr<RestConfig> ConfigFromOptions(const ClientOptions& options);

}  // namespace basalt::client
