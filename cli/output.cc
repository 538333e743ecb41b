#include "cli/output.h"

#include <algorithm>
#include <string_view>

#include "common/api/vocabulary.h"
#include "common/util/duration.h"
#include "common/util/json.h"
#include "fmt/format.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace basalt::cli {
namespace {

using std::chrono::duration_cast;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// Go's "%-<w>s": left-aligned, padded to `w`, never truncated.
std::string Pad(std::string_view s, size_t w) { return fmt::format("{:<{}}", s, w); }
std::string Pad(int64_t v, size_t w) { return fmt::format("{:<{}}", v, w); }

std::string Date(const std::optional<api::Time>& t) {
  if (!t) return "<unknown>";
  return api::FormatRfc3339(*t).substr(0, 10);
}

std::string JsonOf(const api::StringMap& m) {
  if (m.empty()) return "<none>";
  json::Document d;
  d.SetObject();
  for (const auto& [k, v] : m) {
    json::Set(d, k, json::MakeString(v, d.GetAllocator()), d.GetAllocator());
  }
  return json::Serialize(d);
}

}  // namespace

std::string HumanDuration(std::chrono::nanoseconds d) {
  const int64_t secs = duration_cast<seconds>(d).count();
  if (secs < -1) return "<invalid>";
  if (secs < 0) return "0s";
  if (secs < 60 * 2) return fmt::format("{}s", secs);
  const int64_t mins = duration_cast<minutes>(d).count();
  if (mins < 10) {
    const int64_t s = secs % 60;
    return s == 0 ? fmt::format("{}m", mins) : fmt::format("{}m{}s", mins, s);
  }
  if (mins < 60 * 3) return fmt::format("{}m", mins);
  const int64_t hrs = duration_cast<hours>(d).count();
  if (hrs < 8) {
    const int64_t m = mins % 60;
    return m == 0 ? fmt::format("{}h", hrs) : fmt::format("{}h{}m", hrs, m);
  }
  if (hrs < 48) return fmt::format("{}h", hrs);
  if (hrs < 24 * 8) {
    const int64_t h = hrs % 24;
    return h == 0 ? fmt::format("{}d", hrs / 24) : fmt::format("{}d{}h", hrs / 24, h);
  }
  if (hrs < 24 * 365 * 2) return fmt::format("{}d", hrs / 24);
  if (hrs < 24 * 365 * 8) return fmt::format("{}y{}d", hrs / 24 / 365, (hrs / 24) % 365);
  return fmt::format("{}y", hrs / 24 / 365);
}

std::string Age(const std::optional<api::Time>& t, api::Time now) {
  if (!t) return "<unknown>";
  return HumanDuration(now - *t);
}

std::string FormatJobList(const std::vector<api::Job>& jobs, bool all_namespaces) {
  size_t name_w = std::string_view("Name").size();
  size_t ns_w = std::string_view("Namespace").size();
  for (const api::Job& j : jobs) {
    name_w = std::max(name_w, j.name().size());
    ns_w = std::max(ns_w, j.namespace_name().size());
  }
  name_w += 3;
  ns_w += 3;
  auto row = [&](std::string_view ns, std::string_view name, std::string_view creation,
                 std::string_view phase, std::string_view type, const std::string& replicas,
                 const std::string& min, const std::string& pending, const std::string& running,
                 const std::string& succeeded, const std::string& failed,
                 const std::string& unknown, const std::string& retry) {
    std::string line = all_namespaces ? Pad(ns, ns_w) : std::string();
    line += Pad(name, name_w) + Pad(creation, 15) + Pad(phase, 12) + Pad(type, 12) +
            Pad(replicas, 12) + Pad(min, 6) + Pad(pending, 10) + Pad(running, 10) +
            Pad(succeeded, 12) + Pad(failed, 10) + Pad(unknown, 12) + Pad(retry, 10);
    return line + "\n";
  };
  std::string out = row("Namespace", "Name", "Creation", "Phase", "JobType", "Replicas", "Min",
                        "Pending", "Running", "Succeeded", "Failed", "Unknown", "RetryCount");
  for (const api::Job& j : jobs) {
    int64_t replicas = 0;
    for (const api::TaskSpec& t : j.spec().tasks) replicas += t.replicas;
    std::string type(j.label(kJobTypeLabel).value_or("Batch"));
    if (type.empty()) type = "Batch";
    const api::JobStatus& s = j.status();
    out += row(j.namespace_name(), j.name(), Date(j.creation_timestamp()), s.state.phase, type,
               std::to_string(replicas), std::to_string(s.min_available), std::to_string(s.pending),
               std::to_string(s.running), std::to_string(s.succeeded), std::to_string(s.failed),
               std::to_string(s.unknown), std::to_string(s.retry_count));
  }
  return out;
}

