#include "scheduler/api/fit_error.h"

#include <catch2/catch.hpp>

#include "fmt/format.h"

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

TEST_CASE("FitErrors: Insufficient <dim> recorded by name equals the string form",
          "[sched][fiterror]") {
  FitErrors by_name, by_string;
  for (const char* n : {"a", "b", "c"}) {
    by_name.SetNodeInsufficient(n, "cpu");
    by_string.SetNodeError(n, {InsufficientReason("cpu")});
  }
  by_name.SetNodeInsufficient("d", "nvidia.com/gpu");
  by_string.SetNodeError("d", {InsufficientReason("nvidia.com/gpu")});
  CHECK(by_name.Error() == by_string.Error());
  CHECK(by_name.Error() ==
        "0/4 nodes are unavailable: 1 Insufficient nvidia.com/gpu, 3 Insufficient cpu.");
  CHECK(by_name.nodes() == by_string.nodes());
  CHECK(by_name.nodes().at("d") == std::set<std::string>{"Insufficient nvidia.com/gpu"});
}

TEST_CASE("FitErrors: nodes recorded out of name order and again are merged once",
          "[sched][fiterror]") {
  FitErrors fe;
  fe.SetNodeInsufficient("n3", "cpu");
  fe.SetNodeInsufficient("n1", "memory");
  fe.SetNodeError("n3", {"Insufficient cpu", std::string(kReasonUntoleratedTaint)});
  fe.SetNodeInsufficient("n2", "cpu");
  CHECK(fe.Error() ==
        "0/3 nodes are unavailable: 1 Insufficient memory, 1 node(s) had untolerated taint, "
        "2 Insufficient cpu.");
  CHECK(fe.nodes().size() == 3);
  CHECK(fe.nodes().at("n3").size() == 2);
  // Recording after a read merges again.
  fe.SetNodeInsufficient("n1", "memory");
  CHECK(fe.Error() ==
        "0/3 nodes are unavailable: 1 Insufficient memory, 1 node(s) had untolerated taint, "
        "2 Insufficient cpu.");
}

TEST_CASE("FitErrors: many distinct reasons (one per node) are each counted", "[sched][fiterror]") {
  FitErrors fe;
  for (int i = 0; i < 40; ++i) {
    const std::string node = fmt::format("n{:02}", i);
    fe.SetNodeError(node, {fmt::format("reason {:02}", i % 20)});
  }
  const std::string e = fe.Error();
  CHECK(e.rfind("0/40 nodes are unavailable: 2 reason 00, 2 reason 01,", 0) == 0);
  CHECK(e.find("2 reason 19.") != std::string::npos);
  CHECK(fe.nodes().at("n39") == std::set<std::string>{"reason 19"});
}

}  // namespace
}  // namespace basalt::sched
