#pragma once
// A tiny command-line flag parser every Basalt binary shares, and ClientOptions, the API
// server connection flags (--kubeconfig, --master, --context, --kube-api-qps,
// --kube-api-burst) with the client-go rules for choosing a configuration.
//
//   basalt::client::FlagSet flags("vc-scheduler");
//   basalt::client::ClientOptions client_options;
//   client_options.AddFlags(flags);
//   int verbosity = 0;
//   flags.Int("v", &verbosity, "log verbosity");
//   if (auto s = flags.Parse(argc, argv); !s.ok()) { ... print s and flags.Usage() ... }
//
// Thread-compatible.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/config.h"

namespace basalt::client {

// Accepts `--name=value`, `--name value`, and `-name` forms; a bool flag alone means true
// (`--leader-elect`, `--leader-elect=false`). `--` ends the flags. Unknown flags and bad values
// are kInvalidArgument naming the flag. `--help`/`-h` makes Parse() return kCancelled (the
// caller prints Usage() and exits 0) unless the binary registered its own "help" flag.
class FlagSet {
 public:
  explicit FlagSet(std::string program = "") : program_(std::move(program)) {}

  void String(std::string_view name, std::string* target, std::string_view help);
  void Int(std::string_view name, int* target, std::string_view help);
  void Int64(std::string_view name, int64_t* target, std::string_view help);
  void Double(std::string_view name, double* target, std::string_view help);
  void Bool(std::string_view name, bool* target, std::string_view help);
  // Comma-separated list (`--controllers=job,queue`); replaces the default.
  void StringList(std::string_view name, std::vector<std::string>* target, std::string_view help);

  // Parses argv[1..argc). Non-flag arguments go to `positional` if given, else are an error.
  absl::Status Parse(int argc, const char* const* argv,
                     std::vector<std::string>* positional = nullptr);
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional = nullptr);

  // "Usage of <program>:" and one line per flag with its default.
  std::string Usage() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_value;
    bool is_bool = false;
    std::function<absl::Status(std::string_view)> set;
  };
  void Add(Flag flag);
  const Flag* Find(std::string_view name) const;

  std::string program_;
  std::vector<Flag> flags_;
};

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
