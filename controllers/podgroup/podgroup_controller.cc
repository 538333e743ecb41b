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

// No controller owner and no gang declared: the scheduler places it through a shadow job.
bool IsBarePod(const json::Value& pod) {
  return !HasControllerOwner(pod) &&
         json::FindPath(pod, {"metadata", "annotations", api::kGroupMinMemberAnnotation}) ==
             nullptr;
}

std::string BarePodGroupName(const json::Value& pod) {
  return fmt::format("podgroup-{}", StringAt(pod, {"metadata", "uid"}));
}

bool NeedsPodGroup(const json::Value& pod, const std::vector<std::string>& scheduler_names,
                   bool bare_pod_podgroups) {
  const std::string_view scheduler = StringAt(pod, {"spec", "schedulerName"});
  if (std::find(scheduler_names.begin(), scheduler_names.end(), scheduler) ==
      scheduler_names.end()) {
    return false;
  }
  const bool bare = IsBarePod(pod);
  if (!bare_pod_podgroups && bare) return false;  // the scheduler's shadow job places it
  if (!StringAt(pod, {"metadata", "annotations", api::kVolcanoGroupNameAnnotation}).empty())
    return false;
  // The scheduler's binding names a bare pod's PodGroup-to-be (vc-scheduler
  // --bare-pod-podgroups): that annotation still asks for the PodGroup.
  if (const std::string_view group =
          StringAt(pod, {"metadata", "annotations", api::kGroupNameAnnotation});
      !group.empty() && !(bare && group == BarePodGroupName(pod))) {
    return false;
  }
  if (json::FindPath(pod, {"metadata", "deletionTimestamp"}) != nullptr) return false;
  const std::string_view phase = StringAt(pod, {"status", "phase"});
  return phase != "Succeeded" && phase != "Failed";
}

// The scheduler has decided about the pod: bound, or reported unschedulable.
bool PlacementDecided(const json::Value& pod) {
  if (!StringAt(pod, {"spec", "nodeName"}).empty()) return true;
  const json::Value* conditions = json::FindPath(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (auto it = conditions->Begin(); it != conditions->End(); ++it) {
    if (json::GetString(*it, "type") == "PodScheduled" && json::GetString(*it, "status") == "False")
      return true;
  }
  return false;
}

bool Known(const BarePodWait& wait, const std::string& pg_key) {
  return (wait.pod_groups != nullptr && wait.pod_groups->Get(pg_key)) ||
         (wait.created != nullptr && wait.created->Contains(pg_key));
}

}  // namespace

void CreatedPodGroups::Add(const std::string& key) {
  absl::MutexLock l(&mu_);
  keys_.insert(key);
}

void CreatedPodGroups::Erase(const std::string& key) {
  absl::MutexLock l(&mu_);
  keys_.erase(key);
}

bool CreatedPodGroups::Contains(const std::string& key) const {
  absl::MutexLock l(&mu_);
  return keys_.count(key) != 0;
}

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

