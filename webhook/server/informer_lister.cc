#include "webhook/server/informer_lister.h"

#include <algorithm>
#include <memory>

#include "common/api/vocabulary.h"
#include "common/client/resource.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace lister_internal {

// Volcano's namespace annotation naming the queue PodGroups of the namespace go to.

namespace {

// A ResourceList as name -> quantity text; entries that are neither strings nor numbers are
// skipped (admission of the queue itself reports them).
void ReadQuantities(const json::Value* list, std::map<std::string, std::string>& out) {
  if (list == nullptr || !list->IsObject()) return;
  for (auto it = list->MemberBegin(); it != list->MemberEnd(); ++it) {
    std::string value;
    if (it->value.IsString()) {
      value = std::string(json::AsView(it->value));
    } else if (it->value.IsNumber()) {
      value = json::Serialize(it->value);
    } else {
      continue;
    }
    out[std::string(json::AsView(it->name))] = std::move(value);
  }
}

}  // namespace

absl::StatusOr<QueueInfo> QueueInfoFromDocument(const json::Document& doc) {
  QueueInfo info;
  const json::Value* metadata = json::Find(doc, "metadata");
  if (metadata == nullptr) return absl::InvalidArgumentError("queue without metadata");
  info.name = std::string(json::GetString(*metadata, "name"));
  if (const json::Value* status = json::Find(doc, "status")) {
    info.state = std::string(json::GetString(*status, "state"));
  }
  if (const json::Value* spec = json::Find(doc, "spec")) {
    info.parent = std::string(json::GetString(*spec, "parent"));
    ReadQuantities(json::Find(*spec, "capability"), info.capability);
    ReadQuantities(json::Find(*spec, "deserved"), info.deserved);
    ReadQuantities(json::FindPath(*spec, {"guarantee", "resource"}), info.guarantee);
  }
  return info;
}

informer::Transform QueueInfoTransform() {
  return informer::Transform::To<QueueInfo>(
      "webhook-queue-info",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const QueueInfo>> {
        BASALT_ASSIGN_OR_RETURN(QueueInfo info, QueueInfoFromDocument(doc));
        return std::make_shared<const QueueInfo>(std::move(info));
      });
}

informer::Transform SpecQueueTransform() {
  return informer::Transform::To<QueueRef>(
      "webhook-spec-queue",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const QueueRef>> {
        const json::Value* spec = json::Find(doc, "spec");
        return std::make_shared<const QueueRef>(
            QueueRef{spec != nullptr ? std::string(json::GetString(*spec, "queue")) : ""});
      });
}

informer::Transform NamespaceQueueTransform() {
  return informer::Transform::To<QueueRef>(
      "webhook-namespace-queue",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const QueueRef>> {
        const json::Value* annotations = json::FindPath(doc, {"metadata", "annotations"});
        return std::make_shared<const QueueRef>(
            QueueRef{annotations != nullptr
                         ? std::string(json::GetString(*annotations, api::kPodGroupQueueAnnotation))
                         : ""});
      });
}

informer::Transform PresenceTransform() {
  return informer::Transform::To<Presence>(
      "webhook-presence", [](json::Document&&) -> absl::StatusOr<std::shared_ptr<const Presence>> {
        static const auto kPresence = std::make_shared<const Presence>();
        return kPresence;
      });
}

informer::IndexFunc ParentIndexFunc() {
  return informer::IndexBy<QueueInfo>([](const QueueInfo& q) -> std::vector<std::string> {
    if (q.parent.empty()) return {};
    return {q.parent};
  });
}

informer::IndexFunc SpecQueueIndexFunc() {
  return informer::IndexBy<QueueRef>([](const QueueRef& r) -> std::vector<std::string> {
    // Volcano defaults an empty spec.queue to `default` (the Job mutator does it at
    // admission; PodGroups created without one are scheduled in `default`).
    return {r.queue.empty() ? std::string("default") : r.queue};
  });
}

}  // namespace lister_internal

namespace li = lister_internal;

namespace {
informer::InformerOptions Options(client::ResourceRef resource, informer::Transform transform,
                                  informer::Indexers indexers = {}) {
  informer::InformerOptions options;
  options.source.resource = std::move(resource);
  options.transform = std::move(transform);
  options.indexers = std::move(indexers);
  return options;
}
}  // namespace

InformerLister::InformerLister(informer::SharedInformerFactory* factory, client::Client* live)
    : live_(live) {
  queues_ = factory->InformerFor(Options(client::Queues(), li::QueueInfoTransform(),
                                         {{li::kParentIndex, li::ParentIndexFunc()}}));
  podgroups_ = factory->InformerFor(Options(client::PodGroups(), li::SpecQueueTransform(),
                                            {{li::kQueueIndex, li::SpecQueueIndexFunc()}}));
  jobs_ = factory->InformerFor(Options(client::VolcanoJobs(), li::SpecQueueTransform(),
                                       {{li::kQueueIndex, li::SpecQueueIndexFunc()}}));
  priority_classes_ =
      factory->InformerFor(Options(client::PriorityClasses(), li::PresenceTransform()));
  namespaces_ = factory->InformerFor(Options(client::Namespaces(), li::NamespaceQueueTransform()));
}

bool InformerLister::HasSynced() const { return Unsynced().empty(); }

std::vector<std::string> InformerLister::Unsynced() const {
  std::vector<std::string> out;
  const std::pair<const char*, informer::SharedInformer*> all[] = {
      {"queues", queues_},
      {"podgroups", podgroups_},
      {"jobs", jobs_},
      {"priorityclasses", priority_classes_},
      {"namespaces", namespaces_}};
  for (const auto& [name, informer] : all) {
    if (!informer->HasSynced()) out.emplace_back(name);
  }
  return out;
}

absl::StatusOr<QueueInfo> InformerLister::GetQueue(std::string_view name) const {
  if (informer::Object obj = queues_->store().Get(name)) return obj.As<QueueInfo>();
  if (live_ != nullptr) {
    absl::StatusOr<json::Document> doc = live_->Get(client::Queues(), "", name);
    if (doc.ok()) return li::QueueInfoFromDocument(*doc);
    if (!absl::IsNotFound(doc.status())) return doc.status();
  }
  return absl::NotFoundError(fmt::format("queues.scheduling.volcano.sh \"{}\" not found", name));
}

std::vector<std::string> InformerLister::ChildQueues(std::string_view name) const {
  auto keys = queues_->store().IndexKeys(li::kParentIndex, name);
  return keys.ok() ? *std::move(keys) : std::vector<std::string>();
}

int InformerLister::CountPodGroupsInQueue(std::string_view queue) const {
  auto keys = podgroups_->store().IndexKeys(li::kQueueIndex, queue);
  return keys.ok() ? static_cast<int>(keys->size()) : 0;
}

int InformerLister::CountJobsInQueue(std::string_view queue) const {
  auto keys = jobs_->store().IndexKeys(li::kQueueIndex, queue);
  return keys.ok() ? static_cast<int>(keys->size()) : 0;
}

bool InformerLister::PriorityClassExists(std::string_view name) const {
  if (priority_classes_->store().Get(name)) return true;
  // A failed read (not a NotFound) answers as the cache did: the class is not known.
  return live_ != nullptr && live_->Get(client::PriorityClasses(), "", name).ok();
}

std::string InformerLister::NamespaceDefaultQueue(std::string_view ns) const {
  informer::Object obj = namespaces_->store().Get(ns);
  return obj ? obj.As<li::QueueRef>().queue : std::string();
}

}  // namespace basalt::webhook::server
