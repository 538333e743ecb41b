#include "common/client/client.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/client/testing/fake_transport.h"
#include "common/util/clock.h"
#include "common/util/json.h"
#include "common/util/status.h"

using basalt::MessageOf;
using namespace basalt::client;
namespace json = basalt::json;

namespace {

struct Fixture {
  Fixture() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    client = std::make_unique<Client>(std::move(fake));
  }
  FakeTransport* transport;
  std::unique_ptr<Client> client;
};

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" +
         message + "\",\"reason\":\"" + reason + "\",\"code\":" + std::to_string(code) + "}";
}

std::string_view Name(const json::Value& obj) {
  const json::Value* meta = json::Find(obj, "metadata");
  return meta == nullptr ? std::string_view() : json::GetString(*meta, "name");
}

}  // namespace

TEST_CASE("Client::Get: GETs the object path and parses the body", "[client]") {
  Fixture f;
  f.transport->AddJson("GET", "/api/v1/namespaces/ns/pods/p1", 200,
                       R"({"kind":"Pod","metadata":{"name":"p1"}})");
  absl::StatusOr<json::Document> pod = f.client->Get(Pods(), "ns", "p1");
  REQUIRE(pod.ok());
  REQUIRE(Name(*pod) == "p1");
  REQUIRE(f.transport->last_request().verb == "GET");

  f.transport->AddJson("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/default/status", 200,
                       R"({"kind":"Queue"})");
  REQUIRE(f.client->Get(Queues(), "", "default", "status").ok());
}

TEST_CASE("Client::Get: a 404 Status body becomes kNotFound with the API message", "[client]") {
  Fixture f;
  f.transport->AddJson("GET", "/api/v1/namespaces/ns/pods/gone", 404,
                       StatusBody(404, "NotFound", "pods \\\"gone\\\" not found"));
  absl::Status s = f.client->Get(Pods(), "ns", "gone").status();
  REQUIRE(absl::IsNotFound(s));
  REQUIRE(MessageOf(s) ==
          "GET /api/v1/namespaces/ns/pods/gone: NotFound: pods \"gone\" not found (HTTP 404)");
}

TEST_CASE("Client: bad names and missing namespaces are rejected before any request", "[client]") {
  Fixture f;
  REQUIRE(f.client->Get(Pods(), "ns", "").status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(f.client->Get(Pods(), "ns", "a/b").status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(f.client->Get(Pods(), "", "p").status().code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(f.client->Delete(ConfigMaps(), "..", "x").code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(f.transport->requests().empty());
}

TEST_CASE("Client::List: items become their own documents with apiVersion and kind", "[client]") {
  Fixture f;
  f.transport->AddJson(
      "GET", "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dx&limit=2", 200,
      R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"c1"},
          "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
  ListOptions options;
  options.label_selector = "app=x";
  options.limit = 2;
  absl::StatusOr<ObjectList> list = f.client->List(ConfigMaps(), "ns", options);
  REQUIRE(list.ok());
  REQUIRE(list->resource_version == "42");
  REQUIRE(list->continue_token == "c1");
  REQUIRE(list->items.size() == 2);
  REQUIRE(Name(list->items[1]) == "b");
  REQUIRE(json::GetString(list->items[0], "kind") == "ConfigMap");
  REQUIRE(json::GetString(list->items[0], "apiVersion") == "v1");

  f.transport->AddJson("GET", "/api/v1/pods", 200, R"({"metadata":{},"items":null})");
  absl::StatusOr<ObjectList> empty = f.client->List(Pods(), "");
  REQUIRE(empty.ok());
  REQUIRE(empty->items.empty());
}

TEST_CASE("Client::List: only the top-level items and metadata count, whatever the items contain",
          "[client]") {
  Fixture f;
  // Items with their own "items", "metadata" and "continue" keys, nested arrays, escapes and
  // whitespace; the list's metadata after the items.
  f.transport->AddJson("GET", "/api/v1/namespaces/ns/configmaps", 200,
                       R"({ "kind" : "ConfigMapList", "items" : [
            { "metadata" : { "name" : "a", "resourceVersion" : "1" },
              "data" : { "items" : "[not, a, list]", "continue" : "no" } } ,
            {"metadata":{"name":"b\"q\"","annotations":{"x":"{\"items\":[1]}"}},
             "binaryData":{},"nested":[[{"items":[]}],[]]}
          ],
          "metadata" : { "continue" : "next", "resourceVersion" : "77" } } )");
  absl::StatusOr<ObjectList> list = f.client->List(ConfigMaps(), "ns");
  REQUIRE(list.ok());
  CHECK(list->resource_version == "77");
  CHECK(list->continue_token == "next");
  REQUIRE(list->items.size() == 2);
  CHECK(Name(list->items[0]) == "a");
  CHECK(Name(list->items[1]) == "b\"q\"");
  CHECK(json::GetString(*json::Find(list->items[0], "data"), "items") == "[not, a, list]");
  CHECK(json::Serialize(*json::Find(list->items[1], "nested")) == R"([[{"items":[]}],[]])");
  CHECK(json::GetString(list->items[1], "kind") == "ConfigMap");
  CHECK(json::GetString(list->items[1], "apiVersion") == "v1");
}

TEST_CASE("Client::List: a response that is not a usable list is kInternal naming the problem",
          "[client]") {
  Fixture f;
  struct Case {
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"items":{"a":1}})", "GET /api/v1/pods: items is not a list"},
      {R"({"items":"x"})", "GET /api/v1/pods: items is not a list"},
      {R"({"items":[{"metadata":{}},3]})", "GET /api/v1/pods: items[1] is not an object"},
      {R"({"items":[[]]})", "GET /api/v1/pods: items[0] is not an object"},
      {R"({"items":[{"metadata":{"name":"a"}})", "GET /api/v1/pods: response is not JSON"},
      {R"(<html>busy</html>)", "GET /api/v1/pods: response is not JSON"},
  };
  for (const Case& c : cases) {
    f.transport->AddJson("GET", "/api/v1/pods", 200, c.body);
    absl::Status s = f.client->List(Pods(), "").status();
    INFO(c.body);
    CHECK(s.code() == absl::StatusCode::kInternal);
    CHECK(MessageOf(s).find(c.message) == 0);
  }
  // No items at all, or an empty array: an empty list.
  f.transport->AddJson("GET", "/api/v1/pods", 200, R"({"metadata":{"resourceVersion":"3"}})");
  absl::StatusOr<ObjectList> none = f.client->List(Pods(), "");
  REQUIRE(none.ok());
  CHECK(none->items.empty());
  CHECK(none->resource_version == "3");
  f.transport->AddJson("GET", "/api/v1/pods", 200, R"({"items":[ ]})");
  absl::StatusOr<ObjectList> empty = f.client->List(Pods(), "");
  REQUIRE(empty.ok());
  CHECK(empty->items.empty());
}

