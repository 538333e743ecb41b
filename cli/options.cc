#include "cli/options.h"

#include <map>
#include <string_view>
#include <vector>

#include "common/util/duration.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::cli {
namespace {

struct Command {
  std::string_view group;
  std::string_view verb;
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"job", "run", "run a job from a YAML file (-f) or from flags; --wait follows it to the end"},
    {"job", "list", "list jobs"},
    {"job", "view", "show a job's spec, status and events"},
    {"job", "suspend", "abort a job (an AbortJob Command); resume brings it back"},
    {"job", "resume", "resume an aborted job (a ResumeJob Command)"},
    {"job", "delete", "delete a job"},
    {"queue", "create", "create a queue"},
    {"queue", "list", "list queues with their PodGroups per phase"},
    {"queue", "get", "show one queue"},
    {"queue", "operate", "open or close a queue (a Command), or update its weight"},
    {"queue", "delete", "delete a queue"},
    {"podgroup", "list", "list PodGroups"},
    {"pod", "list", "list the pods of Volcano jobs"},
    {"jobflow", "create", "create the JobFlows of a YAML file (-f; documents split by ---)"},
    {"jobflow", "get", "show one JobFlow (a table row, or -o yaml|json)"},
    {"jobflow", "list", "list JobFlows (flow.volcano.sh)"},
    {"jobflow", "describe",
     "print one JobFlow (-N), or every one of the namespace, as YAML (-o yaml, default) or JSON"},
    {"jobflow", "delete", "delete a JobFlow (-N), or the JobFlows of a YAML file (-f)"},
    {"jobtemplate", "create",
     "create the JobTemplates of a YAML file (-f; documents split by ---)"},
    {"jobtemplate", "get", "show one JobTemplate (a table row, or -o yaml|json)"},
    {"jobtemplate", "list", "list JobTemplates (flow.volcano.sh)"},
    {"jobtemplate", "describe",
     "print one JobTemplate (-N), or every one of the namespace, as YAML (default) or JSON"},
    {"jobtemplate", "delete", "delete a JobTemplate (-N), or the JobTemplates of a YAML file (-f)"},
};

const Command* FindCommand(std::string_view group, std::string_view verb) {
  for (const Command& c : kCommands) {
    if (c.group == group && c.verb == verb) return &c;
  }
  return nullptr;
}

bool KnownGroup(std::string_view group) {
  for (const Command& c : kCommands) {
    if (c.group == group) return true;
  }
  return false;
}

std::string GroupUsage(std::string_view group) {
  std::string out = fmt::format("Usage: vcctl {} <command> [flags]\n\nCommands:\n", group);
  for (const Command& c : kCommands) {
    if (c.group == group) out += fmt::format("  {:<10}{}\n", c.verb, c.help);
  }
  out += fmt::format("\nRun 'vcctl {} <command> --help' for its flags.\n", group);
  return out;
}

void AddClientFlags(FlagSet& flags, Options& o) {
  o.client.AddFlags(flags);
  flags.String("k", &o.client.kubeconfig, "alias of --kubeconfig");
  flags.String("s", &o.client.master, "alias of --master (the address of the API server)");
}

void AddNamespaceFlags(FlagSet& flags, Options& o, bool all_namespaces) {
  flags.String("namespace", &o.namespace_name,
               "the namespace (default: the kubeconfig context's, else \"default\")");
  flags.String("n", &o.namespace_name, "alias of --namespace");
  if (all_namespaces) {
    flags.Bool("all-namespaces", &o.all_namespaces, "list in every namespace");
    flags.Bool("A", &o.all_namespaces, "alias of --all-namespaces");
  }
}

void AddJobNameFlags(FlagSet& flags, Options& o) {
  flags.String("name", &o.name, "the name of the job");
  flags.String("N", &o.name, "alias of --name");
}

void AddQueueNameFlags(FlagSet& flags, Options& o) {
  flags.String("name", &o.name, "the name of the queue");
  flags.String("n", &o.name, "alias of --name");
}

