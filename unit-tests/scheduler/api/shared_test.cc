#include "scheduler/api/shared.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "scheduler/api/job_info.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched {
namespace {

using Labels = std::map<std::string, std::string>;

TEST_CASE("Shared: a copy shares the value instead of copying it", "[shared]") {
  Shared<Labels> a = Labels{{"app", "web"}};
  Shared<Labels> b = a;
  CHECK(b.SharesWith(a));
  CHECK(&*a == &*b);
  CHECK(b->at("app") == "web");
}

TEST_CASE("Shared: Update changes only the holder, never what other copies see", "[shared]") {
  Shared<Labels> a = Labels{{"app", "web"}};
  Shared<Labels> b = a;
  b.Update([](Labels& m) { m["tier"] = "front"; });
  CHECK_FALSE(b.SharesWith(a));
  CHECK(a == Labels{{"app", "web"}});
  CHECK(b == Labels{{"app", "web"}, {"tier", "front"}});
}

TEST_CASE("Shared: default values are empty and compare by content", "[shared]") {
  Shared<std::vector<int>> empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(empty.begin() == empty.end());
  Shared<std::vector<int>> one = std::vector<int>{1};
  Shared<std::vector<int>> other = std::vector<int>{1};
  CHECK_FALSE(one.SharesWith(other));
  CHECK(one == other);
  CHECK_FALSE(one == empty);
  int sum = 0;
  for (int v : one) sum += v;
  CHECK(sum == 1);
}

TEST_CASE("Shared: a job's deep copy shares its tasks' labels and tolerations", "[shared]") {
  JobInfo job("ns", "j");
  TaskInfo t;
  t.uid = "u1";
  t.name = "p1";
  t.namespace_name = "ns";
  t.job_id = "ns/j";
  t.labels = LabelSet{{"volcano.sh/job-name", "j"}};
  Toleration gpu;
  gpu.key = "nvidia.com/gpu";
  t.tolerations = std::vector<Toleration>{gpu};
  job.AddTask(t);
  JobInfo copy = job.Clone();
  const TaskInfo& orig = job.tasks().at("u1");
  const TaskInfo& copied = copy.tasks().at("u1");
  CHECK(&orig != &copied);
  CHECK(copied.labels.SharesWith(orig.labels));
  CHECK(copied.tolerations.SharesWith(orig.tolerations));
  CHECK(copied.labels->at("volcano.sh/job-name") == "j");
}

struct LabelsHash {
  size_t operator()(const Labels& m) const { return m.size(); }  // collisions on purpose
};

TEST_CASE("SharedPool: equal values interned while held share one value, others do not",
          "[shared]") {
  SharedPool<Labels, LabelsHash> pool;
  Shared<Labels> a = pool.Intern(Labels{{"app", "web"}});
  Shared<Labels> b = pool.Intern(Labels{{"app", "web"}});
  Shared<Labels> c = pool.Intern(Labels{{"app", "db"}});  // same hash, different value
  CHECK(a.SharesWith(b));
  CHECK_FALSE(a.SharesWith(c));
  CHECK(c->at("app") == "db");
  // An empty value is the process-wide empty one, not a pool entry.
  CHECK(pool.Intern(Labels{}).SharesWith(Shared<Labels>()));
  CHECK(pool.size() == 2);
}

TEST_CASE("SharedPool: a value no one holds any more is made anew and its entry swept",
          "[shared]") {
  SharedPool<Labels, LabelsHash> pool;
  { Shared<Labels> gone = pool.Intern(Labels{{"app", "web"}}); }
  Shared<Labels> again = pool.Intern(Labels{{"app", "web"}});
  CHECK(again->at("app") == "web");
  for (int i = 0; i < 200; ++i) pool.Intern(Labels{{"n", std::to_string(i)}});  // none held
  CHECK(pool.size() < 100);  // expired entries swept
  CHECK(pool.Intern(Labels{{"app", "web"}}).SharesWith(again));
}

}  // namespace
}  // namespace basalt::sched