std::string FormatJobView(const api::Job& job, const std::vector<api::Event>& events,
                          api::Time now) {
  std::string out;
  auto line = [&out](int level, std::string_view text) {
    out += std::string(static_cast<size_t>(level) * 2, ' ');
    out += text;
    out += '\n';
  };
  line(0, fmt::format("Name:       \t{}", job.name()));
  line(0, fmt::format("Namespace:  \t{}", job.namespace_name()));
  line(0, fmt::format("Labels:     \t{}", JsonOf(job.labels())));
  line(0, fmt::format("Annotations:\t{}", JsonOf(job.annotations())));
  line(0, fmt::format("API Version:\t{}", job.api_version()));
  line(0, fmt::format("Kind:       \t{}", job.kind()));
  line(0, "Metadata:");
  line(1, fmt::format("Creation Timestamp:\t{}", job.creation_timestamp()
                                                     ? api::FormatRfc3339(*job.creation_timestamp())
                                                     : "<unknown>"));
  line(1, fmt::format("Generation:        \t{}", job.generation()));
  line(1, fmt::format("Resource Version:  \t{}", job.resource_version()));
  line(1, fmt::format("UID:               \t{}", job.uid()));
  const api::JobSpec& spec = job.spec();
  line(0, "Spec:");
  line(1, fmt::format("Min Available:     \t{}", spec.min_available));
  line(1, fmt::format("Scheduler Name:    \t{}", spec.scheduler_name));
  line(1, fmt::format("Queue:             \t{}", spec.queue));
  line(1, fmt::format("Max Retry:         \t{}", spec.max_retry));
  if (!spec.plugins.empty()) {
    line(1, "Plugins:");
    for (const auto& [name, args] : spec.plugins) {
      line(2, fmt::format("{}:\t[{}]", name, fmt::join(args, " ")));
    }
  }
  if (!spec.policies.empty()) {
    line(1, "Policies:");
    for (const api::LifecyclePolicy& p : spec.policies) {
      std::vector<std::string_view> events;
      for (api::JobEvent e : p.events) events.push_back(api::EventName(e));
      std::string when = !events.empty()           ? fmt::format("{}", fmt::join(events, ","))
                         : p.exit_code.has_value() ? fmt::format("exitCode {}", *p.exit_code)
                                                   : std::string("-");
      line(2, fmt::format("{} -> {}{}", when, p.action,
                          p.timeout ? fmt::format(" after {}", FormatGoDuration(*p.timeout))
                                    : std::string()));
    }
  }
  line(1, "Tasks:");
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    const api::TaskSpec& t = spec.tasks[i];
    line(2, fmt::format("Name:\t{}", t.name));
    line(2, fmt::format("Replicas:\t{}", t.replicas));
    if (t.min_available) line(2, fmt::format("Min Available:\t{}", *t.min_available));
    const json::Value* tmpl = job.TaskTemplate(i);
    const json::Value* containers =
        tmpl == nullptr ? nullptr : json::FindPath(*tmpl, {"spec", "containers"});
    if (containers != nullptr && containers->IsArray()) {
      line(2, "Containers:");
      for (const json::Value& c : containers->GetArray()) {
        line(3, fmt::format("Name: \t{}", json::GetString(c, "name")));
        line(3, fmt::format("Image:\t{}", json::GetString(c, "image")));
        const json::Value* req = json::FindPath(c, {"resources", "requests"});
        if (req != nullptr && req->IsObject() && req->MemberCount() > 0) {
          std::vector<std::string> parts;
          for (const auto& m : req->GetObject()) {
            parts.push_back(fmt::format("{}={}", json::AsView(m.name), json::AsView(m.value)));
          }
          line(3, fmt::format("Requests:\t{}", fmt::join(parts, ",")));
        }
      }
    }
    if (tmpl != nullptr) {
      std::string_view restart = json::GetString(
          json::FindPath(*tmpl, {"spec"}) ? *json::FindPath(*tmpl, {"spec"}) : *tmpl,
          "restartPolicy");
      if (!restart.empty()) line(2, fmt::format("Restart Policy:\t{}", restart));
    }
  }
  const api::JobStatus& s = job.status();
  line(0, "Status:");
  auto counter = [&](std::string_view label, int32_t v) {
    if (v > 0) line(1, fmt::format("{}\t{}", label, v));
  };
  counter("Succeeded:    ", s.succeeded);
  counter("Pending:      ", s.pending);
  counter("Running:      ", s.running);
  counter("Failed:       ", s.failed);
  counter("Terminating:  ", s.terminating);
  counter("Unknown:      ", s.unknown);
  counter("RetryCount:   ", s.retry_count);
  counter("Min Available:", s.min_available);
  counter("Version:      ", s.version);
  line(1, "State:");
  line(2, fmt::format("Phase:\t{}", s.state.phase));
  if (!s.state.reason.empty()) line(2, fmt::format("Reason:\t{}", s.state.reason));
  if (!s.state.message.empty()) line(2, fmt::format("Message:\t{}", s.state.message));
  if (!s.controlled_resources.empty()) {
    line(1, "Controlled Resources:");
    for (const auto& [k, v] : s.controlled_resources) line(2, fmt::format("{}: \t{}", k, v));
  }
  if (!s.conditions.empty()) {
    line(1, "Conditions:");
    line(2, "Status\tTransitionTime");
    for (const api::JobCondition& c : s.conditions) {
      line(2, fmt::format("{} \t{}", c.status,
                          c.last_transition_time ? api::FormatRfc3339(*c.last_transition_time)
                                                 : "<unknown>"));
    }
  }
  if (events.empty()) {
    line(0, "Events: \t<none>");
    return out;
  }
  line(0, "Events:");
  line(0, fmt::format("{:<15}\t{:<40}\t{:<30}\t{:<40}\t{}", "Type", "Reason", "Age", "From",
                      "Message"));
  line(0, fmt::format("{:<15}\t{:<40}\t{:<30}\t{:<40}\t{}", "-------", "-------", "-------",
                      "-------", "-------"));
  for (const api::Event& e : events) {
    const api::EventFields& f = e.fields();
    std::string age = f.count > 1
                          ? fmt::format("{} (x{} over {})", Age(f.last_timestamp, now), f.count,
                                        Age(f.first_timestamp, now))
                          : Age(f.first_timestamp ? f.first_timestamp : f.last_timestamp, now);
    std::string from = f.source_component.empty() ? f.reporting_component : f.source_component;
    if (!f.source_host.empty()) from += ", " + f.source_host;
    line(0,
         fmt::format("{:<15}\t{:<40}\t{:<30}\t{:<40}\t{}", f.type, f.reason, age, from, f.message));
  }
  return out;
}