// Registers the flags of `group verb`.
void AddCommandFlags(FlagSet& flags, Options& o) {
  const std::string& g = o.group;
  const std::string& v = o.verb;
  AddClientFlags(flags, o);
  if (g == "job") {
    AddNamespaceFlags(flags, o, v == "list");
    if (v != "list") AddJobNameFlags(flags, o);
  }
  if (g == "job" && v == "run") {
    flags.String("filename", &o.filename, "the YAML (or JSON) file of the job");
    flags.String("f", &o.filename, "alias of --filename");
    flags.String("image", &o.image, "the container image of the job (without -f)");
    flags.String("i", &o.image, "alias of --image");
    flags.Int("min", &o.min_available, "the minimal available tasks of the job (without -f)");
    flags.Int("m", &o.min_available, "alias of --min");
    flags.Int("replicas", &o.replicas, "the total tasks of the job (without -f)");
    flags.Int("r", &o.replicas, "alias of --replicas");
    flags.String("requests", &o.requests, "the resource requests of a task (without -f)");
    flags.String("R", &o.requests, "alias of --requests");
    flags.String("limits", &o.limits, "the resource limits of a task (without -f)");
    flags.String("L", &o.limits, "alias of --limits");
    flags.String("scheduler", &o.scheduler, "the scheduler of the job (without -f)");
    flags.String("S", &o.scheduler, "alias of --scheduler");
    flags.String("queue", &o.queue, "the queue of the job (overrides the file's)");
    flags.String("q", &o.queue, "alias of --queue");
    flags.Bool("wait", &o.wait,
               "wait until the job finishes, printing each phase change; the exit code tells "
               "the outcome (0 Completed, 1 Failed, 3 Aborted, 4 Terminated, 5 timeout)");
    flags.Bool("w", &o.wait, "alias of --wait");
    flags.Func("timeout", "with --wait: give up after this long (a duration: 90s, 30m, 2h)", "0",
               [&o](std::string_view text) -> absl::Status {
                 absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(text);
                 if (!d.ok()) return d.status();
                 if (d->count() < 0) return absl::InvalidArgumentError("must not be negative");
                 o.timeout = *d;
                 o.timeout_text = std::string(text);
                 return absl::OkStatus();
               });
    flags.String("logs", &o.logs_task,
                 "with --wait: follow the logs of the first pod of this task");
  }
  if (g == "job" && v == "list") {
    o.scheduler.clear();
    flags.String("scheduler", &o.scheduler, "list only jobs of this scheduler");
    flags.String("S", &o.scheduler, "alias of --scheduler");
    flags.String("selector", &o.selector, "list only jobs whose name contains this");
  }
  if (g == "queue") {
    if (v != "list") AddQueueNameFlags(flags, o);
    if (v == "create") {
      o.weight = 1;
      flags.Int("weight", &o.weight, "the weight of the queue");
      flags.Int("w", &o.weight, "alias of --weight");
      flags.String("state", &o.state, "the state of the queue: Open or Closed");
      flags.String("S", &o.state, "alias of --state");
    }
    if (v == "operate") {
      flags.Int("weight", &o.weight, "the new weight (with --action update)");
      flags.Int("w", &o.weight, "alias of --weight");
      flags.String("action", &o.action, "open, close or update");
      flags.String("a", &o.action, "alias of --action");
    }
  }
  if (g == "jobflow" || g == "jobtemplate") {
    if (v != "create") AddNamespaceFlags(flags, o, g == "jobflow" && v == "list");
    if (v == "get" || v == "delete" || v == "describe") {
      flags.String("name", &o.name, fmt::format("the name of the {}", g));
      flags.String("N", &o.name, "alias of --name");
    }
    if (v == "create" || v == "delete") {
      flags.String("file", &o.filename, fmt::format("the path to the YAML file of the {}s", g));
      flags.String("f", &o.filename, "alias of --file");
    }
    if (v == "get") {
      flags.String("output", &o.output, "the output format: table (default), yaml or json");
      flags.String("o", &o.output, "alias of --output");
    }
    if (v == "describe") {
      flags.String("format", &o.output, "the output format: yaml (default) or json");
      flags.String("o", &o.output, "alias of --format");
      flags.String("output", &o.output, "alias of --format");
    }
  }
  if (g == "pod" || g == "podgroup") {
    AddNamespaceFlags(flags, o, true);
    flags.String("job", &o.job, "list only those of this job");
    flags.String("j", &o.job, "alias of --job");
    flags.String("queue", &o.queue, "list only those in this queue");
    flags.String("q", &o.queue, "alias of --queue");
  }
}

