// The queue controller's decisions: state transitions for OpenQueue/CloseQueue, PodGroup
// counts per phase, and status writes only on change.

#include "controllers/queue/queue_controller.h"

#include <catch2/catch.hpp>

#include "prometheus/text_serializer.h"

namespace basalt::controllers {
namespace {

TEST_CASE("NextQueueState: Volcano's queue state machine", "[controllers][queue]") {
  CHECK(NextQueueState("q", "", "", false) == "Open");
  CHECK(NextQueueState("q", "Open", "CloseQueue", false) == "Closed");
  CHECK(NextQueueState("q", "Open", "CloseQueue", true) == "Closing");
  CHECK(NextQueueState("q", "Closing", "", true) == "Closing");
  CHECK(NextQueueState("q", "Closing", "", false) == "Closed");
  CHECK(NextQueueState("q", "Closed", "OpenQueue", false) == "Open");
  CHECK(NextQueueState("q", "Closing", "OpenQueue", true) == "Open");
  CHECK(NextQueueState("q", "Closed", "CloseQueue", true) == "Closed");
  CHECK(NextQueueState("root", "Open", "CloseQueue", false) == "Open");
  // root is never closed, even when its status was edited to Closed.
  CHECK(NextQueueState("root", "Closed", "", false) == "Open");
  CHECK(NextQueueState("root", "Closing", "", true) == "Open");
}

TEST_CASE("DefaultParentPatch: parentless queues get parent root, root and parented ones not",
          "[controllers][queue]") {
  json::Document plain = *json::Parse(R"({"metadata":{"name":"q"},"spec":{"weight":1}})");
  CHECK(DefaultParentPatch(plain) == std::optional<std::string>(R"({"spec":{"parent":"root"}})"));
  json::Document no_spec = *json::Parse(R"({"metadata":{"name":"q"}})");
  CHECK(DefaultParentPatch(no_spec).has_value());
  json::Document parented = *json::Parse(R"({"metadata":{"name":"q"},"spec":{"parent":"org-a"}})");
  CHECK_FALSE(DefaultParentPatch(parented).has_value());
  json::Document root = *json::Parse(R"({"metadata":{"name":"root"},"spec":{}})");
  CHECK_FALSE(DefaultParentPatch(root).has_value());
}

TEST_CASE("RootQueueJson: weight 1, not reclaimable, no parent or quotas", "[controllers][queue]") {
  json::Document root = *json::Parse(RootQueueJson());
  CHECK(json::GetString(*json::Find(root, "metadata"), "name") == "root");
  const json::Value* spec = json::Find(root, "spec");
  REQUIRE(spec != nullptr);
  CHECK(json::GetInt(*spec, "weight") == 1);
  CHECK(json::Find(*spec, "reclaimable")->IsFalse());
  CHECK(json::Find(*spec, "parent") == nullptr);
  CHECK(json::Find(*spec, "capability") == nullptr);
}

TEST_CASE("CountPodGroups: by phase, absent phase counts as pending", "[controllers][queue]") {
  std::vector<json::Document> docs;
  for (const char* text :
       {R"({"status":{"phase":"Inqueue"}})", R"({"status":{"phase":"Running"}})",
        R"({"status":{"phase":"Running"}})", R"({})", R"({"status":{"phase":"Completed"}})",
        R"({"status":{"phase":"Unknown"}})"}) {
    docs.push_back(*json::Parse(text));
  }
  std::vector<const json::Value*> ptrs;
  for (const auto& d : docs) ptrs.push_back(&d);
  const QueueCounts c = CountPodGroups(ptrs);
  CHECK(c.inqueue == 1);
  CHECK(c.running == 2);
  CHECK(c.pending == 1);
  CHECK(c.completed == 1);
  CHECK(c.unknown == 1);
  CHECK(c.total == 6);
}

TEST_CASE("QueueStatusPatch: written only when state or counts change", "[controllers][queue]") {
  QueueCounts c;
  c.running = 2;
  json::Document same =
      *json::Parse(R"({"state":"Open","running":2,"pending":0,"allocated":{"cpu":"1"}})");
  CHECK_FALSE(QueueStatusPatch(&same, "Open", c).has_value());
  auto patch = QueueStatusPatch(&same, "Closing", c);
  REQUIRE(patch.has_value());
  CHECK(patch->find(R"("state":"Closing")") != std::string::npos);
  // A merge patch of the counters only: the scheduler's `allocated` is left alone.
  CHECK(patch->find("allocated") == std::string::npos);
  CHECK(QueueStatusPatch(nullptr, "Open", QueueCounts{}).has_value());
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

std::string Scrape(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST_CASE("QueuePodGroupMetrics: Volcano's per-queue gauges, removed with the queue",
          "[controllers][queue]") {
  prometheus::Registry registry;
  QueuePodGroupMetrics metrics(registry);
  QueueCounts c;
  c.inqueue = 2;
  c.pending = 3;
  c.running = 1;
  c.completed = 4;
  metrics.Set("team-1", c);
  metrics.Set("team-2", QueueCounts{});
  std::string text = Scrape(registry);
  CHECK(text.find(R"(volcano_queue_pod_group_inqueue_count{queue_name="team-1"} 2)") !=
        std::string::npos);
  CHECK(text.find(R"(volcano_queue_pod_group_pending_count{queue_name="team-1"} 3)") !=
        std::string::npos);
  CHECK(text.find(R"(volcano_queue_pod_group_running_count{queue_name="team-1"} 1)") !=
        std::string::npos);
  CHECK(text.find(R"(volcano_queue_pod_group_unknown_count{queue_name="team-1"} 0)") !=
        std::string::npos);
  CHECK(text.find(R"(volcano_queue_pod_group_completed_count{queue_name="team-1"} 4)") !=
        std::string::npos);
  metrics.Remove("team-1");
  text = Scrape(registry);
  CHECK(text.find(R"(queue_name="team-1")") == std::string::npos);
  CHECK(text.find(R"(volcano_queue_pod_group_running_count{queue_name="team-2"} 0)") !=
        std::string::npos);
}

}  // namespace
}  // namespace basalt::controllers
