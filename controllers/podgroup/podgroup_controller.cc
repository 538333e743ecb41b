#include "controllers/podgroup/podgroup_controller.h"

#include <algorithm>
#include <charconv>

#include "common/api/core.h"
#include "common/api/object.h"
#include "common/api/scheduling.h"
#include "common/api/vocabulary.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "controllers/job/controller/job_index.h"
#include "controllers/job/pods/pod_group.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

std::string_view StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* p = json::FindPath(v, path);
  return p != nullptr ? json::AsView(*p) : std::string_view();
}

// The REST resource of a pod's controller owner, for the kinds that own pods.
std::optional<client::ResourceRef> OwnerResource(std::string_view api_version,
                                                 std::string_view kind) {
  if (api_version == "apps/v1") {
    if (kind == "ReplicaSet")
      return client::ResourceRef{"apps", "v1", "replicasets", true, std::string(kind)};
    if (kind == "StatefulSet")
      return client::ResourceRef{"apps", "v1", "statefulsets", true, std::string(kind)};
    if (kind == "DaemonSet")
      return client::ResourceRef{"apps", "v1", "daemonsets", true, std::string(kind)};
  }
  if (api_version == "batch/v1" && kind == "Job") {
    return client::ResourceRef{"batch", "v1", "jobs", true, "Job"};
  }
  return std::nullopt;
}

bool HasControllerOwner(const json::Value& pod) {
  const json::Value* owners = json::FindPath(pod, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->IsArray()) return false;
  for (auto it = owners->Begin(); it != owners->End(); ++it) {
    if (json::GetBool(*it, "controller")) return true;
  }
  return false;
}

bool NeedsPodGroup(const json::Value& pod, const std::vector<std::string>& scheduler_names,
                   bool bare_pod_podgroups) {
  const std::string_view scheduler = StringAt(pod, {"spec", "schedulerName"});
  if (std::find(scheduler_names.begin(), scheduler_names.end(), scheduler) ==
      scheduler_names.end()) {
    return false;
  }
  if (!StringAt(pod, {"metadata", "annotations", api::kGroupNameAnnotation}).empty()) return false;
  if (!StringAt(pod, {"metadata", "annotations", api::kVolcanoGroupNameAnnotation}).empty())
    return false;
  if (json::FindPath(pod, {"metadata", "deletionTimestamp"}) != nullptr) return false;
  if (!bare_pod_podgroups && !HasControllerOwner(pod) &&
      json::FindPath(pod, {"metadata", "annotations", api::kGroupMinMemberAnnotation}) == nullptr) {
    return false;  // the scheduler's shadow job places it
  }
  const std::string_view phase = StringAt(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed";
}

}  // namespace

std::optional<BarePodGroupPlan> PlanBarePodGroup(
    const json::Value& pod, const std::vector<std::string>& scheduler_names,
    const std::map<std::string, std::string>& owner_annotations, bool bare_pod_podgroups) {
  if (!NeedsPodGroup(pod, scheduler_names, bare_pod_podgroups)) return std::nullopt;
  absl::StatusOr<api::Object> obj = api::Object::CopyOf(pod);
  if (!obj.ok()) return std::nullopt;
  std::optional<api::OwnerReference> owner = obj->controller_ref();
  BarePodGroupPlan plan;
  plan.name = fmt::format("podgroup-{}", owner ? owner->uid : std::string(obj->uid()));

  int64_t min_member = 1;
  if (auto it = owner_annotations.find(std::string(api::kGroupMinMemberAnnotation));
      it != owner_annotations.end()) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec == std::errc() && p == it->second.data() + it->second.size() && v >= 0) min_member = v;
  }

  api::PodGroup pg = api::PodGroup::Make(obj->namespace_name(), plan.name);
  if (owner) {
    pg.SetOwnerReferences(obj->owner_references());
  } else {
    pg.SetOwnerReferences({api::OwnerReference{"v1", "Pod", std::string(obj->name()),
                                               std::string(obj->uid()), true, false}});
  }
  for (const auto& [k, v] : owner_annotations) {
    if (k.rfind(api::kVolcanoKeyPrefix, 0) == 0) pg.SetAnnotation(k, v);
  }
  for (std::string_view k : {api::kPreemptableKey, api::kCooldownTimeKey, api::kRevocableZoneKey,
                             api::kJdbMinAvailableKey, api::kJdbMaxUnavailableKey}) {
    if (auto v = obj->annotation(k)) pg.SetAnnotation(k, *v);
  }
  api::PodGroupSpec spec;
  spec.min_member = static_cast<int32_t>(min_member);
  spec.queue =
      std::string(obj->annotation(api::kPodGroupQueueAnnotation).value_or(api::kDefaultQueue));
  spec.priority_class_name = std::string(StringAt(pod, {"spec", "priorityClassName"}));
  if (const json::Value* pod_spec = json::Find(pod, "spec")) {
    absl::StatusOr<resource::ResourceList> usage = PodQuotaUsage(*pod_spec);
    if (usage.ok()) spec.min_resources = usage->MulInt(min_member);
  }
  pg.SetSpec(spec);
  json::Value& status = pg.EnsurePath({"status"});
  json::Set(status, "phase", json::MakeString("Pending", pg.allocator()), pg.allocator());
  plan.pod_group_json = pg.ToJson();
  plan.pod_patch_json = fmt::format(R"({{"metadata":{{"annotations":{{"{}":"{}"}}}}}})",
                                    api::kGroupNameAnnotation, plan.name);
  return plan;
}

