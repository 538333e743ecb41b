// The GPU attribute annotations at admission: on a Pod and on a Job task's pod template, every
// malformed value refused with the annotation's field path and the reason.
#include "webhook/pods/gpu_attributes.h"

#include <catch2/catch.hpp>

#include "common/api/gpu_attributes.h"
#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"
#include "webhook/jobs/validate_job.h"
#include "webhook/pods/validate_pod.h"

namespace basalt::webhook {
namespace {

using testing::MutatedBertJob;
using testing::Run;
using testing::SimplePod;

struct Case {
  std::string name;
  std::string key;  // annotation key
  std::string value;
  std::string message;  // after "<path>.annotations[<key>]: "; "" = allowed
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"a binary memory", "gpu.basalt.dev/min-memory", "16Gi", ""},
      {"a decimal memory", "gpu.basalt.dev/max-memory", "40G", ""},
      {"a product list", "gpu.basalt.dev/products", "NVIDIA-A10, NVIDIA-A30", ""},
      {"families", "gpu.basalt.dev/families", "ampere", ""},
      {"preferred products", "gpu.basalt.dev/preferred-products", "NVIDIA-A30", ""},
      {"a bare number", "gpu.basalt.dev/min-memory", "16",
       "invalid value \"16\": a GPU memory size needs a unit, e.g. 16Gi or 40G (a bare number "
       "would be bytes)"},
      {"not a quantity", "gpu.basalt.dev/min-memory", "lotsGi",
       "invalid value \"lotsGi\": not a quantity"},
      {"zero", "gpu.basalt.dev/max-memory", "0Gi", "invalid value \"0Gi\": must be more than 0"},
      {"an empty product", "gpu.basalt.dev/products", "NVIDIA-A10,,NVIDIA-A30",
       "invalid value \"NVIDIA-A10,,NVIDIA-A30\": an empty item"},
      {"a product that is no label value", "gpu.basalt.dev/products", "NVIDIA A10",
       "invalid value \"NVIDIA A10\": \"NVIDIA A10\" is not a label value"},
      {"a misspelt key", "gpu.basalt.dev/min-mem", "16Gi",
       "unknown annotation (known: gpu.basalt.dev/min-memory, gpu.basalt.dev/max-memory, "
       "gpu.basalt.dev/products, gpu.basalt.dev/families, gpu.basalt.dev/preferred-products)"},
  };
  return cases;
}

std::string Pointer(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

TEST_CASE("GPU attributes: parsed values", "[webhook][pods][gpuattributes]") {
  api::ParsedGpuAttributes p = api::ParseGpuAttributes({{"gpu.basalt.dev/min-memory", "16Gi"},
                                                        {"gpu.basalt.dev/max-memory", "40G"},
                                                        {"gpu.basalt.dev/products", " a , b,a"},
                                                        {"other.io/x", "ignored"}});
  CHECK(p.errors.empty());
  CHECK(p.attributes.min_memory_mib == 16384);
  CHECK(p.attributes.max_memory_mib == 38146);  // 40e9 bytes, rounded down
  CHECK(p.attributes.products == std::vector<std::string>{"a", "b"});
  CHECK(p.attributes.invalid.empty());
  CHECK(p.attributes.Filters());
  api::ParsedGpuAttributes bad = api::ParseGpuAttributes(
      {{"gpu.basalt.dev/min-memory", "40Gi"}, {"gpu.basalt.dev/max-memory", "20Gi"}});
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.attributes.invalid ==
        "gpu.basalt.dev/max-memory: invalid value \"20Gi\": less than "
        "gpu.basalt.dev/min-memory 40Gi");
  CHECK(api::ParseGpuAttributes({{"gpu.basalt.dev/min-memory", "1"}}).attributes.Filters());
  CHECK(api::ParseGpuAttributes({}).attributes.Empty());
}

TEST_CASE("GPU attributes: a Pod's annotations are validated", "[webhook][pods][gpuattributes]") {
  PodValidator validator({"volcano"});
  for (const Case& c : Cases()) {
    SECTION(c.name) {
      AdmissionResponse r =
          Run(validator, Operation::kCreate,
              SimplePod().SetString("/metadata/annotations/" + Pointer(c.key), c.value));
      if (c.message.empty()) {
        CHECK(r.allowed);
      } else {
        CHECK_FALSE(r.allowed);
        CHECK(r.code == 422);
        CHECK_THAT(r.message,
                   Catch::StartsWith("metadata.annotations[" + c.key + "]: " + c.message));
      }
    }
  }
}

TEST_CASE("GPU attributes: a Job task template's annotations are validated",
          "[webhook][pods][gpuattributes]") {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  JobValidator validator(lister);
  for (const Case& c : Cases()) {
    SECTION(c.name) {
      AdmissionResponse r =
          Run(validator, Operation::kCreate,
              MutatedBertJob().SetString(
                  "/spec/tasks/0/template/metadata/annotations/" + Pointer(c.key), c.value));
      if (c.message.empty()) {
        CHECK(r.allowed);
      } else {
        CHECK_FALSE(r.allowed);
        CHECK(r.code == 422);
        CHECK_THAT(r.message, Catch::StartsWith("spec.tasks[0].template.metadata.annotations[" +
                                                c.key + "]: " + c.message));
      }
    }
  }
}

}  // namespace
}  // namespace basalt::webhook
