#pragma once
// FUZZ_CHECK: the invariant checks of Basalt's fuzz targets. A failed check prints what was
// expected and aborts, which libFuzzer reports as a crash and saves the input as a reproducer.

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, ...)                                                               \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   ::basalt::fuzz::Describe(__VA_ARGS__).c_str());                          \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace basalt::fuzz {

inline std::string Describe() { return {}; }
inline std::string Describe(const std::string& s) { return s; }

}  // namespace basalt::fuzz
