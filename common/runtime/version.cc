#include "common/runtime/version.h"

#include "fmt/format.h"

#ifndef BASALT_VERSION
#error "BASALT_VERSION must be defined by the build (common/runtime/CMakeLists.txt)"
#endif

namespace basalt::runtime {

std::string_view BasaltVersion() { return BASALT_VERSION; }

std::string VersionLine(std::string_view binary_name) {
  return fmt::format("{} (Basalt) {}", binary_name, BasaltVersion());
}

}  // namespace basalt::runtime
