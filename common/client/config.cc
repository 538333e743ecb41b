#include "common/client/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>

#include "absl/strings/escaping.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "yaml-cpp/yaml.h"

namespace basalt::client {
namespace {

// One named entry (cluster, user or context) and the file that defined it. YAML::Node is a
// handle to shared storage: entries are only ever copy-constructed, never assigned
// (assignment rebinds the storage, cpp-style-notes §4.5).
struct Entry {
  YAML::Node node;  // the inner map ("cluster:", "user:", "context:")
  std::string file;
  std::string dir;
};

struct Merged {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string current_context;
  std::string files;  // "a:b" for messages
};

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string ResolvePath(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return dir + "/" + path;
}

// Reads node[key] as a string: empty when absent or null, an error when not a scalar.
absl::StatusOr<std::string> StringField(const YAML::Node& node, const char* key,
                                        std::string_view where) {
  const YAML::Node& map = node;
  if (!map.IsMap()) return std::string();
  const YAML::Node value = map[key];
  if (!value.IsDefined() || value.IsNull()) return std::string();
  if (!value.IsScalar()) {
    return absl::InvalidArgumentError(fmt::format("{}.{}: expected a string", where, key));
  }
  return value.Scalar();
}

absl::StatusOr<bool> BoolField(const YAML::Node& node, const char* key, std::string_view where) {
  BASALT_ASSIGN_OR_RETURN(std::string s, StringField(node, key, where));
  if (s.empty() || s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  return absl::InvalidArgumentError(
      fmt::format("{}.{}: expected true or false, got \"{}\"", where, key, s));
}

// Adds the named entries of list `key` ("clusters") to `out`; the first definition wins.
absl::Status MergeList(const YAML::Node& root, const char* key, const char* inner,
                       const std::string& file, std::map<std::string, Entry>& out) {
  const YAML::Node list = root[key];
  if (!list.IsDefined() || list.IsNull()) return absl::OkStatus();
  if (!list.IsSequence()) {
    return absl::InvalidArgumentError(fmt::format("{}: expected a list", key));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    std::string where = fmt::format("{}[{}]", key, i);
    BASALT_ASSIGN_OR_RETURN(std::string name, StringField(item, "name", where));
    if (name.empty()) return absl::InvalidArgumentError(fmt::format("{}: missing name", where));
    if (out.count(name) != 0) continue;
    const YAML::Node body = item[inner];
    if (body.IsDefined() && !body.IsNull() && !body.IsMap()) {
      return absl::InvalidArgumentError(
          fmt::format("{}[\"{}\"].{}: expected a map", key, name, inner));
    }
    out.emplace(name, Entry{body, file, DirOf(file)});
  }
  return absl::OkStatus();
}

absl::Status MergeFile(const std::string& file, const std::string& text, Merged& merged) {
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("invalid YAML: {}", e.what()));
  }
  const YAML::Node root = loaded;
  if (!root.IsDefined() || root.IsNull()) return absl::OkStatus();  // empty file
  if (!root.IsMap()) return absl::InvalidArgumentError("top level is not a map");
  try {
    BASALT_RETURN_IF_ERROR(MergeList(root, "clusters", "cluster", file, merged.clusters));
    BASALT_RETURN_IF_ERROR(MergeList(root, "users", "user", file, merged.users));
    BASALT_RETURN_IF_ERROR(MergeList(root, "contexts", "context", file, merged.contexts));
    BASALT_ASSIGN_OR_RETURN(std::string current,
                            StringField(root, "current-context", "kubeconfig"));
    if (merged.current_context.empty()) merged.current_context = current;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("invalid kubeconfig: {}", e.what()));
  }
  return absl::OkStatus();
}

// Returns the bytes of `<field>-data` (base64) or of the file named by `<field>`.
absl::StatusOr<std::string> DataOrFile(const Entry& entry, const std::string& field,
                                       std::string_view where) {
  BASALT_ASSIGN_OR_RETURN(std::string data,
                          StringField(entry.node, (field + "-data").c_str(), where));
  if (!data.empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(absl::string_view(data.data(), data.size()), &decoded)) {
      return absl::InvalidArgumentError(fmt::format("{}.{}-data: invalid base64", where, field));
    }
    return decoded;
  }
  BASALT_ASSIGN_OR_RETURN(std::string path, StringField(entry.node, field.c_str(), where));
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> content = ReadFileToString(ResolvePath(entry.dir, path));
  if (!content.ok()) return Annotate(content.status(), fmt::format("{}.{}", where, field));
  return content;
}

