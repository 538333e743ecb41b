#include "common/api/gpu_attributes.h"

#include <algorithm>

#include "common/resource/quantity.h"
#include "fmt/format.h"

namespace basalt::api {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr std::string_view kByteSuffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
                                              "k",  "M",  "G",  "T",  "P",  "E"};

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A Kubernetes label value that is not empty: at most 63 characters of [A-Za-z0-9._-],
// starting and ending alphanumeric.
bool IsLabelValue(std::string_view v) {
  if (v.empty() || v.size() > 63 || !IsAlnum(v.front()) || !IsAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "a, b" -> {"a", "b"}; an error message if an item is empty or not a label value.
std::string ParseList(std::string_view text, std::vector<std::string>& out) {
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item = Trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) {
      return fmt::format(
          "invalid value \"{}\": an empty item (a comma-separated list of "
          "GPU feature discovery label values)",
          text);
    }
    if (!IsLabelValue(item)) {
      return fmt::format(
          "invalid value \"{}\": \"{}\" is not a label value (at most 63 of "
          "[A-Za-z0-9._-], starting and ending alphanumeric)",
          text, item);
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.emplace_back(item);
    if (comma == std::string_view::npos) return "";
    start = comma + 1;
  }
}

// Bytes of a memory quantity, or an error message.
std::string ParseMemory(std::string_view text, int64_t& bytes) {
  std::string_view t = Trim(text);
  bool has_unit = std::any_of(std::begin(kByteSuffixes), std::end(kByteSuffixes),
                              [&](std::string_view s) { return t.ends_with(s); });
  if (!has_unit) {
    return fmt::format(
        "invalid value \"{}\": a GPU memory size needs a unit, e.g. 16Gi or "
        "40G (a bare number would be bytes)",
        text);
  }
  auto q = resource::Quantity::Parse(t);
  if (!q.ok()) {
    return fmt::format("invalid value \"{}\": not a quantity ({})", text,
                       std::string(q.status().message()));
  }
  bytes = q->Value();
  if (bytes <= 0) return fmt::format("invalid value \"{}\": must be more than 0", text);
  return "";
}

}  // namespace

ParsedGpuAttributes ParseGpuAttributes(
    const std::vector<std::pair<std::string, std::string>>& annotations) {
  ParsedGpuAttributes out;
  GpuAttributes& a = out.attributes;
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& [key, value] : annotations) {
    if (std::string_view(key).starts_with(kGpuAttributePrefix)) sorted.emplace_back(key, value);
  }
  std::sort(sorted.begin(), sorted.end());
  auto error = [&out](const std::string& key, std::string message) {
    out.errors.push_back({key, std::move(message)});
  };
  for (const auto& [key, value] : sorted) {
    std::string message;
    if (key == kGpuMinMemoryKey || key == kGpuMaxMemoryKey) {
      int64_t bytes = 0;
      message = ParseMemory(value, bytes);
      if (message.empty() && key == kGpuMinMemoryKey) {
        a.min_memory_mib = (bytes + kMiB - 1) / kMiB;
        a.min_memory = std::string(Trim(value));
      } else if (message.empty()) {
        a.max_memory_mib = bytes / kMiB;
        a.max_memory = std::string(Trim(value));
        if (a.max_memory_mib == 0) {
          message = fmt::format("invalid value \"{}\": less than 1Mi, no GPU has so little", value);
        }
      }
    } else if (key == kGpuProductsKey) {
      message = ParseList(value, a.products);
    } else if (key == kGpuFamiliesKey) {
      message = ParseList(value, a.families);
    } else if (key == kGpuPreferredProductsKey) {
      message = ParseList(value, a.preferred_products);
    } else {
      message =
          fmt::format("unknown annotation (known: {}, {}, {}, {}, {})", kGpuMinMemoryKey,
                      kGpuMaxMemoryKey, kGpuProductsKey, kGpuFamiliesKey, kGpuPreferredProductsKey);
    }
    if (!message.empty()) error(key, std::move(message));
  }
  if (a.min_memory_mib > 0 && a.max_memory_mib > 0 && a.min_memory_mib > a.max_memory_mib) {
    error(std::string(kGpuMaxMemoryKey), fmt::format("invalid value \"{}\": less than {} {}",
                                                     a.max_memory, kGpuMinMemoryKey, a.min_memory));
  }
  if (!out.errors.empty()) {
    a.invalid = fmt::format("{}: {}", out.errors.front().key, out.errors.front().message);
  }
  return out;
}

}  // namespace basalt::api