absl::StatusOr<std::optional<Clock::Duration>> ReconcileBarePod(
    client::Client& client, const informer::Store& pods,
    const std::vector<std::string>& scheduler_names, const std::string& key,
    bool bare_pod_podgroups, const BarePodWait& wait) {
  const std::optional<Clock::Duration> done;
  informer::Object cached = pods.Get(key);
  if (!cached || !NeedsPodGroup(cached.doc(), scheduler_names, bare_pod_podgroups)) {
    return done;
  }
  std::map<std::string, std::string> owner_annotations;
  BASALT_ASSIGN_OR_RETURN(api::Object pod, api::Object::CopyOf(cached.doc()));
  if (IsBarePod(cached.doc()) && !PlacementDecided(cached.doc())) {
    if (std::optional<api::Time> created = pod.creation_timestamp()) {
      Clock* clock = wait.clock != nullptr ? wait.clock : Clock::Real();
      const auto age = clock->WallNow() - *created;
      if (age < wait.unbound_wait) {
        return std::optional<Clock::Duration>(
            std::chrono::duration_cast<Clock::Duration>(wait.unbound_wait - age));
      }
    }
  }
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
  if (!plan) return done;
  const std::string pg_key = fmt::format("{}/{}", pod.namespace_name(), plan->name);
  if (!Known(wait, pg_key)) {
    absl::StatusOr<json::Document> created =
        client.Create(client::PodGroups(), pod.namespace_name(), plan->pod_group_json);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
    if (created.ok()) {
      if (wait.created != nullptr) wait.created->Add(pg_key);
      BASALT_LOG_INFO("Created PodGroup for pod", "pod", key, "podgroup", plan->name);
    }
  }
  if (pod.annotation(api::kGroupNameAnnotation).value_or("") == plan->name) return done;
  absl::StatusOr<json::Document> patched =
      client.Patch(client::Pods(), pod.namespace_name(), pod.name(), client::PatchType::kMerge,
                   plan->pod_patch_json);
  if (!patched.ok() && !absl::IsNotFound(patched.status())) return patched.status();
  return done;
}

namespace {

class PodGroupController final : public Controller {
 public:
  explicit PodGroupController(const ControllerContext& ctx) : ctx_(ctx) {
    pods_ = SharedPodInformer(*ctx.informers, {{kPodsByJobIndex, PodsByJobIndexFunc()}});
    pod_groups_ = ctx.informers->InformerFor(client::PodGroups());
    pod_groups_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { created_.Erase(o.key()); },
        .on_update = nullptr,
        .on_delete = [this](const informer::Object& o, bool) { created_.Erase(o.key()); }});
    wait_ =
        BarePodWait{.pod_groups = &pod_groups_->store(), .created = &created_, .clock = ctx.clock};
    loop_ = std::make_unique<ReconcileLoop>(
        ReconcileLoopOptions{.name = "podgroup",
                             .clock = ctx.clock,
                             .metrics = ctx.metrics,
                             .queue_metrics = ctx.queue_metrics},
        [this](const std::string& key) -> ReconcileResult {
          return ReconcileBarePod(*ctx_.client, pods_->store(), ctx_.scheduler_names, key,
                                  ctx_.bare_pod_podgroups, wait_);
        });
    auto consider = [this](const informer::Object& o) {
      if (!NeedsPodGroup(o.doc(), ctx_.scheduler_names, ctx_.bare_pod_podgroups)) return;
      // A bare pod the scheduler annotated whose PodGroup is made: nothing to do (each of its
      // status changes comes here).
      if (IsBarePod(o.doc()) &&
          StringAt(o.doc(), {"metadata", "annotations", api::kGroupNameAnnotation}) ==
              BarePodGroupName(o.doc()) &&
          Known(wait_, fmt::format("{}/{}", StringAt(o.doc(), {"metadata", "namespace"}),
                                   BarePodGroupName(o.doc())))) {
        return;
      }
      loop_->Add(o.key());
    };
    pods_->AddEventHandler(
        informer::EventHandler{.on_add = consider,
                               .on_update = [consider](const informer::Object&,
                                                       const informer::Object& o) { consider(o); },
                               .on_delete = nullptr});
  }

  std::string_view Name() const override { return "podgroup"; }
  // Twice the job controller's workers: each reconcile is one or two API round trips (create
  // the PodGroup, annotate the pod if the binding did not) and nothing else; the PodGroups of a
  // burst of bare pods should not lag far behind their binds.
  void Run(std::stop_token stop) override { loop_->Run(stop, std::max(1, ctx_.workers * 2)); }
  bool HasSynced() const override { return pods_->HasSynced() && pod_groups_->HasSynced(); }

 private:
  const ControllerContext ctx_;
  informer::SharedInformer* pods_;
  informer::SharedInformer* pod_groups_;
  CreatedPodGroups created_;
  BarePodWait wait_;
  std::unique_ptr<ReconcileLoop> loop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewPodGroupController(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new PodGroupController(ctx));
}

}  // namespace basalt::controllers