std::map<std::string, QueuePodGroupCounts, std::less<>> CountPodGroupsByQueue(
    const std::vector<api::PodGroup>& podgroups) {
  std::map<std::string, QueuePodGroupCounts, std::less<>> counts;
  for (const api::PodGroup& pg : podgroups) {
    std::string queue = pg.spec().queue.empty() ? std::string(api::kDefaultQueue) : pg.spec().queue;
    QueuePodGroupCounts& c = counts[queue];
    const std::string& phase = pg.status().phase;
    if (phase == "Inqueue") {
      ++c.inqueue;
    } else if (phase == "Pending") {
      ++c.pending;
    } else if (phase == "Running") {
      ++c.running;
    } else if (phase == "Unknown") {
      ++c.unknown;
    } else if (phase == "Completed") {
      ++c.completed;
    }
  }
  return counts;
}

std::string FormatQueueList(const std::vector<api::Queue>& queues,
                            const std::map<std::string, QueuePodGroupCounts, std::less<>>& counts) {
  std::string out = Pad("Name", 25) + Pad("Weight", 8) + Pad("State", 8) + Pad("Inqueue", 8) +
                    Pad("Pending", 8) + Pad("Running", 8) + Pad("Unknown", 8) +
                    Pad("Completed", 8) + "\n";
  for (const api::Queue& q : queues) {
    QueuePodGroupCounts c;
    if (auto it = counts.find(q.name()); it != counts.end()) c = it->second;
    out += Pad(q.name(), 25) + Pad(q.spec().weight, 8) + Pad(q.status().state, 8) +
           Pad(c.inqueue, 8) + Pad(c.pending, 8) + Pad(c.running, 8) + Pad(c.unknown, 8) +
           Pad(c.completed, 8) + "\n";
  }
  return out;
}

