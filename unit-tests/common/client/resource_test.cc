#include "common/client/resource.h"

#include <catch2/catch.hpp>

using namespace basalt::client;

TEST_CASE("ResourcePath: core, grouped, namespaced and cluster-scoped resources", "[resource]") {
  struct Case {
    ResourceRef ref;
    std::string collection;  // in namespace "ns"
    std::string item;        // "x" in namespace "ns"
  };
  const Case cases[] = {
      {Pods(), "/api/v1/namespaces/ns/pods", "/api/v1/namespaces/ns/pods/x"},
      {Nodes(), "/api/v1/nodes", "/api/v1/nodes/x"},
      {Events(), "/api/v1/namespaces/ns/events", "/api/v1/namespaces/ns/events/x"},
      {Namespaces(), "/api/v1/namespaces", "/api/v1/namespaces/x"},
      {ConfigMaps(), "/api/v1/namespaces/ns/configmaps", "/api/v1/namespaces/ns/configmaps/x"},
      {Services(), "/api/v1/namespaces/ns/services", "/api/v1/namespaces/ns/services/x"},
      {Secrets(), "/api/v1/namespaces/ns/secrets", "/api/v1/namespaces/ns/secrets/x"},
      {PersistentVolumeClaims(), "/api/v1/namespaces/ns/persistentvolumeclaims",
       "/api/v1/namespaces/ns/persistentvolumeclaims/x"},
      {ServiceAccounts(), "/api/v1/namespaces/ns/serviceaccounts",
       "/api/v1/namespaces/ns/serviceaccounts/x"},
      {Leases(), "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
       "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x"},
      {PriorityClasses(), "/apis/scheduling.k8s.io/v1/priorityclasses",
       "/apis/scheduling.k8s.io/v1/priorityclasses/x"},
      {PodDisruptionBudgets(), "/apis/policy/v1/namespaces/ns/poddisruptionbudgets",
       "/apis/policy/v1/namespaces/ns/poddisruptionbudgets/x"},
      {CustomResourceDefinitions(), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
       "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x"},
      {VolcanoJobs(), "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs",
       "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/x"},
      {Queues(), "/apis/scheduling.volcano.sh/v1beta1/queues",
       "/apis/scheduling.volcano.sh/v1beta1/queues/x"},
      {PodGroups(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups",
       "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/x"},
      {Commands(), "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands",
       "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands/x"},
  };
  for (const Case& c : cases) {
    INFO(c.ref.resource);
    REQUIRE(ResourcePath(c.ref, "ns") == c.collection);
    REQUIRE(ResourcePath(c.ref, "ns", "x") == c.item);
    REQUIRE(ResourcePath(c.ref, "ns", "x", "status") == c.item + "/status");
    REQUIRE_FALSE(c.ref.kind.empty());
  }
}

TEST_CASE("ResourcePath: all namespaces, subresources and escaping", "[resource]") {
  REQUIRE(ResourcePath(Pods(), "") == "/api/v1/pods");
  REQUIRE(ResourcePath(PodGroups(), "") == "/apis/scheduling.volcano.sh/v1beta1/podgroups");
  REQUIRE(ResourcePath(Pods(), "ns", "p", "binding") == "/api/v1/namespaces/ns/pods/p/binding");
  REQUIRE(ResourcePath(Pods(), "ns", "p", "eviction") == "/api/v1/namespaces/ns/pods/p/eviction");
  REQUIRE(ResourcePath(Nodes(), "ignored", "n1") == "/api/v1/nodes/n1");
  REQUIRE(ResourcePath(ConfigMaps(), "ns", "a b/c") ==
          "/api/v1/namespaces/ns/configmaps/a%20b%2Fc");
  REQUIRE(Pods().ApiVersion() == "v1");
  REQUIRE(Queues().ApiVersion() == "scheduling.volcano.sh/v1beta1");
}

TEST_CASE("ListQuery: selectors are encoded, watch options only on watches", "[resource]") {
  ListOptions o;
  REQUIRE(ListQuery(o, false).empty());
  REQUIRE(ListQuery(o, true) == "?watch=true&allowWatchBookmarks=true");
  o.label_selector = "app=x,tier!=db";
  o.field_selector = "spec.nodeName=n1";
  o.limit = 50;
  o.continue_token = "abc=";
  o.resource_version = "123";
  o.timeout_seconds = 300;
  o.resource_version_match = "NotOlderThan";
  REQUIRE(ListQuery(o, false) ==
          "?labelSelector=app%3Dx%2Ctier%21%3Ddb&fieldSelector=spec.nodeName%3Dn1"
          "&resourceVersion=123&resourceVersionMatch=NotOlderThan&limit=50&continue=abc%3D");
  REQUIRE(ListQuery(o, true) ==
          "?watch=true&labelSelector=app%3Dx%2Ctier%21%3Ddb&fieldSelector=spec.nodeName%3Dn1"
          "&resourceVersion=123&allowWatchBookmarks=true&timeoutSeconds=300");
}