// FlagSet's usage with each single-letter alias folded into its flag's line ("-N, --name").
std::string FoldAliases(const std::string& usage) {
  struct Entry {
    std::string head, help;
  };
  std::vector<Entry> entries;
  size_t pos = 0;
  while (pos < usage.size()) {
    size_t end = usage.find('\n', pos);
    if (end == std::string::npos) end = usage.size();
    std::string line = usage.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("  --", 0) == 0) {
      entries.push_back({line, ""});
    } else if (!entries.empty()) {
      entries.back().help += (entries.back().help.empty() ? "" : "\n") + line;
    }
  }
  std::map<std::string, std::string> alias_of;  // long name -> short alias
  for (const Entry& e : entries) {
    const size_t at = e.help.find("alias of --");
    if (at == std::string::npos) continue;
    std::string target = e.help.substr(at + 11);
    target = target.substr(0, target.find_first_of(" )"));
    std::string alias = e.head.substr(4, e.head.find(' ', 4) - 4);
    alias_of[target] = alias;
  }
  std::string out;
  for (const Entry& e : entries) {
    if (e.help.find("alias of --") != std::string::npos) continue;
    std::string name = e.head.substr(4, e.head.find(' ', 4) - 4);
    std::string head = e.head;
    if (auto it = alias_of.find(name); it != alias_of.end()) {
      head = fmt::format("  -{}, {}", it->second, e.head.substr(2));
    }
    out += head + "\n" + e.help + "\n";
  }
  return out;
}

std::string CommandUsage(const Options& shape, const FlagSet& flags) {
  const Command* c = FindCommand(shape.group, shape.verb);
  return fmt::format("Usage: vcctl {} {} [flags]\n\n{}\n\nFlags:\n{}", shape.group, shape.verb,
                     c ? c->help : "", FoldAliases(flags.FlagsUsage()));
}

absl::Status Usage(std::string_view problem, std::string_view usage) {
  return absl::InvalidArgumentError(fmt::format("{}\n\n{}", problem, usage));
}

}  // namespace