absl::Status ResolveCluster(const Entry& cluster, const std::string& name, RestConfig& config) {
  std::string where = fmt::format("clusters[\"{}\"].cluster", name);
  BASALT_ASSIGN_OR_RETURN(config.server, StringField(cluster.node, "server", where));
  if (config.server.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}.server: missing", where));
  }
  BASALT_ASSIGN_OR_RETURN(config.ca_pem, DataOrFile(cluster, "certificate-authority", where));
  BASALT_ASSIGN_OR_RETURN(config.insecure_skip_tls_verify,
                          BoolField(cluster.node, "insecure-skip-tls-verify", where));
  BASALT_ASSIGN_OR_RETURN(config.tls_server_name,
                          StringField(cluster.node, "tls-server-name", where));
  return absl::OkStatus();
}

absl::Status ResolveUser(const Entry& user, const std::string& name, RestConfig& config) {
  std::string where = fmt::format("users[\"{}\"].user", name);
  BASALT_ASSIGN_OR_RETURN(config.client_cert_pem, DataOrFile(user, "client-certificate", where));
  BASALT_ASSIGN_OR_RETURN(config.client_key_pem, DataOrFile(user, "client-key", where));
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: client-certificate and client-key must be given together", where));
  }
  BASALT_ASSIGN_OR_RETURN(config.bearer_token, StringField(user.node, "token", where));
  BASALT_ASSIGN_OR_RETURN(std::string token_file, StringField(user.node, "tokenFile", where));
  if (!token_file.empty()) {
    config.bearer_token_file = ResolvePath(user.dir, token_file);
    absl::StatusOr<std::string> probe = ReadFileToString(config.bearer_token_file);
    if (!probe.ok()) return Annotate(probe.status(), fmt::format("{}.tokenFile", where));
  }
  const YAML::Node& node = user.node;
  bool other_auth = node.IsMap() && (node["exec"].IsDefined() || node["auth-provider"].IsDefined());
  if (other_auth && config.client_cert_pem.empty() && config.bearer_token.empty() &&
      config.bearer_token_file.empty()) {
    return absl::UnimplementedError(fmt::format(
        "{}: exec and auth-provider credentials are not supported; use a token or a client "
        "certificate",
        where));
  }
  return absl::OkStatus();
}

// Errors about the merged set name every file; errors inside an entry name the file that
// defined it.
absl::StatusOr<RestConfig> Resolve(const Merged& merged, const std::string& wanted_context) {
  std::string all = "kubeconfig " + merged.files;
  std::string context_name = wanted_context.empty() ? merged.current_context : wanted_context;
  if (context_name.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: no current-context is set and no context was given", all));
  }
  auto ctx_it = merged.contexts.find(context_name);
  if (ctx_it == merged.contexts.end()) {
    std::string known;
    for (const auto& [name, e] : merged.contexts) known += (known.empty() ? "" : ", ") + name;
    return absl::NotFoundError(
        fmt::format("{}: context \"{}\" not found (contexts: {})", all, context_name, known));
  }
  const Entry& ctx = ctx_it->second;
  std::string ctx_where =
      fmt::format("kubeconfig {}: contexts[\"{}\"].context", ctx.file, context_name);
  BASALT_ASSIGN_OR_RETURN(std::string cluster_name, StringField(ctx.node, "cluster", ctx_where));
  BASALT_ASSIGN_OR_RETURN(std::string user_name, StringField(ctx.node, "user", ctx_where));
  BASALT_ASSIGN_OR_RETURN(std::string ns, StringField(ctx.node, "namespace", ctx_where));
  if (cluster_name.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}.cluster: missing", ctx_where));
  }
  auto cl_it = merged.clusters.find(cluster_name);
  if (cl_it == merged.clusters.end()) {
    return absl::NotFoundError(fmt::format("{}: cluster \"{}\" (of context \"{}\") not found", all,
                                           cluster_name, context_name));
  }
  RestConfig config;
  config.source = fmt::format("kubeconfig {} (context {})", merged.files, context_name);
  if (!ns.empty()) config.default_namespace = ns;
  BASALT_RETURN_IF_ERROR(Annotate(ResolveCluster(cl_it->second, cluster_name, config),
                                  "kubeconfig " + cl_it->second.file));
  if (!user_name.empty()) {
    auto us_it = merged.users.find(user_name);
    if (us_it == merged.users.end()) {
      return absl::NotFoundError(fmt::format("{}: user \"{}\" (of context \"{}\") not found", all,
                                             user_name, context_name));
    }
    BASALT_RETURN_IF_ERROR(Annotate(ResolveUser(us_it->second, user_name, config),
                                    "kubeconfig " + us_it->second.file));
  }
  return config;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    return absl::NotFoundError(fmt::format("cannot read {}: {}", path, strerror(err)));
  }
  std::string out;
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool failed = ferror(f) != 0;
  int err = errno;
  fclose(f);
  if (failed) return absl::InternalError(fmt::format("reading {}: {}", path, strerror(err)));
  return out;
}

