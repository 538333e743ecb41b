#include "scheduler/plugins/registry.h"

#include "scheduler/plugins/bestfit/bestfit.h"
#include "scheduler/plugins/binpack/binpack.h"
#include "scheduler/plugins/capacity/capacity.h"
#include "scheduler/plugins/conformance/conformance.h"
#include "scheduler/plugins/deviceshare/deviceshare.h"
#include "scheduler/plugins/drf/drf.h"
#include "scheduler/plugins/example_zone/example_zone.h"
#include "scheduler/plugins/fgd/fgd.h"
#include "scheduler/plugins/gang/gang.h"
#include "scheduler/plugins/gpuattributes/gpu_attributes.h"
#include "scheduler/plugins/network_topology/network_topology.h"
#include "scheduler/plugins/nodegroup/nodegroup.h"
#include "scheduler/plugins/nodeorder/nodeorder.h"
#include "scheduler/plugins/overcommit/overcommit.h"
#include "scheduler/plugins/predicates/predicates.h"
#include "scheduler/plugins/priority/priority.h"
#include "scheduler/plugins/proportion/proportion.h"
#include "scheduler/plugins/randomscore/randomscore.h"
#include "scheduler/plugins/task_topology/task_topology.h"

namespace basalt::sched {

PluginRegistry NewInTreeRegistry() {
  PluginRegistry r;
  r.Register(std::string(kBestFitPluginName), NewBestFitPlugin);
  r.Register(std::string(kBinpackPluginName), NewBinpackPlugin);
  r.Register(std::string(kCapacityPluginName), NewCapacityPlugin);
  r.Register(std::string(kDeviceSharePluginName), NewDeviceSharePlugin);
  r.Register(std::string(kFgdPluginName), NewFgdPlugin);
  r.Register(std::string(kConformancePluginName), NewConformancePlugin);
  r.Register(std::string(kDrfPluginName), NewDrfPlugin);
  r.Register(std::string(kExampleZonePluginName), NewExampleZonePlugin);
  r.Register(std::string(kGangPluginName), NewGangPlugin);
  r.Register(std::string(kGpuAttributesPluginName), NewGpuAttributesPlugin);
  r.Register(std::string(kNetworkTopologyPluginName), NewNetworkTopologyPlugin);
  r.Register(std::string(kNodeGroupPluginName), NewNodeGroupPlugin);
  r.Register(std::string(kNodeOrderPluginName), NewNodeOrderPlugin);
  r.Register(std::string(kOvercommitPluginName), NewOvercommitPlugin);
  r.Register(std::string(kPredicatesPluginName), NewPredicatesPlugin);
  r.Register(std::string(kPriorityPluginName), NewPriorityPlugin);
  r.Register(std::string(kProportionPluginName), NewProportionPlugin);
  r.Register(std::string(kRandomScorePluginName), NewRandomScorePlugin);
  r.Register(std::string(kTaskTopologyPluginName), NewTaskTopologyPlugin);
  return r;
}

}  // namespace basalt::sched