std::string TopUsage() {
  std::string out =
      "vcctl: the command line of Volcano (Basalt)\n\nUsage: vcctl <group> <command> "
      "[flags]\n\nCommands:\n";
  for (const Command& c : kCommands) {
    out += fmt::format("  {:<18}{}\n", fmt::format("{} {}", c.group, c.verb), c.help);
  }
  out +=
      "\nEvery command takes --kubeconfig/-k, --master/-s and --context (else $KUBECONFIG, the\n"
      "in-cluster service account, or ~/.kube/config). Run 'vcctl <group> <command> --help'\n"
      "for a command's flags. Exit codes: docs/vcctl.md.\n";
  return out;
}

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    o.help = TopUsage();
    return o;
  }
  o.group = args[0];
  if (!KnownGroup(o.group)) {
    return Usage(fmt::format("unknown command \"{}\"", o.group), TopUsage());
  }
  if (args.size() < 2 || args[1] == "--help" || args[1] == "-h") {
    if (args.size() < 2) {
      return Usage(fmt::format("vcctl {}: which command?", o.group), GroupUsage(o.group));
    }
    o.help = GroupUsage(o.group);
    return o;
  }
  o.verb = args[1];
  if (FindCommand(o.group, o.verb) == nullptr) {
    return Usage(fmt::format("unknown command \"{} {}\"", o.group, o.verb), GroupUsage(o.group));
  }
  FlagSet flags(fmt::format("vcctl {} {}", o.group, o.verb));
  AddCommandFlags(flags, o);
  std::vector<std::string> positional;
  std::vector<std::string> rest(args.begin() + 2, args.end());
  absl::Status s = flags.Parse(rest, &positional);
  if (s.code() == absl::StatusCode::kCancelled) {
    o.help = CommandUsage(o, flags);
    return o;
  }
  const std::string usage = CommandUsage(o, flags);
  if (!s.ok()) return Usage(MessageOf(s), usage);

  const bool flow_group = o.group == "jobflow" || o.group == "jobtemplate";
  const bool takes_name = !(o.verb == "list" || (o.group == "job" && o.verb == "run") ||
                            (flow_group && o.verb == "create"));
  if (!positional.empty()) {
    if (!takes_name || positional.size() > 1 || !o.name.empty()) {
      return Usage(fmt::format("unexpected argument \"{}\"", positional[0]), usage);
    }
    o.name = positional[0];
  }
  if (o.group == "job" && o.verb != "list" && o.verb != "run" && o.name.empty()) {
    return Usage(fmt::format("job name (--name/-N) is mandatory to {} a job", o.verb), usage);
  }
  if (o.group == "queue" && o.verb != "list" && o.name.empty()) {
    if (o.verb == "create") {
      o.name = "test";  // Volcano's default queue name for create
    } else {
      return Usage(fmt::format("queue name (--name/-n) is mandatory to {} a queue", o.verb), usage);
    }
  }
  if (o.group == "job" && o.verb == "run") {
    if (o.filename.empty() && o.name.empty()) {
      return Usage("job name (--name/-N) cannot be left blank without a file (-f)", usage);
    }
    if (!o.wait && (o.timeout.count() > 0 || !o.logs_task.empty())) {
      return Usage("--timeout and --logs need --wait", usage);
    }
    if (o.replicas < 1 || o.min_available < 0 || o.min_available > o.replicas) {
      return Usage("--replicas must be at least 1 and --min between 0 and --replicas", usage);
    }
  }
  if (o.group == "jobflow" || o.group == "jobtemplate") {
    if (o.verb == "create" && o.filename.empty()) {
      return Usage(fmt::format("the file (--file/-f) is mandatory to create {}s", o.group), usage);
    }
    if (o.verb == "get" && o.name.empty()) {
      return Usage(fmt::format("name (--name/-N) is mandatory to get the particular {} details",
                               o.group == "jobflow" ? "jobflow" : "job template"),
                   usage);
    }
    if (o.verb == "delete" && o.name.empty() == o.filename.empty()) {
      return Usage(fmt::format("{} name (--name/-N) or a file (--file/-f) must be specified, not "
                               "both",
                               o.group),
                   usage);
    }
    if (o.verb == "describe" && !o.output.empty() && o.output != "yaml" && o.output != "json") {
      // Volcano prints "Unsupported format" and exits 0; a script is better served by a refusal.
      return Usage(fmt::format("--format must be yaml or json, not \"{}\"", o.output), usage);
    }
    if (o.verb == "get" && !o.output.empty() && o.output != "table" && o.output != "yaml" &&
        o.output != "json") {
      return Usage(fmt::format("--output must be table, yaml or json, not \"{}\"", o.output),
                   usage);
    }
  }
  if (o.group == "queue" && o.verb == "create" && o.weight < 1) {
    return Usage("--weight must be at least 1", usage);
  }
  if (o.group == "queue" && o.verb == "create" && o.state != "Open" && o.state != "Closed") {
    return Usage(fmt::format("--state must be Open or Closed, not \"{}\"", o.state), usage);
  }
  if (o.group == "queue" && o.verb == "operate") {
    if (o.action.empty()) return Usage("action (--action/-a) can not be null", usage);
    if (o.action != "open" && o.action != "close" && o.action != "update") {
      return Usage(
          fmt::format("action {} invalid, valid actions are open, close and update", o.action),
          usage);
    }
    if (o.action == "update" && o.weight <= 0) {
      return Usage(fmt::format("when update queue {}, weight must be specified, the value must "
                               "be greater than 0",
                               o.name),
                   usage);
    }
  }
  return o;
}

}  // namespace basalt::cli