TEST_CASE("Client::ListAll: follows continue tokens until the last page", "[client]") {
  Fixture f;
  f.transport->AddJson("GET", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse&limit=2", 200,
                       R"({"metadata":{"resourceVersion":"7","continue":"t1"},
                           "items":[{"metadata":{"name":"n1"}},{"metadata":{"name":"n2"}}]})");
  f.transport->AddJson(
      "GET", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse&limit=2&continue=t1", 200,
      R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"n3"}}]})");
  ListOptions options;
  options.field_selector = "spec.unschedulable=false";
  absl::StatusOr<ObjectList> all = f.client->ListAll(Nodes(), "", options, 2);
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 3);
  REQUIRE(Name(all->items[2]) == "n3");
  REQUIRE(json::GetString(all->items[2], "kind") == "Node");
  REQUIRE(all->resource_version == "7");
  REQUIRE(all->continue_token.empty());
}

TEST_CASE("Client::ListAll: an expired continue token is kOutOfRange (relist)", "[client]") {
  Fixture f;
  f.transport->AddJson("GET", "/api/v1/pods?limit=1", 200,
                       R"({"metadata":{"resourceVersion":"7","continue":"old"},"items":[{}]})");
  f.transport->AddJson("GET", "/api/v1/pods?limit=1&continue=old", 410,
                       StatusBody(410, "Expired", "The provided continue parameter is too old"));
  absl::Status s = f.client->ListAll(Pods(), "", {}, 1).status();
  REQUIRE(s.code() == absl::StatusCode::kOutOfRange);
  REQUIRE(IsGone(s));
}

TEST_CASE("Client::Create: POSTs to the collection, a duplicate is kAlreadyExists", "[client]") {
  Fixture f;
  const std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})";
  f.transport->AddJson("POST", "/api/v1/namespaces/ns/configmaps", 201, body);
  REQUIRE(f.client->Create(ConfigMaps(), "ns", body).ok());
  Request sent = f.transport->last_request();
  REQUIRE(sent.verb == "POST");
  REQUIRE(sent.body == body);

  f.transport->AddJson("POST", "/api/v1/namespaces/ns/configmaps", 409,
                       StatusBody(409, "AlreadyExists", "configmaps \\\"c\\\" already exists"));
  absl::Status dup = f.client->Create(ConfigMaps(), "ns", body).status();
  REQUIRE(dup.code() == absl::StatusCode::kAlreadyExists);
  REQUIRE(absl::IsAlreadyExists(dup));

  // Namespace from the body when not given.
  f.transport->AddJson("POST", "/api/v1/namespaces/from-body/pods", 201, "{}");
  REQUIRE(
      f.client->Create(Pods(), "", R"({"metadata":{"name":"p","namespace":"from-body"}})").ok());
  // Cluster-scoped.
  f.transport->AddJson("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", 201, "{}");
  REQUIRE(f.client->Create(Queues(), "", R"({"metadata":{"name":"q"}})").ok());
}

