#include "webhook/router.h"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "common/util/json.h"
#include "webhook/admission_router.h"
#include "webhook/fake_lister.h"

namespace basalt::webhook {
namespace {

// Records what it saw and answers with a fixed response.
class RecordingHandler : public AdmissionHandler {
 public:
  explicit RecordingHandler(AdmissionResponse response) : response_(std::move(response)) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override {
    seen_uids_.push_back(request.uid);
    return response_;
  }
  mutable std::vector<std::string> seen_uids_;

 private:
  AdmissionResponse response_;
};

class ThrowingHandler : public AdmissionHandler {
 public:
  AdmissionResponse Handle(const AdmissionRequest&) const override {
    throw std::runtime_error("boom");
  }
};

constexpr std::string_view kBody =
    R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"abc","operation":"CREATE","object":{}}})";

TEST_CASE("Router: dispatches by path and echoes the request uid", "[webhook]") {
  Router router;
  auto handler =
      std::make_unique<RecordingHandler>(AdmissionResponse::Deny(403, "Forbidden", "no"));
  RecordingHandler* raw = handler.get();
  router.Register("/jobs/validate", "Job", std::move(handler));

  HttpReply reply = router.Serve("/jobs/validate", kBody);
  CHECK(reply.status == 200);
  CHECK(reply.content_type == "application/json");
  CHECK(
      reply.body ==
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"abc","allowed":false,"status":{"status":"Failure","code":403,"reason":"Forbidden","message":"no"}}})");
  CHECK(raw->seen_uids_ == std::vector<std::string>{"abc"});
}

TEST_CASE("Router: unknown paths, bad bodies and oversize bodies map to HTTP errors", "[webhook]") {
  Router router;
  router.Register("/jobs/validate", "Job",
                  std::make_unique<RecordingHandler>(AdmissionResponse::Allow()));
  HttpReply missing = router.Serve("/nope", kBody);
  CHECK(missing.status == 404);
  CHECK(missing.body == "no admission handler for path \"/nope\"");

  HttpReply bad = router.Serve("/jobs/validate", "{\"apiVersion\":");
  CHECK(bad.status == 400);
  CHECK(bad.content_type == "text/plain");
  CHECK(bad.body.rfind("AdmissionReview is not valid JSON", 0) == 0);

  HttpReply huge = router.Serve("/jobs/validate", std::string(kMaxAdmissionReviewBytes + 1, ' '));
  CHECK(huge.status == 413);
}

std::string ReviewOf(std::string_view request) {
  return std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)") +
         std::string(request) + "}";
}

TEST_CASE("Router: ignores the query string the API server appends", "[webhook]") {
  Router router;
  router.Register("/jobs/validate", "Job",
                  std::make_unique<RecordingHandler>(AdmissionResponse::Allow()));
  CHECK(router.Serve("/jobs/validate?timeout=10s", kBody).status == 200);
}