std::string FormatQueue(const api::Queue& queue) {
  const api::QueueStatus& s = queue.status();
  return Pad("Name", 25) + Pad("Weight", 8) + Pad("State", 8) + Pad("Inqueue", 8) +
         Pad("Pending", 8) + Pad("Running", 8) + Pad("Unknown", 8) + "\n" + Pad(queue.name(), 25) +
         Pad(queue.spec().weight, 8) + Pad(s.state, 8) + Pad(s.inqueue, 8) + Pad(s.pending, 8) +
         Pad(s.running, 8) + Pad(s.unknown, 8) + "\n";
}

std::string PodStatusText(const api::Pod& pod) {
  const api::PodStatus& st = pod.status();
  std::string reason = st.reason.empty() ? st.phase : st.reason;
  const api::Condition* scheduled = pod.FindCondition("PodScheduled");
  if (scheduled != nullptr && scheduled->reason == "SchedulingGated") reason = "SchedulingGated";
  bool initializing = false;
  for (size_t i = 0; i < st.init_container_statuses.size(); ++i) {
    const api::ContainerStatus& c = st.init_container_statuses[i];
    if (c.state == "terminated" && c.exit_code.value_or(0) == 0) continue;
    if (c.state == "running" && c.ready) continue;  // a started sidecar
    if (c.state == "terminated") {
      reason = c.reason.empty() ? fmt::format("Init:ExitCode:{}", c.exit_code.value_or(0))
                                : "Init:" + c.reason;
    } else if (c.state == "waiting" && !c.reason.empty() && c.reason != "PodInitializing") {
      reason = "Init:" + c.reason;
    } else {
      reason = fmt::format("Init:{}/{}", i, pod.spec().init_containers.size());
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    bool has_running = false;
    for (auto it = st.container_statuses.rbegin(); it != st.container_statuses.rend(); ++it) {
      const api::ContainerStatus& c = *it;
      if (c.state == "waiting" && !c.reason.empty()) {
        reason = c.reason;
      } else if (c.state == "terminated" && !c.reason.empty()) {
        reason = c.reason;
      } else if (c.state == "terminated") {
        reason = fmt::format("ExitCode:{}", c.exit_code.value_or(0));
      } else if (c.ready && c.state == "running") {
        has_running = true;
      }
    }
    if (reason == "Completed" && has_running) {
      const api::Condition* ready = pod.FindCondition("Ready");
      reason = ready != nullptr && ready->status == "True" ? "Running" : "NotReady";
    }
  }
  if (pod.deletion_timestamp() && st.reason == "NodeLost") {
    reason = "Unknown";
  } else if (pod.deletion_timestamp() && st.phase != "Succeeded" && st.phase != "Failed") {
    reason = "Terminating";
  }
  return reason;
}

std::string FormatPodList(const std::vector<api::Pod>& pods, bool all_namespaces, api::Time now) {
  struct Row {
    std::string ns, name, ready, status, restarts, age;
  };
  std::vector<Row> rows;
  size_t ns_w = 0, name_w = 0, ready_w = 0, status_w = 0, restart_w = 0, age_w = 0;
  for (const api::Pod& p : pods) {
    int ready = 0;
    int restarts = 0;
    for (const api::ContainerStatus& c : p.status().container_statuses) {
      if (c.ready && c.state == "running") ++ready;
      restarts += c.restart_count;
    }
    size_t total = p.spec().containers.size();
    for (const api::Container& c : p.spec().init_containers) total += c.restartable ? 1 : 0;
    Row r{std::string(p.namespace_name()),    std::string(p.name()),
          fmt::format("{}/{}", ready, total), PodStatusText(p),
          std::to_string(restarts),           Age(p.creation_timestamp(), now)};
    ns_w = std::max(ns_w, r.ns.size());
    name_w = std::max(name_w, r.name.size());
    ready_w = std::max(ready_w, r.ready.size());
    status_w = std::max(status_w, r.status.size());
    restart_w = std::max(restart_w, r.restarts.size());
    age_w = std::max(age_w, r.age.size());
    rows.push_back(std::move(r));
  }
  // Volcano sizes each column by its longest value (not its title) plus 8.
  constexpr size_t kSpacing = 8;
  auto format = [&](const Row& r) {
    std::string line = all_namespaces ? Pad(r.ns, std::max(ns_w, size_t{9}) + kSpacing) : "";
    return line + Pad(r.name, name_w + kSpacing) + Pad(r.ready, ready_w + kSpacing) +
           Pad(r.status, status_w + kSpacing) + Pad(r.restarts, restart_w + kSpacing) +
           Pad(r.age, age_w + kSpacing) + "\n";
  };
  std::string out = format(Row{"Namespace", "Name", "Ready", "Status", "Restart", "Age"});
  for (const Row& r : rows) out += format(r);
  return out;
}

std::string FormatPodGroupList(const std::vector<api::PodGroup>& podgroups, bool all_namespaces,
                               api::Time now) {
  size_t name_w = std::string_view("Name").size();
  size_t ns_w = std::string_view("Namespace").size();
  size_t queue_w = std::string_view("Queue").size();
  for (const api::PodGroup& pg : podgroups) {
    name_w = std::max(name_w, pg.name().size());
    ns_w = std::max(ns_w, pg.namespace_name().size());
    queue_w = std::max(queue_w, pg.spec().queue.size());
  }
  auto row = [&](std::string_view ns, std::string_view name, std::string_view phase,
                 const std::string& min, const std::string& running, const std::string& succeeded,
                 const std::string& failed, std::string_view queue, std::string_view age) {
    std::string line = all_namespaces ? Pad(ns, ns_w + 3) : "";
    return line + Pad(name, name_w + 3) + Pad(phase, 12) + Pad(min, 12) + Pad(running, 10) +
           Pad(succeeded, 12) + Pad(failed, 10) + Pad(queue, queue_w + 3) + Pad(age, 10) + "\n";
  };
  std::string out = row("Namespace", "Name", "Phase", "MinMember", "Running", "Succeeded", "Failed",
                        "Queue", "Age");
  for (const api::PodGroup& pg : podgroups) {
    const api::PodGroupStatus& s = pg.status();
    out += row(pg.namespace_name(), pg.name(), s.phase, std::to_string(pg.spec().min_member),
               std::to_string(s.running), std::to_string(s.succeeded), std::to_string(s.failed),
               pg.spec().queue, Age(pg.creation_timestamp(), now));
  }
  return out;
}

std::string FormatJobFlowList(const std::vector<api::Object>& jobflows, api::Time now) {
  struct Row {
    std::string name, ns, phase, age;
  };
  std::vector<Row> rows;
  Row widths{"Name", "Namespace", "Phase", "Age"};
  size_t name_w = widths.name.size(), ns_w = widths.ns.size(), phase_w = widths.phase.size(),
         age_w = widths.age.size();
  for (const api::Object& f : jobflows) {
    const json::Value* state = json::FindPath(f.doc(), {"status", "state"});
    Row r{std::string(f.name()), std::string(f.namespace_name()),
          std::string(state ? json::GetString(*state, "phase") : ""),
          Age(f.creation_timestamp(), now)};
    name_w = std::max(name_w, r.name.size());
    ns_w = std::max(ns_w, r.ns.size());
    phase_w = std::max(phase_w, r.phase.size());
    age_w = std::max(age_w, r.age.size());
    rows.push_back(std::move(r));
  }
  constexpr size_t kSpacing = 4;
  auto format = [&](const Row& r) {
    return Pad(r.name, name_w + kSpacing) + Pad(r.ns, ns_w + kSpacing) +
           Pad(r.phase, phase_w + kSpacing) + Pad(r.age, age_w + kSpacing) + "\n";
  };
  std::string out = format(widths);
  for (const Row& r : rows) out += format(r);
  return out;
}

std::string FormatJobTemplateList(const std::vector<api::Object>& jobtemplates) {
  size_t name_w = std::string_view("Name").size(), ns_w = std::string_view("Namespace").size();
  for (const api::Object& t : jobtemplates) {
    name_w = std::max(name_w, t.name().size());
    ns_w = std::max(ns_w, t.namespace_name().size());
  }
  constexpr size_t kSpacing = 4;
  std::string out = Pad("Name", name_w + kSpacing) + Pad("Namespace", ns_w + kSpacing) + "\n";
  for (const api::Object& t : jobtemplates) {
    out += Pad(t.name(), name_w + kSpacing) + Pad(t.namespace_name(), ns_w + kSpacing) + "\n";
  }
  return out;
}

namespace {

bool IsScalar(const json::Value& v) {
  return !(v.IsObject() && v.MemberCount() > 0) && !(v.IsArray() && !v.Empty());
}

// Whether a plain (unquoted) YAML scalar would read back as this string.
bool PlainSafe(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return false;
  static constexpr std::string_view kWords[] = {
      "true", "false", "yes", "no",   "on",   "off",   "null", "~", "True", "False", "Yes",
      "No",   "On",    "Off", "NULL", "TRUE", "FALSE", "Null", "y", "n",    "Y",     "N"};
  for (std::string_view w : kWords) {
    if (s == w) return false;
  }
  if (std::string_view("-?:,[]{}#&*!|>'\"%@`0123456789.+").find(s.front()) !=
      std::string_view::npos) {
    return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) return false;
    if (c == '#' && s[i - 1] == ' ') return false;
  }
  return true;
}

std::string YamlScalar(const json::Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsString()) {
    std::string_view s = json::AsView(v);
    return PlainSafe(s) ? std::string(s) : json::Serialize(v);  // JSON strings are YAML
  }
  if (v.IsObject()) return "{}";
  if (v.IsArray()) return "[]";
  return json::Serialize(v);
}

