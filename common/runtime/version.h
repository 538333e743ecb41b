#pragma once
// The Basalt release every binary reports (`--version`, logs at start-up).

#include <string>
#include <string_view>

namespace basalt::runtime {

// "0.1.0": the project version from the top-level CMakeLists.txt.
std::string_view BasaltVersion();

// What `<binary> --version` prints: "vc-scheduler (Basalt) 0.1.0".
std::string VersionLine(std::string_view binary_name);

}  // namespace basalt::runtime
