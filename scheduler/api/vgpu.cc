#include "scheduler/api/vgpu.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <numeric>

#include "fmt/format.h"

namespace basalt::sched {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

// Go's strconv.ParseBool, which the device plugin's value goes through in Volcano.
bool ParseBool(std::string_view s, bool* out) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") {
    *out = true;
    return true;
  }
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    *out = false;
    return true;
  }
  return false;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// nvidia.com/use-gputype and nouse-gputype: case-insensitive substrings of the GPU type.
bool TypeAllowed(const VgpuRequest& req, const std::string& type) {
  const std::string t = Upper(type);
  auto any = [&t](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(), [&t](const std::string& want) {
      return t.find(Upper(want)) != std::string::npos;
    });
  };
  if (!req.use_types.empty()) return any(req.use_types);
  if (!req.nouse_types.empty()) return !any(req.nouse_types);
  return true;
}

int64_t MemoryFor(const VgpuContainerRequest& c, const VgpuDevice& d) {
  if (c.memory > 0) return c.memory;
  const int32_t pct = c.memory_percentage == kVgpuNoPercentage ? 100 : c.memory_percentage;
  return d.memory * pct / 100;
}

// Why `d` cannot serve one GPU of `c` ("" if it can); `mem` gets the memory it would take.
std::string_view Blocker(const VgpuDevice& d, const VgpuContainerRequest& c, const VgpuRequest& req,
                         bool ignore_spread, int64_t* mem) {
  if (!d.healthy) return "healthy GPU";
  if (d.used_shares >= d.shares) return kVgpuNumber;
  if (req.spread && !ignore_spread && !req.group_key.empty() && d.groups.count(req.group_key)) {
    return kVgpuPodGroupPolicyAnnotation;
  }
  *mem = MemoryFor(c, d);
  if (d.memory - d.used_memory < *mem) return kVgpuMemory;
  if (d.used_cores + c.cores > 100) return kVgpuCores;
  // 100 cores asks for the GPU alone; a full GPU takes no task without a core share.
  if (c.cores == 100 && d.used_shares > 0) return kVgpuCores;
  if (d.used_cores >= 100 && c.cores == 0) return kVgpuCores;
  if (!TypeAllowed(req, d.type)) return kUseGpuTypeAnnotation;
  return "";
}

std::vector<size_t> Order(const std::vector<VgpuDevice>& devs, VgpuPolicy policy) {
  std::vector<size_t> order(devs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&devs, policy](size_t a, size_t b) {
    const VgpuDevice& x = devs[a];
    const VgpuDevice& y = devs[b];
    if (policy == VgpuPolicy::kSpread) return x.used_shares < y.used_shares;
    return x.memory - x.used_memory < y.memory - y.used_memory;
  });
  return order;
}

struct ContainerFit {
  std::vector<VgpuContainerDevice> got;
  std::map<std::string_view, int> blockers;
  double score = 0;
};

// Places one container on `devs` (updating them); got.size() < c.number if it does not fit.
ContainerFit FitContainer(std::vector<VgpuDevice>& devs, const VgpuContainerRequest& c,
                          const VgpuRequest& req, VgpuPolicy policy, bool ignore_spread,
                          const VgpuChoiceCost* cost = nullptr, const HostLeft& left = {}) {
  ContainerFit out;
  std::vector<size_t> order = Order(devs, policy);
  if (cost != nullptr) {
    // The GPUs that could serve the container, by the cost of the state after (stable: ties keep
    // the policy's order); the others after them, where they only count as blockers.
    std::vector<double> by(devs.size(), std::numeric_limits<double>::infinity());
    for (size_t i : order) {
      int64_t mem = 0;
      if (!Blocker(devs[i], c, req, ignore_spread, &mem).empty()) continue;
      VgpuDevice& d = devs[i];
      ++d.used_shares;
      d.used_memory += mem;
      d.used_cores += c.cores;
      by[i] = (*cost)(devs, left);
      --d.used_shares;
      d.used_memory -= mem;
      d.used_cores -= c.cores;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&by](size_t a, size_t b) { return by[a] < by[b]; });
  }
  for (size_t i : order) {
    if (static_cast<int32_t>(out.got.size()) >= c.number) break;
    VgpuDevice& d = devs[i];
    int64_t mem = 0;
    if (std::string_view b = Blocker(d, c, req, ignore_spread, &mem); !b.empty()) {
      ++out.blockers[b];
      continue;
    }
    const bool was_idle = d.used_shares == 0;
    ++d.used_shares;
    d.used_memory += mem;
    d.used_cores += c.cores;
    if (policy == VgpuPolicy::kBinpack) {
      out.score += d.memory > 0
                       ? 100.0 * static_cast<double>(d.used_memory) / static_cast<double>(d.memory)
                       : 0;
    } else if (was_idle) {
      out.score += 100;
    }
    out.got.push_back(VgpuContainerDevice{d.uuid, "NVIDIA", mem, c.cores});
  }
  return out;
}

