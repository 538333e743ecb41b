#include "common/client/flags.h"

#include <stdlib.h>

#include <charconv>
#include <cmath>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::client {
namespace {

template <typename T>
absl::Status ParseNumber(std::string_view name, std::string_view value, T* out) {
  T parsed{};
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("invalid value \"{}\" for flag --{}: not a number", value, name));
  }
  *out = parsed;
  return absl::OkStatus();
}

}  // namespace

void FlagSet::Add(Flag flag) {
  for (Flag& f : flags_) {
    if (f.name == flag.name) {
      f = std::move(flag);  // a later registration replaces an earlier one
      return;
    }
  }
  flags_.push_back(std::move(flag));
}

const FlagSet::Flag* FlagSet::Find(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void FlagSet::String(std::string_view name, std::string* target, std::string_view help) {
  Add({std::string(name), std::string(help), *target, false, [target](std::string_view v) {
         *target = std::string(v);
         return absl::OkStatus();
       }});
}

void FlagSet::Int(std::string_view name, int* target, std::string_view help) {
  std::string n(name);
  Add({n, std::string(help), std::to_string(*target), false,
       [n, target](std::string_view v) { return ParseNumber(n, v, target); }});
}

void FlagSet::Int64(std::string_view name, int64_t* target, std::string_view help) {
  std::string n(name);
  Add({n, std::string(help), std::to_string(*target), false,
       [n, target](std::string_view v) { return ParseNumber(n, v, target); }});
}

void FlagSet::Double(std::string_view name, double* target, std::string_view help) {
  std::string n(name);
  Add({n, std::string(help), fmt::format("{}", *target), false,
       [n, target](std::string_view v) -> absl::Status {
         std::string s(v);
         char* end = nullptr;
         double d = strtod(s.c_str(), &end);
         if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d)) {
           return absl::InvalidArgumentError(
               fmt::format("invalid value \"{}\" for flag --{}: not a number", v, n));
         }
         *target = d;
         return absl::OkStatus();
       }});
}

void FlagSet::Bool(std::string_view name, bool* target, std::string_view help) {
  std::string n(name);
  Add({n, std::string(help), *target ? "true" : "false", true,
       [n, target](std::string_view v) -> absl::Status {
         if (v == "true" || v == "1" || v == "t" || v == "True" || v == "TRUE") {
           *target = true;
         } else if (v == "false" || v == "0" || v == "f" || v == "False" || v == "FALSE") {
           *target = false;
         } else {
           return absl::InvalidArgumentError(
               fmt::format("invalid value \"{}\" for flag --{}: not a bool", v, n));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::StringList(std::string_view name, std::vector<std::string>* target,
                         std::string_view help) {
  std::string def;
  for (const std::string& s : *target) def += (def.empty() ? "" : ",") + s;
  Add({std::string(name), std::string(help), def, false, [target](std::string_view v) {
         target->clear();
         while (!v.empty()) {
           size_t comma = v.find(',');
           std::string_view part = v.substr(0, comma);
           if (!part.empty()) target->emplace_back(part);
           if (comma == std::string_view::npos) break;
           v.remove_prefix(comma + 1);
         }
         return absl::OkStatus();
       }});
}

absl::Status FlagSet::Parse(int argc, const char* const* argv,
                            std::vector<std::string>* positional) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args, positional);
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      for (size_t j = i + 1; j < args.size(); ++j) {
        if (positional == nullptr) {
          return absl::InvalidArgumentError(fmt::format("unexpected argument \"{}\"", args[j]));
        }
        positional->push_back(args[j]);
      }
      return absl::OkStatus();
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (positional == nullptr) {
        return absl::InvalidArgumentError(fmt::format("unexpected argument \"{}\"", arg));
      }
      positional->emplace_back(arg);
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      if (name == "help" || name == "h") return absl::CancelledError("help requested");
      return absl::InvalidArgumentError(fmt::format("unknown flag --{}", name));
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (flag->is_bool) {
      value = "true";
    } else {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(fmt::format("flag --{} needs a value", name));
      }
      value = args[++i];
    }
    BASALT_RETURN_IF_ERROR(flag->set(value));
  }
  return absl::OkStatus();
}

std::string FlagSet::Usage() const {
  std::string out = fmt::format("Usage of {}:\n", program_.empty() ? "this program" : program_);
  for (const Flag& f : flags_) {
    out += fmt::format("  --{}{}\n        {} (default \"{}\")\n", f.name, f.is_bool ? "" : " value",
                       f.help, f.default_value);
  }
  return out;
}

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
