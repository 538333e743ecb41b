#include "common/informer/store.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/api/compact.h"
#include "common/informer/object.h"
#include "common/informer/transforms.h"
#include "unit-tests/common/informer/test_objects.h"

namespace basalt::informer {
namespace {

using testing::MakeConfigMap;

std::vector<std::string> KeysOf(std::vector<Object> objs) {
  std::vector<std::string> keys;
  for (const Object& o : objs) keys.push_back(o.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST_CASE("Object: keys are namespace/name, or name for cluster-scoped objects", "[store]") {
  Object a = MakeConfigMap("ns", "a").ResourceVersion("7").Obj();
  CHECK(a.key() == "ns/a");
  CHECK(a.namespace_name() == "ns");
  CHECK(a.name() == "a");
  CHECK(a.resource_version() == "7");
  Object q = MakeConfigMap("", "default").Obj();
  CHECK(q.key() == "default");
  CHECK(q.namespace_name().empty());
  CHECK(q.name() == "default");
}

TEST_CASE("Transform: rejects objects without a name, naming the transform", "[store]") {
  absl::StatusOr<Object> o = Transform().Apply(*json::Parse(R"({"kind":"ConfigMap"})"));
  CHECK(o.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Transform: the default payload is the whole document, others are typed", "[store]") {
  Object doc = MakeConfigMap("ns", "a").Data("k", "v").Obj();
  REQUIRE(doc.Is<json::Document>());
  CHECK(json::GetString(*json::Find(doc.doc(), "data"), "k") == "v");
  CHECK(doc.TryAs<int>() == nullptr);

  Transform count = Transform::To<int>("count", [](json::Document&& d) {
    return absl::StatusOr<std::shared_ptr<const int>>(
        std::make_shared<const int>(static_cast<int>(json::Find(d, "data")->MemberCount())));
  });
  CHECK(count.name() == "count");
  Object n = *count.Apply(MakeConfigMap("ns", "b").Data("x", "1").Data("y", "2").Doc());
  CHECK(n.key() == "ns/b");
  CHECK(n.As<int>() == 2);
  CHECK(n.TryAs<json::Document>() == nullptr);
  std::shared_ptr<const int> shared = n.Share<int>();
  n = Object();
  CHECK(*shared == 2);  // the payload outlives the handle

  Transform failing = Transform::To<int>("failing", [](json::Document&&) {
    return absl::StatusOr<std::shared_ptr<const int>>(absl::InvalidArgumentError("bad"));
  });
  absl::StatusOr<Object> bad = failing.Apply(MakeConfigMap("ns", "c").Doc());
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("failing") != std::string::npos);
  CHECK(std::string(bad.status().message()).find("ns/c") != std::string::npos);
}

TEST_CASE("ShareDocument: a cached document keeps a right-sized memory pool", "[store]") {
  // What the client hands over: a Document deep-copied into a fresh default pool (64 KiB).
  json::Document src = MakeConfigMap("ns", "a").Data("key", std::string(300, 'x')).Doc();
  json::Document copy;
  copy.CopyFrom(src, copy.GetAllocator());
  REQUIRE(copy.GetAllocator().Capacity() >= 64 * 1024);
  const size_t used = copy.GetAllocator().Size();
  std::shared_ptr<const json::Document> shared = ShareDocument(std::move(copy));
  CHECK(json::Serialize(*shared) == json::Serialize(src));
  // Reading the pool's accounting needs a non-const Document; nothing is modified.
  json::Document& pooled = const_cast<json::Document&>(*shared);
  CHECK(pooled.GetAllocator().Capacity() <= used + 1024);
  CHECK(pooled.GetAllocator().Size() <= used + 64);
}

TEST_CASE("ShareDocument: a document built member by member is copied into what it uses",
          "[store]") {
  // Built the way a Transform trims a pod: objects and arrays made empty and filled one member
  // at a time, so the source pool holds their default capacities and regrown blocks.
  json::Document built(rapidjson::kObjectType);
  json::Allocator& a = built.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (int i = 0; i < 40; ++i) {
    json::Value item(rapidjson::kObjectType);
    json::Set(item, "name", json::Value("a-name-longer-than-the-short-form", a), a);
    json::Set(item, "n", json::Value(i), a);
    list.PushBack(std::move(item), a);
  }
  json::Set(built, "items", std::move(list), a);
  json::Set(built, "short", json::Value("x", a), a);
  json::Set(built, "empty", json::Value(rapidjson::kObjectType), a);
  const std::string text = json::Serialize(built);
  const size_t used = built.GetAllocator().Size();
  std::shared_ptr<const json::Document> shared = ShareDocument(std::move(built));
  CHECK(json::Serialize(*shared) == text);
  json::Document& pooled = const_cast<json::Document&>(*shared);
  // One chunk, filled to within the slack: what the copy allocates, not what the source held.
  CHECK(pooled.GetAllocator().Size() <= pooled.GetAllocator().Capacity());
  CHECK(pooled.GetAllocator().Capacity() <= pooled.GetAllocator().Size() + 16);
  CHECK(pooled.GetAllocator().Capacity() < used);
}

TEST_CASE("Store: Upsert returns the previous state and Get sees the latest", "[store]") {
  Store store;
  CHECK_FALSE(store.Upsert(MakeConfigMap("ns", "a").ResourceVersion("1").Obj()));
  Object old = store.Upsert(MakeConfigMap("ns", "a").ResourceVersion("2").Obj());
  REQUIRE(old);
  CHECK(old.resource_version() == "1");
  CHECK(store.Get("ns/a").resource_version() == "2");
  CHECK_FALSE(store.Get("ns/missing"));
  CHECK(store.size() == 1);
  CHECK(store.Delete("ns/a").resource_version() == "2");
  CHECK_FALSE(store.Delete("ns/a"));
  CHECK(store.size() == 0);
}

TEST_CASE("Store: the namespace index follows adds, moves and deletes", "[store]") {
  Store store;
  store.Upsert(MakeConfigMap("ns1", "a").Obj());
  store.Upsert(MakeConfigMap("ns1", "b").Obj());
  store.Upsert(MakeConfigMap("ns2", "a").Obj());
  store.Upsert(MakeConfigMap("", "cluster").Obj());
  CHECK(KeysOf(*store.ByIndex(kNamespaceIndex, "ns1")) ==
        std::vector<std::string>{"ns1/a", "ns1/b"});
  CHECK(*store.IndexKeys(kNamespaceIndex, "ns2") == std::vector<std::string>{"ns2/a"});
  CHECK(*store.IndexValues(kNamespaceIndex) == std::vector<std::string>{"ns1", "ns2"});
  store.Delete("ns2/a");
  CHECK(store.ByIndex(kNamespaceIndex, "ns2")->empty());
  CHECK(*store.IndexValues(kNamespaceIndex) == std::vector<std::string>{"ns1"});
  CHECK(store.ByIndex("nope", "x").status().code() == absl::StatusCode::kNotFound);
  std::vector<std::string> keys = store.Keys();
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"cluster", "ns1/a", "ns1/b"});
  CHECK(KeysOf(store.List()) == keys);
}

TEST_CASE("Store: the label index moves an object when its labels change", "[store]") {
  Store store({{kLabelIndex, LabelIndexFunc()}});
  store.Upsert(MakeConfigMap("ns", "a").Label("app", "web").Label("tier", "fe").Obj());
  store.Upsert(MakeConfigMap("ns", "b").Label("app", "web").Obj());
  CHECK(*store.IndexKeys(kLabelIndex, "app=web") == std::vector<std::string>{"ns/a", "ns/b"});
  CHECK(*store.IndexKeys(kLabelIndex, "tier=fe") == std::vector<std::string>{"ns/a"});
  store.Upsert(MakeConfigMap("ns", "a").Label("app", "db").Obj());
  CHECK(*store.IndexKeys(kLabelIndex, "app=web") == std::vector<std::string>{"ns/b"});
  CHECK(*store.IndexKeys(kLabelIndex, "app=db") == std::vector<std::string>{"ns/a"});
  CHECK(store.IndexKeys(kLabelIndex, "tier=fe")->empty());
}

TEST_CASE("Store: custom indexers added later index the existing objects", "[store]") {
  Store store;
  store.Upsert(MakeConfigMap("ns", "a").Data("owner", "x").Obj());
  store.Upsert(MakeConfigMap("ns", "b").Data("owner", "y").Obj());
  IndexFunc by_owner = IndexBy<json::Document>([](const json::Document& d) {
    std::vector<std::string> out;
    if (const json::Value* data = json::Find(d, "data")) {
      std::string_view owner = json::GetString(*data, "owner");
      if (!owner.empty()) out.emplace_back(owner);
    }
    return out;
  });
  REQUIRE(store.AddIndexers({{"owner", by_owner}}).ok());
  CHECK(*store.IndexKeys("owner", "x") == std::vector<std::string>{"ns/a"});
  store.Upsert(MakeConfigMap("ns", "c").Data("owner", "x").Obj());
  CHECK(*store.IndexKeys("owner", "x") == std::vector<std::string>{"ns/a", "ns/c"});
  CHECK(store.AddIndexers({{"owner", by_owner}}).code() == absl::StatusCode::kAlreadyExists);
  CHECK(store.AddIndexers({{kNamespaceIndex, by_owner}}).code() ==
        absl::StatusCode::kAlreadyExists);
}

TEST_CASE("Store: Replace reports adds, updates and tombstones with the last known state",
          "[store]") {
  Store store({{kLabelIndex, LabelIndexFunc()}});
  store.Upsert(MakeConfigMap("ns", "kept").ResourceVersion("1").Obj());
  store.Upsert(MakeConfigMap("ns", "gone").ResourceVersion("2").Label("app", "x").Obj());
  std::vector<StoreChange> changes =
      store.Replace({MakeConfigMap("ns", "new").ResourceVersion("9").Obj(),
                     MakeConfigMap("ns", "kept").ResourceVersion("8").Obj()},
                    "10");
  REQUIRE(changes.size() == 3);
  // The vanished object first, carrying its last known state.
  CHECK(changes[0].old.key() == "ns/gone");
  CHECK(changes[0].old.resource_version() == "2");
  CHECK_FALSE(changes[0].current);
  // Then in key order: kept (update) and new (add).
  CHECK(changes[1].old.resource_version() == "1");
  CHECK(changes[1].current.resource_version() == "8");
  CHECK_FALSE(changes[2].old);
  CHECK(changes[2].current.key() == "ns/new");

  CHECK(store.resource_version() == "10");
  CHECK_FALSE(store.Get("ns/gone"));
  CHECK(store.IndexKeys(kLabelIndex, "app=x")->empty());
  CHECK(store.size() == 2);
}

TEST_CASE("Store: a compact payload is indexed through a typed index function", "[store]") {
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"ns",
    "resourceVersion":"5","uid":"u1"},"spec":{"nodeName":"n1","schedulerName":"volcano",
    "containers":[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]},
    "status":{"phase":"Running"}})";
  Object obj = *CompactPodTransform().Apply(*json::Parse(pod));
  REQUIRE(obj.Is<api::CompactPod>());
  const api::CompactPod& p = obj.As<api::CompactPod>();
  CHECK(p.node_name == "n1");
  CHECK(p.phase == api::PodPhase::kRunning);
  CHECK(obj.resource_version() == "5");

  Store store({{"node", IndexBy<api::CompactPod>([](const api::CompactPod& p) {
                  return std::vector<std::string>{p.node_name};
                })}});
  store.Upsert(obj);
  CHECK(*store.IndexKeys("node", "n1") == std::vector<std::string>{"ns/p1"});
  CHECK(*store.IndexKeys(kNamespaceIndex, "ns") == std::vector<std::string>{"ns/p1"});
}

}  // namespace
}  // namespace basalt::informer