absl::Status ReconcileBarePod(client::Client& client, const informer::Store& pods,
                              const std::vector<std::string>& scheduler_names,
                              const std::string& key, bool bare_pod_podgroups) {
  informer::Object cached = pods.Get(key);
  if (!cached || !NeedsPodGroup(cached.doc(), scheduler_names, bare_pod_podgroups)) {
    return absl::OkStatus();
  }
  std::map<std::string, std::string> owner_annotations;
  BASALT_ASSIGN_OR_RETURN(api::Object pod, api::Object::CopyOf(cached.doc()));
  if (std::optional<api::OwnerReference> owner = pod.controller_ref()) {
    if (auto ref = OwnerResource(owner->api_version, owner->kind)) {
      absl::StatusOr<json::Document> got = client.Get(*ref, pod.namespace_name(), owner->name);
      if (got.ok()) {
        if (const json::Value* ann = json::FindPath(*got, {"metadata", "annotations"});
            ann != nullptr && ann->IsObject()) {
          for (auto it = ann->MemberBegin(); it != ann->MemberEnd(); ++it) {
            owner_annotations[std::string(json::AsView(it->name))] =
                std::string(json::AsView(it->value));
          }
        }
      } else if (!absl::IsNotFound(got.status())) {
        return got.status();
      }
    }
  }
  std::optional<BarePodGroupPlan> plan =
      PlanBarePodGroup(cached.doc(), scheduler_names, owner_annotations, bare_pod_podgroups);
  if (!plan) return absl::OkStatus();
  absl::StatusOr<json::Document> created =
      client.Create(client::PodGroups(), pod.namespace_name(), plan->pod_group_json);
  if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  if (created.ok()) {
    BASALT_LOG_INFO("Created PodGroup for pod", "pod", key, "podgroup", plan->name);
  }
  absl::StatusOr<json::Document> patched =
      client.Patch(client::Pods(), pod.namespace_name(), pod.name(), client::PatchType::kMerge,
                   plan->pod_patch_json);
  if (!patched.ok() && !absl::IsNotFound(patched.status())) return patched.status();
  return absl::OkStatus();
}

namespace {

class PodGroupController final : public Controller {
 public:
  explicit PodGroupController(const ControllerContext& ctx) : ctx_(ctx) {
    pods_ = SharedPodInformer(*ctx.informers, {{kPodsByJobIndex, PodsByJobIndexFunc()}});
    loop_ = std::make_unique<ReconcileLoop>(
        ReconcileLoopOptions{.name = "podgroup",
                             .clock = ctx.clock,
                             .metrics = ctx.metrics,
                             .queue_metrics = ctx.queue_metrics},
        [this](const std::string& key) -> ReconcileResult {
          BASALT_RETURN_IF_ERROR(ReconcileBarePod(
              *ctx_.client, pods_->store(), ctx_.scheduler_names, key, ctx_.bare_pod_podgroups));
          return std::optional<Clock::Duration>();
        });
    auto consider = [this](const informer::Object& o) {
      if (NeedsPodGroup(o.doc(), ctx_.scheduler_names, ctx_.bare_pod_podgroups)) {
        loop_->Add(o.key());
      }
    };
    pods_->AddEventHandler(
        informer::EventHandler{.on_add = consider,
                               .on_update = [consider](const informer::Object&,
                                                       const informer::Object& o) { consider(o); },
                               .on_delete = nullptr});
  }

  std::string_view Name() const override { return "podgroup"; }
  // Twice the job controller's workers: each reconcile is two API round trips (create the
  // PodGroup, annotate the pod) and nothing else, and a burst of bare pods waits here before
  // the scheduler can see any of them (with 4 workers, ~19 pods/s at ~100 ms per request).
  void Run(std::stop_token stop) override { loop_->Run(stop, std::max(1, ctx_.workers * 2)); }
  bool HasSynced() const override { return pods_->HasSynced(); }

 private:
  const ControllerContext ctx_;
  informer::SharedInformer* pods_;
  std::unique_ptr<ReconcileLoop> loop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewPodGroupController(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new PodGroupController(ctx));
}

}  // namespace basalt::controllers