std::string ReasonFor(std::string_view blocker) {
  if (blocker == kVgpuPodGroupPolicyAnnotation) {
    return "no GPU without a pod of the same PodGroup (volcano.sh/vgpu-podgroup-policy: spread)";
  }
  if (blocker == kUseGpuTypeAnnotation) return "no GPU of the type the pod allows";
  if (blocker == "healthy GPU") return "GPU unhealthy";
  return fmt::format("Insufficient {}", blocker);
}

}  // namespace

absl::StatusOr<std::vector<VgpuDevice>> ParseVgpuRegister(std::string_view text) {
  std::vector<VgpuDevice> out;
  for (std::string_view entry : Split(text, ':')) {
    if (entry.find(',') == std::string_view::npos) continue;  // the trailing ":" and blanks
    std::vector<std::string_view> f = Split(entry, ',');
    VgpuDevice d;
    if (f.size() < 5 || f[0].empty() || !ParseInt(f[1], &d.shares) || !ParseInt(f[2], &d.memory) ||
        !ParseBool(f[4], &d.healthy)) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: malformed GPU entry \"{}\" (want <uuid>,<shares>,<memory MiB>,<type>,<healthy>)",
          kVgpuRegisterAnnotation, entry));
    }
    d.uuid = std::string(f[0]);
    d.type = std::string(f[3]);
    if (f.size() > 5 && !f[5].empty()) d.mode = std::string(f[5]);
    out.push_back(std::move(d));
  }
  return out;
}

std::string EncodeVgpuRegister(const std::vector<VgpuDevice>& devices) {
  std::string out;
  for (const VgpuDevice& d : devices) {
    out += fmt::format("{},{},{},{},{},{}:", d.uuid, d.shares, d.memory, d.type,
                       d.healthy ? "true" : "false", d.mode);
  }
  return out;
}

int64_t VgpuRequest::TotalNumber() const {
  int64_t n = 0;
  for (const VgpuContainerRequest& c : containers) n += c.number;
  return n;
}

std::string EncodeVgpuAssignment(const VgpuAssignment& assignment) {
  std::string out;
  for (size_t k = 0; k < assignment.size(); ++k) {
    if (k > 0) out += ';';
    for (const VgpuContainerDevice& d : assignment[k]) {
      out += fmt::format("{},{},{},{}:", d.uuid, d.type, d.memory, d.cores);
    }
  }
  return out;
}

absl::StatusOr<VgpuAssignment> DecodeVgpuAssignment(std::string_view text) {
  VgpuAssignment out;
  if (text.empty()) return out;
  for (std::string_view container : Split(text, ';')) {
    std::vector<VgpuContainerDevice> devs;
    for (std::string_view entry : Split(container, ':')) {
      if (entry.find(',') == std::string_view::npos) continue;
      std::vector<std::string_view> f = Split(entry, ',');
      VgpuContainerDevice d;
      if (f.size() < 4 || f[0].empty() || !ParseInt(f[2], &d.memory) || !ParseInt(f[3], &d.cores)) {
        return absl::InvalidArgumentError(
            fmt::format("{}: malformed device entry \"{}\" (want <uuid>,<type>,<memory>,<cores>)",
                        kVgpuIdsAnnotation, entry));
      }
      d.uuid = std::string(f[0]);
      d.type = std::string(f[1]);
      devs.push_back(std::move(d));
    }
    out.push_back(std::move(devs));
  }
  return out;
}