TEST_CASE("Router: wrong kinds are refused, subresources allowed without the handler",
          "[webhook]") {
  Router router;
  auto handler =
      std::make_unique<RecordingHandler>(AdmissionResponse::Deny(403, "Forbidden", "no"));
  RecordingHandler* raw = handler.get();
  router.Register("/jobs/validate", "Job", std::move(handler));

  HttpReply wrong = router.Serve(
      "/jobs/validate",
      ReviewOf(R"({"uid":"a","operation":"CREATE","kind":{"kind":"Queue"},"object":{}})"));
  CHECK(wrong.status == 200);
  CHECK(
      wrong.body.find(
          R"x("code":400,"reason":"BadRequest","message":"/jobs/validate admits Job objects, not Queue (check the webhook configuration's rules)")x") !=
      std::string::npos);

  HttpReply status = router.Serve(
      "/jobs/validate", ReviewOf(R"({"uid":"b","operation":"UPDATE","kind":{"kind":"Job"},)"
                                 R"("subResource":"status","object":{},"oldObject":{}})"));
  CHECK(status.body.find(R"("uid":"b","allowed":true)") != std::string::npos);

  HttpReply ok = router.Serve(
      "/jobs/validate",
      ReviewOf(R"({"uid":"c","operation":"CREATE","kind":{"kind":"Job"},"object":{}})"));
  CHECK(ok.body.find(R"("uid":"c","allowed":false)") != std::string::npos);
  CHECK(raw->seen_uids_ == std::vector<std::string>{"c"});
}

TEST_CASE("Router: a throwing handler denies with 500 instead of crashing", "[webhook]") {
  Router router;
  router.Register("/x", "", std::make_unique<ThrowingHandler>());
  HttpReply reply = router.Serve("/x", kBody);
  CHECK(reply.status == 200);
  CHECK(reply.body.find(R"("code":500)") != std::string::npos);
  CHECK(reply.body.find("internal error in /x: boom") != std::string::npos);
}

TEST_CASE("NewAdmissionRouter: registers every Basalt admission path", "[webhook]") {
  FakeLister lister;
  AdmissionDeps deps;
  deps.lister = &lister;
  auto router = NewAdmissionRouter(deps);
  CHECK(router->Paths() ==
        std::vector<std::string>{"/cronjobs/validate", "/jobflows/validate", "/jobs/mutate",
                                 "/jobs/validate", "/podgroups/mutate", "/podgroups/validate",
                                 "/pods/validate", "/queues/mutate", "/queues/validate"});
}

TEST_CASE("NewAdmissionRouter: only handlers that read the cluster state wait for the caches",
          "[webhook]") {
  FakeLister lister;
  auto router = NewAdmissionRouter({.lister = &lister, .options = {}});
  // Validators that look up queues, counts, PriorityClasses, and the PodGroup mutator (the
  // namespace's default queue) need synced caches; the defaulting of Jobs and Queues and the
  // pod check do not.
  for (std::string_view path : {"/cronjobs/validate", "/jobs/validate", "/queues/validate",
                                "/podgroups/mutate", "/podgroups/validate"}) {
    INFO(path);
    CHECK(router->ReadsClusterState(path));
  }
  for (std::string_view path : {"/jobs/mutate", "/queues/mutate", "/pods/validate"}) {
    INFO(path);
    CHECK_FALSE(router->ReadsClusterState(path));
  }
  CHECK(router->ReadsClusterState("/jobs/validate?timeout=10s"));
  CHECK_FALSE(router->ReadsClusterState("/unknown"));
}

TEST_CASE("NewAdmissionRouter: an end-to-end job CREATE through mutate then validate",
          "[webhook]") {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  AdmissionDeps deps;
  deps.lister = &lister;
  auto router = NewAdmissionRouter(deps);
  std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"j1","operation":"CREATE","object":)"
      R"({"metadata":{"name":"j"},"spec":{"tasks":[{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}}}})";
  HttpReply mutated = router->Serve("/jobs/mutate", review);
  REQUIRE(mutated.status == 200);
  CHECK(mutated.body.find(R"("patchType":"JSONPatch")") != std::string::npos);
  HttpReply validated = router->Serve("/jobs/validate", review);
  REQUIRE(validated.status == 200);
  // Without the mutation the task has no name; validation says so.
  CHECK(validated.body.find("spec.tasks[0].name: task name must not be empty") !=
        std::string::npos);
}

TEST_CASE("NewAdmissionRouter: concurrent requests get the same answers", "[webhook]") {
  FakeLister lister;
  lister.AddQueue("default", "Closed");
  AdmissionDeps deps;
  deps.lister = &lister;
  auto router = NewAdmissionRouter(deps);
  std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"j1","operation":"CREATE","object":)"
      R"({"metadata":{"name":"j"},"spec":{"queue":"default","tasks":[{"name":"t","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}}}})";
  const std::string expected = router->Serve("/jobs/validate", review).body;
  REQUIRE(expected.find("queue `default` status is `Closed`") != std::string::npos);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (router->Serve("/jobs/validate", review).body != expected) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>{0, 0, 0, 0});
}

}  // namespace
}  // namespace basalt::webhook