TEST_CASE("Client::Update: PUTs to the object named in the body, stale is a conflict", "[client]") {
  Fixture f;
  const std::string body =
      R"({"metadata":{"name":"c","namespace":"ns","resourceVersion":"5"},"data":{"k":"v"}})";
  f.transport->AddJson("PUT", "/api/v1/namespaces/ns/configmaps/c", 409,
                       StatusBody(409, "Conflict",
                                  "Operation cannot be fulfilled on configmaps \\\"c\\\": the "
                                  "object has been modified"));
  absl::Status s = f.client->Update(ConfigMaps(), body).status();
  REQUIRE(s.code() == absl::StatusCode::kAborted);
  REQUIRE(IsConflict(s));
  REQUIRE(f.transport->last_request().verb == "PUT");
  REQUIRE(f.transport->last_request().body == body);

  f.transport->AddJson(
      "PUT", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/c/status", 200, "{}");
  REQUIRE(f.client->UpdateStatus(PodGroups(), body).ok());

  REQUIRE(f.client->Update(ConfigMaps(), R"({"metadata":{"namespace":"ns"}})").status().code() ==
          absl::StatusCode::kInvalidArgument);
  REQUIRE(f.client->Update(ConfigMaps(), "not json").status().code() ==
          absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Client::Patch: each patch type sends its content type", "[client]") {
  Fixture f;
  struct Case {
    PatchType type;
    std::string content_type;
  };
  const Case cases[] = {{PatchType::kMerge, "application/merge-patch+json"},
                        {PatchType::kJsonPatch, "application/json-patch+json"},
                        {PatchType::kStrategicMerge, "application/strategic-merge-patch+json"}};
  for (const Case& c : cases) {
    f.transport->AddJson("PATCH", "/api/v1/namespaces/ns/pods/p/status", 200, "{}");
    REQUIRE(f.client->Patch(Pods(), "ns", "p", c.type, R"({"a":1})", "status").ok());
    Request sent = f.transport->last_request();
    REQUIRE(FindHeader(sent.headers, "Content-Type") == c.content_type);
    REQUIRE(sent.body == R"({"a":1})");
  }
}

TEST_CASE("Client::Delete: DeleteOptions carry policy, grace period and preconditions",
          "[client]") {
  Fixture f;
  f.transport->AddJson("DELETE", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg",
                       200, "{}");
  DeleteOptions options;
  options.propagation_policy = "Foreground";
  options.grace_period_seconds = 0;
  options.precondition_uid = "uid-1";
  options.precondition_resource_version = "9";
  REQUIRE(f.client->Delete(PodGroups(), "ns", "pg", options).ok());
  REQUIRE(f.transport->last_request().body ==
          R"({"apiVersion":"v1","kind":"DeleteOptions","propagationPolicy":"Foreground",)"
          R"("gracePeriodSeconds":0,"preconditions":{"uid":"uid-1","resourceVersion":"9"}})");

  f.transport->AddJson("DELETE", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg",
                       409,
                       StatusBody(409, "Conflict", "Precondition failed: UID in precondition"));
  REQUIRE(IsConflict(f.client->Delete(PodGroups(), "ns", "pg", options)));
}

TEST_CASE("Client::Bind and Evict: subresource bodies", "[client]") {
  Fixture f;
  f.transport->AddJson("POST", "/api/v1/namespaces/ns/pods/p/binding", 201, "{}");
  REQUIRE(f.client->Bind("ns", "p", "node-1", "uid-7").ok());
  REQUIRE(f.transport->last_request().body ==
          R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p","namespace":"ns",)"
          R"("uid":"uid-7"},"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}})");

  f.transport->AddJson("POST", "/api/v1/namespaces/ns/pods/p/eviction", 429,
                       StatusBody(429, "TooManyRequests",
                                  "Cannot evict pod as it would violate the pod's disruption "
                                  "budget."));
  DeleteOptions options;
  options.grace_period_seconds = 30;
  absl::Status s = f.client->Evict("ns", "p", options);
  REQUIRE(s.code() == absl::StatusCode::kUnavailable);
  REQUIRE(IsTooManyRequests(s));
  Request sent = f.transport->last_request();
  REQUIRE(sent.max_retries == 0);
  REQUIRE(sent.body ==
          R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"ns"},)"
          R"("deleteOptions":{"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":30}})");
}

