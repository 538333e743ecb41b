#pragma once
// The benchmarks' command lines: common/util/flags.h (Go-style `--name=value`, as the
// binaries), plus what benchmarks add: exiting on a bad command line and lists of cases
// (`--case=NODES,JOBS,PODS`, repeatable).

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/util/flags.h"

namespace basalt::bench {

// Parses argv; `--help` prints the usage and exits 0, an error prints it with the usage and
// exits 2. Non-flag arguments (a benchmark's mode) go to `positional` if given, else are an
// error.
inline void ParseFlagsOrExit(FlagSet& flags, int argc, char** argv,
                             std::vector<std::string>* positional = nullptr) {
  absl::Status s = flags.Parse(argc, argv, positional);
  if (s.ok()) return;
  if (absl::IsCancelled(s)) {
    std::fputs(flags.Usage().c_str(), stdout);
    std::exit(0);
  }
  std::fprintf(stderr, "%s\n%s", std::string(s.message()).c_str(), flags.Usage().c_str());
  std::exit(2);
}

// "1000,200,8" -> {1000, 200, 8}: `want` comma-separated integers, or exits 2 naming `flag`.
inline std::vector<int> IntTupleOrExit(std::string_view flag, std::string_view text, size_t want) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    int v = 0;
    auto [p, ec] = std::from_chars(text.data() + start, text.data() + end, v);
    if (ec != std::errc() || p != text.data() + end) break;
    out.push_back(v);
    start = end + 1;
  }
  if (out.size() != want || start <= text.size()) {
    std::fprintf(stderr,
                 "invalid value \"%.*s\" for flag --%.*s: want %zu comma-separated integers\n",
                 static_cast<int>(text.size()), text.data(), static_cast<int>(flag.size()),
                 flag.data(), want);
    std::exit(2);
  }
  return out;
}

// The size of the cluster a one-cycle benchmark builds: --nodes, --jobs, --pods (per job; a
// benchmark may name it otherwise, e.g. --workers) and --reps.
struct CycleSize {
  int nodes;
  int jobs;
  int pods;
  int reps;

  void AddFlags(FlagSet& flags, std::string_view pods_name = "pods",
                std::string_view pods_help = "pods per job") {
    flags.Int("nodes", &nodes, "nodes");
    flags.Int("jobs", &jobs, "jobs");
    flags.Int(pods_name, &pods, pods_help);
    flags.Int("reps", &reps, "repetitions");
  }
};

}  // namespace basalt::bench
