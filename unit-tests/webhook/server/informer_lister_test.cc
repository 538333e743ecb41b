// InformerLister over real shared informers fed by a FakeTransport: not synced before the
// first lists, then the answers admission reads.
#include "webhook/server/informer_lister.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "common/client/testing/fake_transport.h"
#include "common/informer/informer_factory.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace {

using client::FakeTransport;

std::string List(std::string_view items) {
  return fmt::format(R"({{"kind":"List","metadata":{{"resourceVersion":"10"}},"items":[{}]}})",
                     items);
}

client::Response Reply(int code, std::string body) {
  client::Response response;
  response.status_code = code;
  response.body = std::move(body);
  return response;
}

// Objects the API server has but the watch has not delivered: only a GET of the object finds
// them (a queue created a moment before the Job that names it).
absl::StatusOr<client::Response> AnswerGet(const client::Request& r) {
  if (r.path == "/apis/scheduling.volcano.sh/v1beta1/queues/late") {
    return Reply(
        200,
        R"({"metadata":{"name":"late","resourceVersion":"11"},"spec":{"parent":"root"},"status":{"state":"Open"}})");
  }
  if (r.path == "/apis/scheduling.k8s.io/v1/priorityclasses/late-class") {
    return Reply(200, R"({"metadata":{"name":"late-class","resourceVersion":"12"},"value":5})");
  }
  return Reply(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})");
}

// The LIST answer per resource path prefix; a GET of one object goes to AnswerGet.
absl::StatusOr<client::Response> Answer(const client::Request& r) {
  auto starts = [&](std::string_view prefix) { return r.path.rfind(prefix, 0) == 0; };
  for (std::string_view named : {"/apis/scheduling.volcano.sh/v1beta1/queues/",
                                 "/apis/scheduling.k8s.io/v1/priorityclasses/"}) {
    if (starts(named)) return AnswerGet(r);
  }
  std::string body;
  if (starts("/apis/scheduling.volcano.sh/v1beta1/queues")) {
    body = List(
        R"({"metadata":{"name":"default","resourceVersion":"1"},"spec":{"weight":1},"status":{"state":"Open"}},)"
        R"({"metadata":{"name":"root","resourceVersion":"2"},"spec":{}},)"
        R"({"metadata":{"name":"team","resourceVersion":"3"},"spec":{"parent":"root","capability":{"cpu":"4"},"deserved":{"cpu":"2"},"guarantee":{"resource":{"cpu":1}}},"status":{"state":"Closed"}})");
  } else if (starts("/apis/scheduling.volcano.sh/v1beta1/podgroups")) {
    body = List(
        R"({"metadata":{"namespace":"a","name":"pg1","resourceVersion":"4"},"spec":{"queue":"team"}})");
  } else if (starts("/apis/batch.volcano.sh/v1alpha1/jobs")) {
    body = List(
        R"({"metadata":{"namespace":"a","name":"j1","resourceVersion":"5"},"spec":{"queue":"team"}},)"
        R"({"metadata":{"namespace":"b","name":"j1","resourceVersion":"6"},"spec":{"queue":"team"}},)"
        R"({"metadata":{"namespace":"b","name":"j2","resourceVersion":"7"},"spec":{}})");
  } else if (starts("/apis/scheduling.k8s.io/v1/priorityclasses")) {
    body = List(R"({"metadata":{"name":"online-critical","resourceVersion":"8"},"value":1000})");
  } else if (starts("/api/v1/namespaces")) {
    body = List(
        R"({"metadata":{"name":"a","resourceVersion":"9","annotations":{"scheduling.volcano.sh/queue-name":"team"}}},)"
        R"({"metadata":{"name":"b","resourceVersion":"9"}})");
  } else {
    return absl::NotFoundError(r.path);
  }
  return Reply(200, std::move(body));
}

// Five held watch streams: the caches list once and then see no change.
std::unique_ptr<client::Client> NewClient() {
  auto fake = std::make_unique<FakeTransport>();
  fake->SetFallback(Answer);
  for (int i = 0; i < 5; ++i) {
    FakeTransport::StreamScript held;
    held.hold_until_cancelled = true;
    fake->AddStream("", held);
  }
  return std::make_unique<client::Client>(std::move(fake));
}

TEST_CASE("InformerLister: not synced until every cache has listed, then answers from them",
          "[lister]") {
  std::unique_ptr<client::Client> client = NewClient();
  informer::SharedInformerFactory factory(client.get());
  InformerLister lister(&factory);
  CHECK_FALSE(lister.HasSynced());
  CHECK(lister.Unsynced() ==
        std::vector<std::string>{"queues", "podgroups", "jobs", "priorityclasses", "namespaces"});

  factory.Start();
  std::stop_source stop;
  REQUIRE(factory.WaitForCacheSync(stop.get_token(), std::chrono::seconds(10)));
  CHECK(lister.HasSynced());
  CHECK(lister.Unsynced().empty());

  auto team = lister.GetQueue("team");
  REQUIRE(team.ok());
  CHECK(team->state == "Closed");
  CHECK(team->parent == "root");
  CHECK(team->capability.at("cpu") == "4");
  CHECK(team->deserved.at("cpu") == "2");
  CHECK(team->guarantee.at("cpu") == "1");
  CHECK(lister.GetQueue("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK(lister.ChildQueues("root") == std::vector<std::string>{"team"});
  CHECK(lister.ChildQueues("team").empty());
  CHECK(lister.CountPodGroupsInQueue("team") == 1);
  CHECK(lister.CountJobsInQueue("team") == 2);
  CHECK(lister.CountJobsInQueue("default") == 1);
  CHECK(lister.CountJobsInQueue("other") == 0);
  CHECK(lister.PriorityClassExists("online-critical"));
  CHECK_FALSE(lister.PriorityClassExists("offline-batch"));
  CHECK(lister.NamespaceDefaultQueue("a") == "team");
  CHECK(lister.NamespaceDefaultQueue("b").empty());
  CHECK(lister.NamespaceDefaultQueue("missing").empty());
  // Without a live client a cache miss is final.
  CHECK(lister.GetQueue("late").status().code() == absl::StatusCode::kNotFound);
  CHECK_FALSE(lister.PriorityClassExists("late-class"));
  factory.Shutdown();
}

TEST_CASE("InformerLister: a queue or PriorityClass not yet in the cache is read from the server",
          "[lister]") {
  std::unique_ptr<client::Client> client = NewClient();
  informer::SharedInformerFactory factory(client.get());
  InformerLister lister(&factory, client.get());
  factory.Start();
  std::stop_source stop;
  REQUIRE(factory.WaitForCacheSync(stop.get_token(), std::chrono::seconds(10)));

  auto late = lister.GetQueue("late");
  REQUIRE(late.ok());
  CHECK(late->state == "Open");
  CHECK(late->parent == "root");
  CHECK(lister.GetQueue("team")->state == "Closed");  // still from the cache
  CHECK(lister.GetQueue("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK(lister.PriorityClassExists("late-class"));
  CHECK(lister.PriorityClassExists("online-critical"));
  CHECK_FALSE(lister.PriorityClassExists("offline-batch"));
  factory.Shutdown();
}

}  // namespace
}  // namespace basalt::webhook::server
