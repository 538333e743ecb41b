#include "controllers/job/plugins/svc/svc.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

api::Job Job(int32_t ps_replicas = 2) {
  return MakeJob("tf")
      .Namespace("ml")
      .Task(MakeTask("ps").Replicas(ps_replicas).Container("c"))
      .Task(MakeTask("my-worker").Replicas(3).Container("c").InitContainer("i"))
      .Task(MakeTask("chief").Replicas(2).Hostname("boss").Subdomain("hq").Container("c"))
      .Build();
}

std::map<std::string, std::string> DataOf(const json::Value& cm) {
  std::map<std::string, std::string> out;
  for (const auto& m : json::Find(cm, "data")->GetObject()) {
    out[std::string(json::AsView(m.name))] = std::string(json::AsView(m.value));
  }
  return out;
}

const json::Document* OfKind(const std::vector<json::Document>& objs, std::string_view kind) {
  for (const auto& o : objs) {
    if (json::GetString(o, "kind") == kind) return &o;
  }
  return nullptr;
}

TEST_CASE("SvcPlugin: the hosts ConfigMap lists every task's pods", "[controllers][job][plugins]") {
  const std::map<std::string, std::string> want = {
      {"ps.host", "tf-ps-0.tf\ntf-ps-1.tf"},
      {"VC_PS_HOSTS", "tf-ps-0.tf,tf-ps-1.tf"},
      {"VC_PS_NUM", "2"},
      {"my_worker.host", "tf-my-worker-0.tf\ntf-my-worker-1.tf\ntf-my-worker-2.tf"},
      {"VC_MY_WORKER_HOSTS", "tf-my-worker-0.tf,tf-my-worker-1.tf,tf-my-worker-2.tf"},
      {"VC_MY_WORKER_NUM", "3"},
      {"chief.host", "boss.hq"},
      {"VC_CHIEF_HOSTS", "boss.hq"},
      {"VC_CHIEF_NUM", "1"},
  };
  const api::Job job = Job();
  CHECK(SvcHostsData(job) == want);
  auto plugin = NewSvcPlugin({});
  REQUIRE(plugin.ok());
  auto objs = (*plugin)->OnJobAdd(job);
  REQUIRE(objs.ok());
  const json::Document* cm = OfKind(*objs, "ConfigMap");
  REQUIRE(cm != nullptr);
  CHECK(StringAt(*cm, {"metadata", "name"}) == "tf-svc");
  CHECK(StringAt(*cm, {"metadata", "namespace"}) == "ml");
  CHECK(json::GetBool((*json::FindPath(*cm, {"metadata", "ownerReferences"}))[0], "controller"));
  CHECK(DataOf(*cm) == want);

  // Scaling rewrites the ConfigMap.
  api::Job scaled = Job(/*ps_replicas=*/1);
  auto updated = (*plugin)->OnJobUpdate(scaled);
  REQUIRE(updated.ok());
  REQUIRE(updated->size() == 1);
  CHECK(DataOf((*updated)[0]).at("VC_PS_HOSTS") == "tf-ps-0.tf");
}

