#include "common/client/resource.h"

#include <cctype>

#include "fmt/format.h"

namespace basalt::client {
namespace {

ResourceRef Make(std::string_view group, std::string_view version, std::string_view resource,
                 bool namespaced, std::string_view kind) {
  return ResourceRef{std::string(group), std::string(version), std::string(resource), namespaced,
                     std::string(kind)};
}

void AddParam(std::string& query, std::string_view key, std::string_view value) {
  query += query.empty() ? '?' : '&';
  query += key;
  query += '=';
  query += UrlEncode(value);
}

}  // namespace

ResourceRef Pods() { return Make("", "v1", "pods", true, "Pod"); }
ResourceRef Nodes() { return Make("", "v1", "nodes", false, "Node"); }
ResourceRef Events() { return Make("", "v1", "events", true, "Event"); }
ResourceRef Namespaces() { return Make("", "v1", "namespaces", false, "Namespace"); }
ResourceRef ConfigMaps() { return Make("", "v1", "configmaps", true, "ConfigMap"); }
ResourceRef Services() { return Make("", "v1", "services", true, "Service"); }
ResourceRef Secrets() { return Make("", "v1", "secrets", true, "Secret"); }
ResourceRef PersistentVolumeClaims() {
  return Make("", "v1", "persistentvolumeclaims", true, "PersistentVolumeClaim");
}
ResourceRef ServiceAccounts() { return Make("", "v1", "serviceaccounts", true, "ServiceAccount"); }
ResourceRef Leases() { return Make("coordination.k8s.io", "v1", "leases", true, "Lease"); }
ResourceRef PriorityClasses() {
  return Make("scheduling.k8s.io", "v1", "priorityclasses", false, "PriorityClass");
}
ResourceRef PodDisruptionBudgets() {
  return Make("policy", "v1", "poddisruptionbudgets", true, "PodDisruptionBudget");
}
ResourceRef CustomResourceDefinitions() {
  return Make("apiextensions.k8s.io", "v1", "customresourcedefinitions", false,
              "CustomResourceDefinition");
}
ResourceRef VolcanoJobs() { return Make("batch.volcano.sh", "v1alpha1", "jobs", true, "Job"); }
ResourceRef Queues() { return Make("scheduling.volcano.sh", "v1beta1", "queues", false, "Queue"); }
ResourceRef PodGroups() {
  return Make("scheduling.volcano.sh", "v1beta1", "podgroups", true, "PodGroup");
}
ResourceRef Commands() { return Make("bus.volcano.sh", "v1alpha1", "commands", true, "Command"); }
ResourceRef VolcanoCronJobs() {
  return Make("batch.volcano.sh", "v1alpha1", "cronjobs", true, "CronJob");
}
// Literals, not common/api/flow_names.h's constants: the rbac-rules test reads the resources
// of every client call from these definitions.
ResourceRef JobFlows() { return Make("flow.volcano.sh", "v1alpha1", "jobflows", true, "JobFlow"); }
ResourceRef JobTemplates() {
  return Make("flow.volcano.sh", "v1alpha1", "jobtemplates", true, "JobTemplate");
}
ResourceRef HyperNodes() {
  return Make("topology.volcano.sh", "v1alpha1", "hypernodes", false, "HyperNode");
}

ResourceRef ResourceForKind(std::string_view api_version, std::string_view kind, bool namespaced) {
  ResourceRef r;
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    r.version = std::string(api_version);
  } else {
    r.group = std::string(api_version.substr(0, slash));
    r.version = std::string(api_version.substr(slash + 1));
  }
  std::string plural;
  plural.reserve(kind.size() + 3);
  for (char c : kind) plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (plural.empty()) {
    // No kind: no resource either.
  } else if (plural.back() == 'y') {
    plural.back() = 'i';
    plural += "es";
  } else if (plural.back() == 's') {
    plural += "es";
  } else {
    plural += 's';
  }
  r.resource = std::move(plural);
  r.kind = std::string(kind);
  r.namespaced = namespaced;
  return r;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

std::string ResourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string path = ref.group.empty() ? fmt::format("/api/{}", ref.version)
                                       : fmt::format("/apis/{}/{}", ref.group, ref.version);
  // Appends piecewise: `"/" + std::string` trips GCC 12's -Wrestrict false positive at -O3.
  if (ref.namespaced && !ns.empty()) {
    path.append("/namespaces/");
    path.append(UrlEncode(ns));
  }
  path.push_back('/');
  path.append(ref.resource);
  if (!name.empty()) {
    path.push_back('/');
    path.append(UrlEncode(name));
    if (!subresource.empty()) {
      path.push_back('/');
      path.append(UrlEncode(subresource));
    }
  }
  return path;
}

std::string ListQuery(const ListOptions& options, bool watch) {
  std::string q;
  if (watch) AddParam(q, "watch", "true");
  if (!options.label_selector.empty()) AddParam(q, "labelSelector", options.label_selector);
  if (!options.field_selector.empty()) AddParam(q, "fieldSelector", options.field_selector);
  if (!options.resource_version.empty()) {
    AddParam(q, "resourceVersion", options.resource_version);
  }
  if (watch) {
    if (options.allow_watch_bookmarks) AddParam(q, "allowWatchBookmarks", "true");
    if (options.timeout_seconds.has_value()) {
      AddParam(q, "timeoutSeconds", std::to_string(*options.timeout_seconds));
    }
  } else {
    if (!options.resource_version_match.empty()) {
      AddParam(q, "resourceVersionMatch", options.resource_version_match);
    }
    if (options.limit > 0) AddParam(q, "limit", std::to_string(options.limit));
    if (!options.continue_token.empty()) AddParam(q, "continue", options.continue_token);
  }
  return q;
}

}  // namespace basalt::client