TEST_CASE("Client: a transport failure passes through, a non-JSON 200 is kInternal", "[client]") {
  Fixture f;
  f.transport->AddResponse("GET", "", absl::UnavailableError("connection refused"));
  REQUIRE(f.client->Get(Pods(), "ns", "p").status().code() == absl::StatusCode::kUnavailable);
  f.transport->AddJson("GET", "", 200, "<html>");
  absl::Status s = f.client->Get(Pods(), "ns", "p").status();
  REQUIRE(s.code() == absl::StatusCode::kInternal);
  REQUIRE(MessageOf(s).find("response is not JSON") != std::string_view::npos);
}

TEST_CASE("ParseWatchEvent: types, ERROR 410, and lines that are not events", "[client][watch]") {
  absl::StatusOr<WatchEvent> added =
      ParseWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})");
  REQUIRE(added.ok());
  REQUIRE(added->type == WatchEventType::kAdded);
  REQUIRE(Name(added->object) == "a");
  REQUIRE(ParseWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{}}})")->type ==
          WatchEventType::kBookmark);
  REQUIRE(ParseWatchEvent(R"({"type":"DELETED","object":{}})")->type == WatchEventType::kDeleted);

  absl::Status gone = ParseWatchEvent(R"({"type":"ERROR","object":)" +
                                      StatusBody(410, "Expired", "too old resource version") + "}")
                          .status();
  REQUIRE(gone.code() == absl::StatusCode::kOutOfRange);
  REQUIRE(IsGone(gone));

  absl::Status garbage = ParseWatchEvent("this is not json").status();
  REQUIRE(garbage.code() == absl::StatusCode::kInternal);
  REQUIRE(MessageOf(garbage).find("this is not json") != std::string_view::npos);
  REQUIRE(ParseWatchEvent(R"({"type":"ADDED"})").status().code() == absl::StatusCode::kInternal);
  REQUIRE(ParseWatchEvent(R"({"type":"WHAT","object":{}})").status().code() ==
          absl::StatusCode::kInternal);

  // Lines the client cannot read are told apart from the server's own ERROR events.
  REQUIRE(IsMalformedWatchEvent(garbage));
  REQUIRE(IsMalformedWatchEvent(ParseWatchEvent(R"({"type":"ADDED"})").status()));
  REQUIRE(IsMalformedWatchEvent(ParseWatchEvent(R"({"type":"WHAT","object":{}})").status()));
  REQUIRE_FALSE(IsMalformedWatchEvent(gone));
  absl::Status server_error = ParseWatchEvent(R"({"type":"ERROR","object":)" +
                                              StatusBody(500, "InternalError", "etcd down") + "}")
                                  .status();
  REQUIRE(server_error.code() == absl::StatusCode::kInternal);
  REQUIRE_FALSE(IsMalformedWatchEvent(server_error));
  REQUIRE_FALSE(IsMalformedWatchEvent(absl::OkStatus()));
}

TEST_CASE("Client::Watch: events split across chunks arrive whole and in order",
          "[client][watch]") {
  Fixture f;
  std::string stream;
  for (int i = 0; i < 50; ++i) {
    stream += R"({"type":"MODIFIED","object":{"metadata":{"name":"o)" + std::to_string(i) +
              R"(","resourceVersion":")" + std::to_string(100 + i) + "\"}}}\n";
  }
  stream += R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"200"}}})"
            "\n";
  // Chunks of varying odd sizes.
  FakeTransport::StreamScript script;
  for (size_t pos = 0, size = 1; pos < stream.size(); pos += size, size = size % 97 + 13) {
    script.chunks.push_back(stream.substr(pos, size));
  }
  f.transport->AddStream("/api/v1/namespaces/ns/pods?watch=true*", script);

  ListOptions options;
  options.resource_version = "99";
  options.timeout_seconds = 60;
  std::vector<std::string> names;
  std::string last_rv;
  absl::Status s = f.client->Watch(Pods(), "ns", options, [&](WatchEvent&& e) {
    const json::Value* meta = json::Find(e.object, "metadata");
    if (e.type == WatchEventType::kBookmark) {
      last_rv = std::string(json::GetString(*meta, "resourceVersion"));
    } else {
      names.emplace_back(json::GetString(*meta, "name"));
    }
    return absl::OkStatus();
  });
  REQUIRE(s.ok());
  REQUIRE(names.size() == 50);
  REQUIRE(names[49] == "o49");
  REQUIRE(last_rv == "200");
  Request sent = f.transport->last_request();
  REQUIRE(sent.path ==
          "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=99&allowWatchBookmarks=true"
          "&timeoutSeconds=60");
  REQUIRE(sent.stream_idle_timeout == std::chrono::seconds(90));
}

