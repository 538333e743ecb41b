#pragma once
// The command line of vcctl: `vcctl <group> <verb> [flags]`, with Volcano's commands, flags
// and single-letter aliases (pkg/cli/*: -N/--name and -n/--namespace for jobs, -n/--name for
// queues, -k/--kubeconfig, -s/--master, ...). Parsing is separate from running so that every
// accepted and refused command line is unit tested.
//
// Plain value types and pure functions; thread-safe.

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/flags.h"

namespace basalt::cli {

struct Options {
  std::string group;  // job, queue, podgroup, pod, jobflow, jobtemplate
  std::string verb;   // run, list, view, suspend, resume, delete, create, get, operate
  client::ClientOptions client;
  std::string namespace_name;  // -n/--namespace; "" = the kubeconfig context's namespace
  bool all_namespaces = false;
  std::string name;  // -N/--name (jobs), -n/--name (queues), or the one positional argument

  // job run
  std::string filename;  // -f/--filename (job run), -f/--file (jobflow/jobtemplate)
  std::string image = "busybox";
  int min_available = 1;
  int replicas = 1;
  std::string requests = "cpu=1000m,memory=100Mi";
  std::string limits = "cpu=1000m,memory=100Mi";
  std::string scheduler = "volcano";  // job run -S; job list -S filters (default "")
  std::string queue;                  // job run -q; pod/podgroup list -q filters
  bool wait = false;
  std::chrono::nanoseconds timeout{0};  // --timeout with --wait; 0 = wait forever
  std::string timeout_text;             // as given, for messages
  std::string logs_task;                // --logs TASK

  // job list
  std::string selector;  // --selector: substring of the job name

  // queue create / operate
  int weight = 0;  // create defaults to 1
  std::string state = "Open";
  std::string action;  // open, close, update

  // jobflow / jobtemplate get
  std::string output;  // -o/--output: "" or table, yaml, json

  // pod / podgroup list
  std::string job;  // -j/--job

  // Set when --help/-h was given (or no command): print this and exit 0.
  std::string help;
};

// Parses argv[1..]. kInvalidArgument (exit code 2) with a message naming the problem and the
// command's usage for an unknown command or flag, a bad value, or a missing required flag.
absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args);

// `vcctl` with no arguments: the commands.
std::string TopUsage();

}  // namespace basalt::cli
