#include "common/informer/transforms.h"

#include <memory>

#include "common/api/core.h"
#include "common/util/status.h"

namespace basalt::informer {

Transform CompactPodTransform() {
  return Transform::To<api::CompactPod>(
      "compact-pod",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const api::CompactPod>> {
        BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::FromDocument(std::move(doc)));
        BASALT_ASSIGN_OR_RETURN(api::Pod pod, api::Pod::FromObject(std::move(obj)));
        return std::make_shared<const api::CompactPod>(api::ToCompactPod(pod));
      });
}

Transform CompactNodeTransform() {
  return Transform::To<api::CompactNode>(
      "compact-node",
      [](json::Document&& doc) -> absl::StatusOr<std::shared_ptr<const api::CompactNode>> {
        BASALT_ASSIGN_OR_RETURN(api::Object obj, api::Object::FromDocument(std::move(doc)));
        BASALT_ASSIGN_OR_RETURN(api::Node node, api::Node::FromObject(std::move(obj)));
        return std::make_shared<const api::CompactNode>(api::ToCompactNode(node));
      });
}

}  // namespace basalt::informer
