#include "controllers/app/controller.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace basalt::controllers {

absl::StatusOr<std::vector<std::string>> ResolveControllers(
    const std::vector<std::string>& requested, const std::vector<std::string>& known) {
  std::set<std::string> out;
  for (const std::string& raw : requested) {
    if (raw.empty()) continue;
    if (raw == "*") {
      out.insert(known.begin(), known.end());
      continue;
    }
    if (std::find(known.begin(), known.end(), raw) == known.end()) {
      return absl::InvalidArgumentError(
          fmt::format("unknown controller \"{}\" (known: {})", raw, fmt::join(known, ",")));
    }
    out.insert(raw);
  }
  if (out.empty()) out.insert(known.begin(), known.end());
  return std::vector<std::string>(out.begin(), out.end());
}

std::string LeaseNameFor(const std::vector<std::string>& controllers) {
  // "jobflow" came after the Lease name was fixed; leaving it out keeps the default Lease
  // (vc-controller-manager-cronjob-gc-job-podgroup-queue) that deployments and tests know.
  std::vector<std::string> sorted;
  for (const std::string& c : controllers) {
    if (c != "jobflow") sorted.push_back(c);
  }
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("vc-controller-manager-{}", fmt::join(sorted, "-"));
}

namespace {

// Copies obj[key] into out[key] when present.
void CopyMember(const json::Value& obj, std::string_view key, json::Value& out,
                json::Allocator& a) {
  if (const json::Value* v = json::Find(obj, key)) json::Set(out, key, json::Value(*v, a), a);
}

json::Value TrimContainers(const json::Value* list, bool statuses, json::Allocator& a) {
  json::Value out(rapidjson::kArrayType);
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& c : list->GetArray()) {
    json::Value t(rapidjson::kObjectType);
    CopyMember(c, "name", t, a);
    if (statuses) {
      CopyMember(c, "ready", t, a);
      CopyMember(c, "restartCount", t, a);
      if (const json::Value* term = json::FindPath(c, {"state", "terminated"})) {
        json::Value state(rapidjson::kObjectType);
        json::Value terminated(rapidjson::kObjectType);
        CopyMember(*term, "exitCode", terminated, a);
        json::Set(state, "terminated", std::move(terminated), a);
        json::Set(t, "state", std::move(state), a);
      }
    } else {
      CopyMember(c, "resources", t, a);
      CopyMember(c, "restartPolicy", t, a);
    }
    out.PushBack(std::move(t), a);
  }
  return out;
}

}  // namespace

json::Document TrimPodForControllers(const json::Value& pod) {
  json::Document out(rapidjson::kObjectType);
  json::Allocator& a = out.GetAllocator();
  CopyMember(pod, "apiVersion", out, a);
  CopyMember(pod, "kind", out, a);
  if (const json::Value* meta = json::Find(pod, "metadata"); meta != nullptr && meta->IsObject()) {
    json::Value m(rapidjson::kObjectType);
    for (auto it = meta->MemberBegin(); it != meta->MemberEnd(); ++it) {
      if (json::AsView(it->name) == "managedFields") continue;
      m.AddMember(json::Value(it->name, a), json::Value(it->value, a), a);
    }
    json::Set(out, "metadata", std::move(m), a);
  }
  if (const json::Value* spec = json::Find(pod, "spec")) {
    json::Value s(rapidjson::kObjectType);
    for (std::string_view k : {"schedulerName", "priorityClassName", "nodeName", "overhead"}) {
      CopyMember(*spec, k, s, a);
    }
    json::Set(s, "containers", TrimContainers(json::Find(*spec, "containers"), false, a), a);
    if (json::Find(*spec, "initContainers") != nullptr) {
      json::Set(s, "initContainers", TrimContainers(json::Find(*spec, "initContainers"), false, a),
                a);
    }
    json::Set(out, "spec", std::move(s), a);
  }
  if (const json::Value* status = json::Find(pod, "status")) {
    json::Value s(rapidjson::kObjectType);
    CopyMember(*status, "phase", s, a);
    // PodScheduled alone (type and status): the podgroup controller waits for it.
    if (const json::Value* conds = json::Find(*status, "conditions");
        conds != nullptr && conds->IsArray()) {
      json::Value kept(rapidjson::kArrayType);
      for (auto it = conds->Begin(); it != conds->End(); ++it) {
        if (!it->IsObject() || json::GetString(*it, "type") != "PodScheduled") continue;
        json::Value c(rapidjson::kObjectType);
        CopyMember(*it, "type", c, a);
        CopyMember(*it, "status", c, a);
        kept.PushBack(std::move(c), a);
      }
      if (!kept.Empty()) json::Set(s, "conditions", std::move(kept), a);
    }
    for (std::string_view k : {"containerStatuses", "initContainerStatuses"}) {
      if (json::Find(*status, k) != nullptr) {
        json::Set(s, k, TrimContainers(json::Find(*status, k), true, a), a);
      }
    }
    json::Set(out, "status", std::move(s), a);
  }
  return out;
}

informer::Transform ControllerPodTransform() {
  return informer::Transform::To<json::Document>(
      "controller-pod",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const json::Document>> {
        return informer::ShareDocument(TrimPodForControllers(doc));
      });
}

informer::SharedInformer* SharedPodInformer(informer::SharedInformerFactory& factory,
                                            informer::Indexers job_index) {
  informer::InformerOptions options;
  options.source.resource = client::Pods();
  options.transform = ControllerPodTransform();
  options.indexers = std::move(job_index);
  return factory.InformerFor(std::move(options));
}

void ParallelFor(size_t n, size_t concurrency, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  concurrency = std::max<size_t>(1, std::min(concurrency, n));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::jthread> threads;
  threads.reserve(concurrency - 1);
  for (size_t t = 1; t < concurrency; ++t) threads.emplace_back(work);
  work();
}

}  // namespace basalt::controllers
