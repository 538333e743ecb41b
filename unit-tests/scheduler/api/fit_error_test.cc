#include "scheduler/api/fit_error.h"

#include <catch2/catch.hpp>

namespace basalt::sched {
namespace {

TEST_CASE("FitErrors: aggregates reasons per node, sorted, in kube-scheduler format",
          "[sched][fiterror]") {
  FitErrors fe;
  for (int i = 0; i < 4; ++i)
    fe.SetNodeError("gpu-" + std::to_string(i), {InsufficientReason("nvidia.com/gpu")});
  for (int i = 0; i < 4; ++i)
    fe.SetNodeError("cpu-" + std::to_string(i), {std::string(kReasonNodeAffinity)});
  CHECK(fe.Error() ==
        "0/8 nodes are unavailable: 4 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's "
        "node affinity/selector.");
}

TEST_CASE("FitErrors: a reason counts once per node, the denominator is nodes with errors",
          "[sched][fiterror]") {
  FitErrors fe;
  fe.SetNodeError("n1", {"Insufficient cpu", "Insufficient cpu"});
  fe.SetNodeError("n1", {"Insufficient cpu"});
  fe.SetNodeError("n2", {"Insufficient memory", "Insufficient cpu"});
  CHECK(fe.Error() == "0/2 nodes are unavailable: 1 Insufficient memory, 2 Insufficient cpu.");
}

TEST_CASE("FitErrors: a custom prefix replaces the node count", "[sched][fiterror]") {
  FitErrors fe;
  fe.SetError("In hyperNode s0: 0/1 nodes are unavailable");
  fe.SetNodeError("n1", {"Insufficient cpu"});
  CHECK(fe.Error() == "In hyperNode s0: 0/1 nodes are unavailable: 1 Insufficient cpu.");
  CHECK(NodeFitErrorMessage("ns/p", "n1", {"a", "b"}) == "task ns/p on node n1 fit failed: a, b");
}

}  // namespace
}  // namespace basalt::sched