void EmitYaml(const json::Value& v, size_t indent, std::string& out);

// One sequence item: "- " then the value, nested collections indented past the dash.
void EmitItem(const json::Value& item, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (IsScalar(item)) {
    out += pad + "- " + YamlScalar(item) + "\n";
    return;
  }
  std::string nested;
  EmitYaml(item, indent + 2, nested);
  out += pad + "- " + nested.substr(indent + 2);
}

void EmitYaml(const json::Value& v, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.IsArray()) {
    for (const json::Value& item : v.GetArray()) EmitItem(item, indent, out);
    return;
  }
  for (const auto& m : v.GetObject()) {
    std::string key(json::AsView(m.name));
    if (!PlainSafe(key)) key = json::Serialize(m.name);
    if (IsScalar(m.value)) {
      out += pad + key + ": " + YamlScalar(m.value) + "\n";
    } else if (m.value.IsArray()) {
      out += pad + key + ":\n";
      EmitYaml(m.value, indent, out);
    } else {
      out += pad + key + ":\n";
      EmitYaml(m.value, indent + 2, out);
    }
  }
}

}  // namespace

std::string FormatJson(const json::Value& object) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetIndent(' ', 2);
  object.Accept(w);
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::string FormatYaml(const json::Value& object) {
  if (IsScalar(object)) return YamlScalar(object) + "\n";
  std::string out;
  EmitYaml(object, 0, out);
  return out;
}

}  // namespace basalt::cli