std::vector<std::string> SplitKubeconfigPaths(std::string_view env_value) {
  std::vector<std::string> out;
  while (!env_value.empty()) {
    size_t colon = env_value.find(':');
    std::string_view part = env_value.substr(0, colon);
    if (!part.empty()) out.emplace_back(part);
    if (colon == std::string_view::npos) break;
    env_value.remove_prefix(colon + 1);
  }
  return out;
}

absl::StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options) {
  if (options.paths.empty()) return absl::InvalidArgumentError("no kubeconfig file given");
  Merged merged;
  int loaded = 0;
  for (const std::string& path : options.paths) {
    absl::StatusOr<std::string> text = ReadFileToString(path);
    if (!text.ok()) {
      if (!options.require_all && text.status().code() == absl::StatusCode::kNotFound) continue;
      return Annotate(text.status(), "kubeconfig");
    }
    merged.files += (merged.files.empty() ? "" : ":") + path;
    BASALT_RETURN_IF_ERROR(Annotate(MergeFile(path, *text, merged), "kubeconfig " + path));
    ++loaded;
  }
  if (loaded == 0) {
    return absl::NotFoundError(
        fmt::format("none of the kubeconfig files exist: {}", fmt::join(options.paths, ":")));
  }
  try {
    return Resolve(merged, options.context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("kubeconfig {}: invalid kubeconfig: {}", merged.files, e.what()));
  }
}

bool InClusterEnvironment() {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  return host != nullptr && *host != '\0' && port != nullptr && *port != '\0';
}

absl::StatusOr<RestConfig> InClusterConfig(const InClusterPaths& paths) {
  if (!InClusterEnvironment()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
        "set");
  }
  std::string host = getenv("KUBERNETES_SERVICE_HOST");
  std::string port = getenv("KUBERNETES_SERVICE_PORT");
  RestConfig config;
  config.source = "in-cluster service account";
  bool ipv6 = host.find(':') != std::string::npos;
  config.server = fmt::format("https://{}{}{}:{}", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port);
  absl::StatusOr<std::string> ca = ReadFileToString(paths.ca);
  if (!ca.ok()) return Annotate(ca.status(), "in-cluster config: service account CA");
  config.ca_pem = *std::move(ca);
  absl::StatusOr<std::string> token = ReadFileToString(paths.token);
  if (!token.ok()) return Annotate(token.status(), "in-cluster config: service account token");
  config.bearer_token_file = paths.token;
  absl::StatusOr<std::string> ns = ReadFileToString(paths.ns);
  if (ns.ok()) {
    std::string trimmed = *ns;
    while (!trimmed.empty() && isspace(static_cast<unsigned char>(trimmed.back()))) {
      trimmed.pop_back();
    }
    if (!trimmed.empty()) config.default_namespace = trimmed;
  }
  return config;
}

TokenSource::TokenSource(std::string static_token, std::string file, Clock* clock,
                         std::chrono::seconds refresh)
    : file_(std::move(file)), clock_(clock), refresh_(refresh), token_(std::move(static_token)) {}

std::string TokenSource::Token() {
  std::lock_guard<std::mutex> l(mu_);
  if (file_.empty()) return token_;
  Clock::TimePoint now = clock_->Now();
  if (!loaded_ || now - loaded_at_ >= refresh_) {
    absl::StatusOr<std::string> content = ReadFileToString(file_);
    if (content.ok()) {
      std::string t = *std::move(content);
      while (!t.empty() && isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
      while (!t.empty() && isspace(static_cast<unsigned char>(t.front()))) t.erase(0, 1);
      if (!t.empty()) token_ = std::move(t);
    }
    loaded_ = true;
    loaded_at_ = now;
  }
  return token_;
}

}  // namespace basalt::client