VgpuFit VgpuDevices::Fit(const VgpuRequest& req, const HostLeft& left) const {
  VgpuFit out;
  if (req.Empty()) {
    out.ok = true;
    return out;
  }
  if (devices_.empty()) {
    out.reason = "node has no vGPU devices registered (volcano.sh/node-vgpu-register)";
    out.resolvable = false;
    return out;
  }
  const std::string& node_mode = devices_.front().mode;
  if (!req.mode.empty() && req.mode != node_mode) {
    out.reason = fmt::format("pod asks for vGPU mode {} (volcano.sh/vgpu-mode), the node has {}",
                             req.mode, node_mode);
    out.resolvable = false;
    return out;
  }
  if (node_mode != kVgpuModeHamiCore) {
    // Deliberate: MIG geometries are not modelled; such a node is refused, not half-served.
    out.reason = fmt::format("vGPU mode {} is not supported by Basalt (only {})", node_mode,
                             kVgpuModeHamiCore);
    out.resolvable = false;
    return out;
  }
  std::vector<VgpuDevice> devs = devices_;
  for (const VgpuContainerRequest& c : req.containers) {
    if (c.number > static_cast<int32_t>(devs.size())) {
      out.reason = fmt::format("Insufficient {} (node has {} GPUs, a container asks for {})",
                               kVgpuNumber, devs.size(), c.number);
      out.resolvable = false;
      out.assignment.clear();
      out.score = 0;
      return out;
    }
    ContainerFit fit =
        FitContainer(devs, c, req, policy_, /*ignore_spread=*/false, cost_.get(), left);
    if (static_cast<int32_t>(fit.got.size()) < c.number) {
      // The most frequent blocker names the resource (ties: the first by name).
      std::string_view worst;
      int most = 0;
      for (const auto& [b, n] : fit.blockers) {
        if (n > most) {
          most = n;
          worst = b;
        }
      }
      out.reason = ReasonFor(worst);
      // Could it fit if every GPU of the node were free?
      std::vector<VgpuDevice> empty = devices_;
      for (VgpuDevice& d : empty) {
        d.used_shares = 0;
        d.used_memory = 0;
        d.used_cores = 0;
        d.groups.clear();
      }
      out.resolvable =
          static_cast<int32_t>(
              FitContainer(empty, c, req, policy_, /*ignore_spread=*/true).got.size()) >= c.number;
      out.assignment.clear();
      out.score = 0;
      return out;
    }
    out.score += fit.score;
    out.assignment.push_back(std::move(fit.got));
  }
  out.ok = true;
  return out;
}

bool VgpuDevices::Holds(const VgpuAssignment& assignment) const {
  std::vector<VgpuDevice> devs = devices_;
  for (const auto& container : assignment) {
    for (const VgpuContainerDevice& part : container) {
      auto it = std::find_if(devs.begin(), devs.end(),
                             [&part](const VgpuDevice& d) { return d.uuid == part.uuid; });
      if (it == devs.end() || !it->healthy || it->used_shares >= it->shares ||
          it->memory - it->used_memory < part.memory || it->used_cores + part.cores > 100) {
        return false;
      }
      ++it->used_shares;
      it->used_memory += part.memory;
      it->used_cores += part.cores;
    }
  }
  return true;
}

void VgpuDevices::Account(const VgpuAssignment& assignment, const std::string& group_key,
                          int sign) {
  for (const auto& container : assignment) {
    for (const VgpuContainerDevice& part : container) {
      auto it = std::find_if(devices_.begin(), devices_.end(),
                             [&part](const VgpuDevice& d) { return d.uuid == part.uuid; });
      if (it == devices_.end()) continue;
      it->used_shares += sign;
      it->used_memory += sign * part.memory;
      it->used_cores += sign * part.cores;
      if (!group_key.empty()) {
        int32_t& n = it->groups[group_key];
        n += sign;
        if (n <= 0) it->groups.erase(group_key);
      }
    }
  }
}

}  // namespace basalt::sched