TEST_CASE("SvcPlugin: headless Service and NetworkPolicy select the job's pods",
          "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewSvcPlugin({"--publish-not-ready-addresses=true"});
  REQUIRE(plugin.ok());
  auto objs = (*plugin)->OnJobAdd(job);
  REQUIRE(objs.ok());
  REQUIRE(objs->size() == 3);
  const json::Document* svc = OfKind(*objs, "Service");
  REQUIRE(svc != nullptr);
  CHECK(StringAt(*svc, {"metadata", "name"}) == "tf");
  CHECK(StringAt(*svc, {"spec", "clusterIP"}) == "None");
  CHECK(json::Serialize(*json::FindPath(*svc, {"spec", "selector"})) ==
        R"({"volcano.sh/job-name":"tf","volcano.sh/job-namespace":"ml"})");
  CHECK(json::GetBool(*json::Find(*svc, "spec"), "publishNotReadyAddresses"));
  CHECK(json::FindPath(*svc, {"spec", "ports"}) == nullptr);

  const json::Document* np = OfKind(*objs, "NetworkPolicy");
  REQUIRE(np != nullptr);
  CHECK(StringAt(*np, {"apiVersion"}) == "networking.k8s.io/v1");
  CHECK(StringAt(*np, {"metadata", "name"}) == "tf");
  CHECK(json::Serialize(*json::Find(*np, "spec")) ==
        R"({"podSelector":{"matchLabels":{"volcano.sh/job-name":"tf",)"
        R"("volcano.sh/job-namespace":"ml"}},)"
        R"("ingress":[{"from":[{"podSelector":{"matchLabels":{"volcano.sh/job-name":"tf",)"
        R"("volcano.sh/job-namespace":"ml"}}}]}],"policyTypes":["Ingress"]})");

  CHECK((*plugin)->OnJobDelete(job) ==
        std::vector<ObjectRef>{{"v1", "ConfigMap", "ml", "tf-svc"},
                               {"v1", "Service", "ml", "tf"},
                               {"networking.k8s.io/v1", "NetworkPolicy", "ml", "tf"}});
}

TEST_CASE("SvcPlugin: --disable-network-policy skips the NetworkPolicy",
          "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewSvcPlugin({"--disable-network-policy=true"});
  REQUIRE(plugin.ok());
  auto objs = (*plugin)->OnJobAdd(job);
  REQUIRE(objs.ok());
  CHECK(objs->size() == 2);
  CHECK(OfKind(*objs, "NetworkPolicy") == nullptr);
  CHECK((*plugin)->OnJobDelete(job).size() == 2);
  // The default Service does not publish unready pods.
  CHECK_FALSE(json::GetBool(*json::Find(*OfKind(*objs, "Service"), "spec"),
                            "publishNotReadyAddresses", true));
}

TEST_CASE("SvcPlugin: pods get hostname, subdomain, hosts env and the /etc/volcano mount",
          "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewSvcPlugin({});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "my-worker", 1);
  CHECK(StringAt(pod, {"spec", "hostname"}) == "tf-my-worker-1");
  CHECK(StringAt(pod, {"spec", "subdomain"}) == "tf");
  const json::Value* vol = Volume(pod, "tf-svc");
  REQUIRE(vol != nullptr);
  CHECK(StringAt(*vol, {"configMap", "name"}) == "tf-svc");
  for (bool init : {false, true}) {
    for (const json::Value* c : Containers(pod, init)) {
      const json::Value* m = Mount(*c, "tf-svc");
      REQUIRE(m != nullptr);
      CHECK(json::GetString(*m, "mountPath") == "/etc/volcano");
      for (std::string_view t : {"PS", "MY_WORKER", "CHIEF"}) {
        const std::string hosts = "VC_" + std::string(t) + "_HOSTS";
        const std::string num = "VC_" + std::string(t) + "_NUM";
        CHECK(EnvFromConfigMap(*c, hosts) == "tf-svc/" + hosts);
        CHECK(EnvFromConfigMap(*c, num) == "tf-svc/" + num);
      }
    }
  }
  // A template hostname and subdomain are kept.
  json::Document chief = PodWith(**plugin, job, "chief", 0);
  CHECK(StringAt(chief, {"spec", "hostname"}) == "boss");
  CHECK(StringAt(chief, {"spec", "subdomain"}) == "hq");
}

TEST_CASE("SvcPlugin: --inject-hosts-env=false keeps env clean", "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewSvcPlugin({"--inject-hosts-env=false"});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "ps", 0);
  for (const json::Value* c : Containers(pod)) {
    CHECK(json::Find(*c, "env") == nullptr);
    CHECK(Mount(*c, "tf-svc") != nullptr);
  }
}

}  // namespace
}  // namespace basalt::controllers
