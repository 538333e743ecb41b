#pragma once
// Ready-made Transforms that keep compact structs instead of whole documents, for caches that
// must stay small (the scheduler's pods and nodes). Each document is decoded through the
// typed views of common/api and dropped.
//
//   InformerOptions o{.source = {.resource = client::Pods()}, .transform = CompactPodTransform()};
//   const api::CompactPod& pod = informer.store().Get("ns/p1").As<api::CompactPod>();

#include "common/api/compact.h"
#include "common/informer/object.h"

namespace basalt::informer {

// Payload api::CompactPod; name "compact-pod".
Transform CompactPodTransform();
// Payload api::CompactNode; name "compact-node".
Transform CompactNodeTransform();

}  // namespace basalt::informer
