#include "scheduler/cache/informers.h"

#include <string>

#include "common/api/core.h"
#include "common/api/scheduling.h"
#include "common/api/topology.h"
#include "common/client/resource.h"
#include "common/informer/transforms.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {

std::vector<const informer::SharedInformer*> RegisterInformers(
    informer::SharedInformerFactory* factory, ClusterState* state, InformerSet set) {
  using informer::Object;
  std::vector<const informer::SharedInformer*> out;

  // Every pod: bound pods of any scheduler are node usage (decision 5). The API server cannot
  // select "ours or bound" in one field selector, so the state filters.
  informer::SharedInformer* pods = factory->InformerFor(
      {.source = {.resource = client::Pods()}, .transform = CachedPodTransform()});
  pods->AddEventHandler({
      .on_add = [state](const Object& o) { state->UpsertPod(o.Share<CachedPod>()); },
      .on_update = [state](const Object&,
                           const Object& o) { state->UpsertPod(o.Share<CachedPod>()); },
      .on_delete = [state](const Object& o, bool) { state->DeletePod(o.As<CachedPod>().pod); },
  });
  out.push_back(pods);

  informer::SharedInformer* nodes = factory->InformerFor(
      {.source = {.resource = client::Nodes()}, .transform = informer::CompactNodeTransform()});
  nodes->AddEventHandler({
      .on_add = [state](const Object& o) { state->UpsertNode(o.Share<api::CompactNode>()); },
      .on_update = [state](const Object&,
                           const Object& o) { state->UpsertNode(o.Share<api::CompactNode>()); },
      .on_delete = [state](const Object& o, bool) { state->DeleteNode(std::string(o.name())); },
  });
  out.push_back(nodes);

  informer::SharedInformer* pgs = factory->InformerFor(
      {.source = {.resource = client::PodGroups()}, .transform = PodGroupTransform()});
  pgs->AddEventHandler({
      .on_add = [state](const Object& o) { state->UpsertPodGroup(o.Share<CachedPodGroup>()); },
      .on_update = [state](const Object&,
                           const Object& o) { state->UpsertPodGroup(o.Share<CachedPodGroup>()); },
      .on_delete =
          [state](const Object& o, bool) {
            state->DeletePodGroup(std::string(o.namespace_name()), std::string(o.name()));
          },
  });
  out.push_back(pgs);

  informer::SharedInformer* queues = factory->InformerFor(
      {.source = {.resource = client::Queues()}, .transform = QueueTransform()});
  queues->AddEventHandler({
      .on_add = [state](const Object& o) { state->UpsertQueue(o.As<api::Queue>()); },
      .on_update = [state](const Object&,
                           const Object& o) { state->UpsertQueue(o.As<api::Queue>()); },
      .on_delete = [state](const Object& o, bool) { state->DeleteQueue(std::string(o.name())); },
  });
  out.push_back(queues);

  informer::SharedInformer* pcs = factory->InformerFor(
      {.source = {.resource = client::PriorityClasses()}, .transform = PriorityClassTransform()});
  auto upsert_pc = [state](const Object& o) {
    const auto& pc = o.As<api::PriorityClass>();
    state->UpsertPriorityClass(std::string(o.name()), pc.value(), pc.global_default());
  };
  pcs->AddEventHandler({
      .on_add = upsert_pc,
      .on_update = [upsert_pc](const Object&, const Object& o) { upsert_pc(o); },
      .on_delete = [state](const Object& o,
                           bool) { state->DeletePriorityClass(std::string(o.name())); },
  });
  out.push_back(pcs);
  if (!set.hypernodes) return out;

  informer::SharedInformer* hypernodes = factory->InformerFor(
      {.source = {.resource = client::HyperNodes()}, .transform = HyperNodeTransform()});
  hypernodes->AddEventHandler({
      .on_add = [state](const Object& o) { state->UpsertHyperNode(o.As<api::HyperNode>()); },
      .on_update = [state](const Object&,
                           const Object& o) { state->UpsertHyperNode(o.As<api::HyperNode>()); },
      .on_delete = [state](const Object& o,
                           bool) { state->DeleteHyperNode(std::string(o.name())); },
  });
  out.push_back(hypernodes);
  return out;
}

}  // namespace basalt::sched::cache