TEST_CASE("Client::Watch: an ERROR 410 event ends the watch with kOutOfRange", "[client][watch]") {
  Fixture f;
  FakeTransport::StreamScript script;
  script.chunks = {R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                   "\n",
                   R"({"type":"ERROR","object":)" +
                       StatusBody(410, "Expired", "too old resource version: 5 (10)") + "}\n",
                   R"({"type":"ADDED","object":{"metadata":{"name":"never"}}})"
                   "\n"};
  f.transport->AddStream("", script);
  int events = 0;
  absl::Status s = f.client->Watch(Pods(), "", {}, [&](WatchEvent&&) {
    ++events;
    return absl::OkStatus();
  });
  REQUIRE(s.code() == absl::StatusCode::kOutOfRange);
  REQUIRE(events == 1);
}

TEST_CASE("Client::Watch: a non-JSON line is an error naming it, not a crash", "[client][watch]") {
  Fixture f;
  FakeTransport::StreamScript script;
  script.chunks = {"garbage{\n"};
  f.transport->AddStream("", script);
  absl::Status s = f.client->Watch(Pods(), "", {}, [](WatchEvent&&) { return absl::OkStatus(); });
  REQUIRE(s.code() == absl::StatusCode::kInternal);
  REQUIRE(MessageOf(s).find("garbage{") != std::string_view::npos);
}

TEST_CASE("Client::Watch: a 410 answer and a handler error end the watch", "[client][watch]") {
  Fixture f;
  FakeTransport::StreamScript gone;
  gone.status_code = 410;
  gone.body = StatusBody(410, "Gone", "too old");
  f.transport->AddStream("", gone);
  REQUIRE(f.client->Watch(Pods(), "", {}, [](WatchEvent&&) { return absl::OkStatus(); }).code() ==
          absl::StatusCode::kOutOfRange);

  FakeTransport::StreamScript two;
  two.chunks = {"{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"ADDED\",\"object\":{}}\n"};
  f.transport->AddStream("", two);
  int events = 0;
  absl::Status s = f.client->Watch(Pods(), "", {}, [&](WatchEvent&&) {
    ++events;
    return absl::CancelledError("enough");
  });
  REQUIRE(s.code() == absl::StatusCode::kCancelled);
  REQUIRE(events == 1);
}

TEST_CASE("Client::Watch: Cancel from another thread ends a quiet watch with OK",
          "[client][watch]") {
  Fixture f;
  FakeTransport::StreamScript script;
  script.chunks = {"{\"type\":\"ADDED\",\"object\":{}}\n"};
  script.hold_until_cancelled = true;
  f.transport->AddStream("", script);
  CancelToken cancel;
  std::atomic<int> events{0};
  absl::Status result;
  std::thread watcher([&] {
    result = f.client->Watch(
        Pods(), "", {},
        [&](WatchEvent&&) {
          ++events;
          return absl::OkStatus();
        },
        &cancel);
  });
  f.transport->WaitForHeldStream();
  cancel.Cancel();
  watcher.join();
  REQUIRE(result.ok());
  REQUIRE(events == 1);
}

TEST_CASE("RetryOnConflict: retries conflicts only, re-running the read-modify-write", "[client]") {
  basalt::FakeClock clock;
  std::atomic<int> calls{0};
  absl::Status conflict =
      ApiError(409, StatusBody(409, "Conflict", "the object has been modified"));
  absl::Status result;
  std::thread t([&] {
    result = RetryOnConflict([&] { return ++calls < 3 ? conflict : absl::OkStatus(); }, 5, &clock);
  });
  clock.WaitForSleeps(1);
  clock.Advance(std::chrono::milliseconds(10));
  clock.WaitForSleeps(2);
  REQUIRE(calls == 2);
  clock.Advance(std::chrono::milliseconds(20));
  t.join();
  REQUIRE(result.ok());
  REQUIRE(calls == 3);

  int other_calls = 0;
  absl::Status other = RetryOnConflict(
      [&] {
        ++other_calls;
        return absl::NotFoundError("x");
      },
      5, &clock);
  REQUIRE(other.code() == absl::StatusCode::kNotFound);
  REQUIRE(other_calls == 1);
}
