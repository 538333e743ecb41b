#include "scheduler/api/resource.h"

#include <algorithm>

#include "fmt/format.h"

namespace basalt::sched {

// GCC and Clang provide __int128; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef __int128 Int128;

namespace {
bool NameBefore(const ScalarMap::value_type& item, std::string_view name) {
  return item.first < name;
}
}  // namespace

ScalarMap::const_iterator ScalarMap::find(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name, NameBefore);
  return it != items_.end() && it->first == name ? it : items_.end();
}

int64_t& ScalarMap::operator[](std::string_view name) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name, NameBefore);
  if (it == items_.end() || it->first != name) it = items_.emplace(it, std::string(name), 0);
  return it->second;
}

Resource& Resource::Set(std::string_view name, int64_t value) {
  if (name == kCpu) {
    milli_cpu_ = value;
  } else if (name == kMemory) {
    memory_ = value;
  } else {
    scalars_[name] = value;
  }
  return *this;
}

int64_t Resource::Get(std::string_view name) const {
  if (name == kCpu) return milli_cpu_;
  if (name == kMemory) return memory_;
  auto it = scalars_.find(name);
  return it == scalars_.end() ? 0 : it->second;
}

bool Resource::Has(std::string_view name) const {
  return name == kCpu || name == kMemory || scalars_.find(name) != scalars_.end();
}

std::vector<std::string> Resource::Names() const {
  std::vector<std::string> out;
  if (milli_cpu_ != 0) out.emplace_back(kCpu);
  if (memory_ != 0) out.emplace_back(kMemory);
  for (const auto& [name, v] : scalars_) {
    if (v != 0) out.push_back(name);
  }
  return out;
}

bool Resource::IsEmpty() const {
  if (milli_cpu_ != 0 || memory_ != 0) return false;
  return std::all_of(scalars_.begin(), scalars_.end(),
                     [](const auto& kv) { return kv.second == 0; });
}

Resource& Resource::operator+=(const Resource& r) {
  milli_cpu_ = SaturatingAdd(milli_cpu_, r.milli_cpu_);
  memory_ = SaturatingAdd(memory_, r.memory_);
  for (const auto& [name, v] : r.scalars_) {
    int64_t& mine = scalars_[name];
    mine = SaturatingAdd(mine, v);
  }
  return *this;
}

Resource& Resource::operator-=(const Resource& r) {
  milli_cpu_ = SaturatingSub(milli_cpu_, r.milli_cpu_);
  memory_ = SaturatingSub(memory_, r.memory_);
  for (const auto& [name, v] : r.scalars_) {
    int64_t& mine = scalars_[name];
    mine = SaturatingSub(mine, v);
  }
  return *this;
}

bool Resource::IsSaturated() const {
  auto at_bound = [](int64_t v) { return v == INT64_MAX || v == INT64_MIN; };
  if (at_bound(milli_cpu_) || at_bound(memory_)) return true;
  return std::any_of(scalars_.begin(), scalars_.end(),
                     [&](const auto& kv) { return at_bound(kv.second); });
}

bool operator==(const Resource& a, const Resource& b) {
  if (a.milli_cpu_ != b.milli_cpu_ || a.memory_ != b.memory_) return false;
  for (const auto& [name, v] : a.scalars_) {
    if (b.Get(name) != v) return false;
  }
  for (const auto& [name, v] : b.scalars_) {
    if (a.Get(name) != v) return false;
  }
  return true;
}

Resource Resource::SubFloorZero(const Resource& r) const {
  Resource out;
  out.milli_cpu_ = std::max<int64_t>(SaturatingSub(milli_cpu_, r.milli_cpu_), 0);
  out.memory_ = std::max<int64_t>(SaturatingSub(memory_, r.memory_), 0);
  for (const auto& [name, v] : scalars_) {
    out.scalars_[name] = std::max<int64_t>(SaturatingSub(v, r.Get(name)), 0);
  }
  return out;
}

Resource Resource::Scale(int64_t num, int64_t den) const {
  Resource out;
  if (den == 0) return out;
  // Int128 keeps the product exact (|v * num| < 2^126); the quotient saturates back to int64.
  auto mul = [&](int64_t v) {
    const Int128 q = static_cast<Int128>(v) * num / den;
    if (q > INT64_MAX) return INT64_MAX;
    if (q < INT64_MIN) return INT64_MIN;
    return static_cast<int64_t>(q);
  };
  out.milli_cpu_ = mul(milli_cpu_);
  out.memory_ = mul(memory_);
  for (const auto& [name, v] : scalars_) out.scalars_[name] = mul(v);
  return out;
}

