#pragma once
// ResourceRef names a Kubernetes REST resource (group, version, plural, scope) and builds its
// URL paths. Helpers cover every resource Basalt talks to.
//
//   ResourcePath(Pods(), "ns", "p1", "binding") == "/api/v1/namespaces/ns/pods/p1/binding"
//   ResourcePath(Queues(), "", "default")       ==
//   "/apis/scheduling.volcano.sh/v1beta1/queues/default"
//
// Plain value types; thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace basalt::client {

struct ResourceRef {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "pods"
  bool namespaced = true;
  std::string kind;  // "Pod": set on LIST items, which the API server returns without kind

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  bool operator==(const ResourceRef&) const = default;
};

// core/v1
ResourceRef Pods();
ResourceRef Nodes();
ResourceRef Events();
ResourceRef Namespaces();
ResourceRef ConfigMaps();
ResourceRef Services();
ResourceRef Secrets();
ResourceRef PersistentVolumeClaims();
ResourceRef ServiceAccounts();
// Others Basalt reads or writes.
ResourceRef Leases();                     // coordination.k8s.io/v1
ResourceRef PriorityClasses();            // scheduling.k8s.io/v1, cluster-scoped
ResourceRef PodDisruptionBudgets();       // policy/v1
ResourceRef CustomResourceDefinitions();  // apiextensions.k8s.io/v1, cluster-scoped
ResourceRef VolcanoJobs();                // batch.volcano.sh/v1alpha1 jobs
ResourceRef Queues();                     // scheduling.volcano.sh/v1beta1, cluster-scoped
ResourceRef PodGroups();                  // scheduling.volcano.sh/v1beta1
ResourceRef Commands();                   // bus.volcano.sh/v1alpha1
ResourceRef VolcanoCronJobs();            // batch.volcano.sh/v1alpha1 cronjobs
ResourceRef JobFlows();                   // flow.volcano.sh/v1alpha1
ResourceRef JobTemplates();               // flow.volcano.sh/v1alpha1
ResourceRef HyperNodes();                 // topology.volcano.sh/v1alpha1, cluster-scoped

// The resource of objects of `kind` in `api_version` ("v1", "networking.k8s.io/v1"), such as
// the objects job plugins create: the plural is the lower-cased kind with English rules
// (Service -> services, NetworkPolicy -> networkpolicies, Ingress -> ingresses), as the
// API server's default REST mapper derives it.
ResourceRef ResourceForKind(std::string_view api_version, std::string_view kind,
                            bool namespaced = true);

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string UrlEncode(std::string_view s);

// "/api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]" (or "/apis/<group>/...").
// `ns` is ignored for cluster-scoped resources; an empty `ns` on a namespaced resource means
// all namespaces (valid only for list and watch). Segments are percent-encoded.
std::string ResourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name = {},
                         std::string_view subresource = {});

// Options of LIST and WATCH requests (query parameters), as in metav1.ListOptions.
struct ListOptions {
  std::string label_selector;  // "app=x,tier!=db"
  std::string field_selector;  // "spec.nodeName=n1"
  std::string resource_version;
  std::string resource_version_match;      // LIST only: "NotOlderThan" / "Exact"
  int64_t limit = 0;                       // LIST page size; 0 = no paging
  std::string continue_token;              // LIST: from the previous page
  std::optional<int64_t> timeout_seconds;  // WATCH: server ends the watch after this long
  bool allow_watch_bookmarks = true;       // WATCH
};

// "?labelSelector=...&limit=..." ("" when nothing is set). `watch` adds watch=true and the
// watch-only options.
std::string ListQuery(const ListOptions& options, bool watch);

}  // namespace basalt::client
