#include "controllers/job/controller/volume_control.h"

#include "common/client/resource.h"
#include "common/util/status.h"
#include "controllers/job/pods/pods.h"
#include "fmt/format.h"

namespace basalt::controllers {

absl::StatusOr<std::optional<json::Document>> VolumeControl::NameClaims(const api::Job& job,
                                                                        std::string* problem) {
  std::string patch;
  const std::vector<api::JobVolume>& volumes = job.spec().volumes;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const api::JobVolume& v = volumes[i];
    if (!v.volume_claim_name.empty() || !v.volume_claim) continue;
    patch +=
        fmt::format(R"(,{{"op":"add","path":"/spec/volumes/{}/volumeClaimName","value":"{}"}})", i,
                    GeneratedPvcName(job.name(), job.uid(), i));
  }
  if (patch.empty()) return std::optional<json::Document>();
  patch =
      fmt::format(R"([{{"op":"test","path":"/metadata/uid","value":"{}"}}{}])", job.uid(), patch);
  absl::StatusOr<json::Document> patched =
      client_->Patch(client::VolcanoJobs(), job.namespace_name(), job.name(),
                     client::PatchType::kJsonPatch, patch);
  if (!patched.ok()) {
    *problem = fmt::format("Cannot record the generated PVC names in the job: {}",
                           MessageOf(patched.status()));
    return patched.status();
  }
  // The patched Job names its claims; set here too, so the Job read back always does.
  json::Value* spec_value = json::FindMutable(*patched, "spec");
  if (json::Value* vols =
          spec_value != nullptr ? json::FindMutable(*spec_value, "volumes") : nullptr;
      vols != nullptr && vols->IsArray()) {
    for (size_t i = 0; i < volumes.size() && i < vols->Size(); ++i) {
      const api::JobVolume& v = volumes[i];
      json::Value& out = (*vols)[static_cast<rapidjson::SizeType>(i)];
      if (!v.volume_claim_name.empty() || !v.volume_claim || !out.IsObject()) continue;
      json::Set(
          out, "volumeClaimName",
          json::MakeString(GeneratedPvcName(job.name(), job.uid(), i), patched->GetAllocator()),
          patched->GetAllocator());
    }
  }
  return std::optional<json::Document>(std::move(*patched));
}

absl::Status VolumeControl::EnsureClaims(const api::Job& job,
                                         std::map<std::string, std::string>& controlled,
                                         std::string* problem) {
  for (const api::JobVolume& v : job.spec().volumes) {
    const std::string& name = v.volume_claim_name;
    if (name.empty()) continue;
    const std::string key = fmt::format("volume-pvc-{}", name);
    if (controlled.count(key) > 0) continue;
    absl::StatusOr<json::Document> existing =
        client_->Get(client::PersistentVolumeClaims(), job.namespace_name(), name);
    if (absl::IsNotFound(existing.status())) {
      if (!v.volume_claim) {
        *problem = fmt::format(
            "pvc {} is not found, the job will be in the Pending state until the PVC is created",
            name);
        return absl::FailedPreconditionError(*problem);
      }
      absl::StatusOr<json::Document> created =
          client_->Create(client::PersistentVolumeClaims(), job.namespace_name(),
                          json::Serialize(BuildPvc(job, v, name)));
      if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
        *problem = fmt::format("Error creating PersistentVolumeClaim {}: {}", name,
                               MessageOf(created.status()));
        return created.status();
      }
    } else if (!existing.ok()) {
      *problem = fmt::format("Cannot read PersistentVolumeClaim {}: {}", name,
                             MessageOf(existing.status()));
      return existing.status();
    }
    controlled[key] = name;
  }
  return absl::OkStatus();
}

}  // namespace basalt::controllers