namespace {
int64_t RhsValue(const Resource& rhs, std::string_view name, MissingAs missing) {
  if (!rhs.Has(name)) return missing == MissingAs::kInfinity ? Resource::kUnbounded : 0;
  return rhs.Get(name);
}
}  // namespace

bool Resource::LessEqual(const Resource& rhs, MissingAs missing) const {
  if (milli_cpu_ > rhs.milli_cpu_ || memory_ > rhs.memory_) return false;
  // A scalar's name is never cpu or memory (Set routes those to their fields), so the scalars
  // are looked up directly; this runs for every task/node pair of a predicate pass.
  for (const auto& [name, v] : scalars_) {
    auto it = rhs.scalars_.find(name);
    const int64_t avail = it != rhs.scalars_.end()          ? it->second
                          : missing == MissingAs::kInfinity ? kUnbounded
                                                            : 0;
    if (v > avail) return false;
  }
  for (const auto& [name, v] : rhs.scalars_) {
    if (v < 0 && scalars_.find(name) == scalars_.end()) return false;
  }
  return true;
}

bool Resource::LessEqualOn(const Resource& rhs, const Resource& dims, MissingAs missing) const {
  if (dims.milli_cpu_ != 0 && milli_cpu_ > rhs.milli_cpu_) return false;
  if (dims.memory_ != 0 && memory_ > rhs.memory_) return false;
  for (const auto& [name, d] : dims.scalars_) {
    if (d != 0 && Get(name) > RhsValue(rhs, name, missing)) return false;
  }
  return true;
}

Resource Resource::Min(const Resource& r, MissingAs missing) const {
  Resource out;
  out.milli_cpu_ = std::min(milli_cpu_, r.milli_cpu_);
  out.memory_ = std::min(memory_, r.memory_);
  for (const auto& [name, v] : scalars_)
    out.scalars_[name] = std::min(v, RhsValue(r, name, missing));
  return out;
}

Resource Resource::Max(const Resource& r) const {
  Resource out = *this;
  out.milli_cpu_ = std::max(milli_cpu_, r.milli_cpu_);
  out.memory_ = std::max(memory_, r.memory_);
  for (const auto& [name, v] : r.scalars_) out.scalars_[name] = std::max(Get(name), v);
  return out;
}

std::optional<std::string> Resource::FirstInsufficient(const Resource& avail) const {
  const std::optional<std::string_view> name = FirstInsufficientName(avail);
  if (!name.has_value()) return std::nullopt;
  return std::string(*name);
}

std::optional<std::string_view> Resource::FirstInsufficientName(const Resource& avail) const {
  if (milli_cpu_ > avail.milli_cpu_) return kCpu;
  if (memory_ > avail.memory_) return kMemory;
  for (const auto& [name, v] : scalars_) {
    auto it = avail.scalars_.find(name);  // never cpu or memory (see LessEqual)
    if (v > (it != avail.scalars_.end() ? it->second : 0)) return std::string_view(name);
  }
  return std::nullopt;
}

std::string FormatQuantity(std::string_view name, int64_t value) {
  if (value == Resource::kSaturated) {
    return fmt::format("{} or more",
                       name == kMemory ? fmt::format("{}", value) : fmt::format("{}m", value));
  }
  if (value >= Resource::kUnbounded) return "unlimited";
  if (name == kMemory) {
    static constexpr std::pair<int64_t, const char*> kUnits[] = {{int64_t{1} << 50, "Pi"},
                                                                 {int64_t{1} << 40, "Ti"},
                                                                 {int64_t{1} << 30, "Gi"},
                                                                 {int64_t{1} << 20, "Mi"},
                                                                 {int64_t{1} << 10, "Ki"}};
    for (const auto& [unit, suffix] : kUnits) {
      if (value != 0 && value % unit == 0) return fmt::format("{}{}", value / unit, suffix);
    }
    return fmt::format("{}", value);
  }
  // cpu and scalars are both in milli-units.
  if (value % 1000 == 0) return fmt::format("{}", value / 1000);
  return fmt::format("{}m", value);
}

std::string Resource::ToString() const {
  std::string out;
  auto append = [&out](std::string_view name, int64_t v) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, FormatQuantity(name, v));
  };
  if (milli_cpu_ != 0) append(kCpu, milli_cpu_);
  if (memory_ != 0) append(kMemory, memory_);
  for (const auto& [name, v] : scalars_) {
    if (v != 0) append(name, v);
  }
  if (out.empty()) out = "cpu 0, memory 0";
  return out;
}

bool IsWholeUnitResource(std::string_view name) {
  if (name == kCpu || name == kMemory || name == "ephemeral-storage" || name == "pods") {
    return false;
  }
  return !name.starts_with("hugepages-") && !name.starts_with("attachable-volumes-");
}

}  // namespace basalt::sched
