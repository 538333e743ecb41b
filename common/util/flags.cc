#include "common/util/flags.h"

#include <stdlib.h>

#include <charconv>
#include <cmath>
#include <set>

#include "common/util/duration.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt {
namespace {

template <typename T>
absl::Status ParseNumber(std::string_view value, T* out) {
  T parsed{};
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
    return absl::InvalidArgumentError("not a number");
  }
  *out = parsed;
  return absl::OkStatus();
}

std::string Join(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& s : values) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

void FlagSet::Add(std::string name, std::string help, std::string default_value, bool is_bool,
                  std::function<absl::Status(std::string_view)> set, std::function<void()> reset) {
  Flag flag;
  flag.name = std::move(name);
  flag.help = std::move(help);
  flag.default_value = std::move(default_value);
  flag.is_bool = is_bool;
  flag.set = std::move(set);
  flag.reset = std::move(reset);
  for (Flag& f : flags_) {
    if (f.name == flag.name) {
      f = std::move(flag);  // a later registration replaces an earlier one
      return;
    }
  }
  flags_.push_back(std::move(flag));
}

const FlagSet::Flag* FlagSet::Find(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void FlagSet::String(std::string_view name, std::string* target, std::string_view help) {
  Add(std::string(name), std::string(help), *target, false, [target](std::string_view v) {
    *target = std::string(v);
    return absl::OkStatus();
  });
}

void FlagSet::Int(std::string_view name, int* target, std::string_view help) {
  Add(std::string(name), std::string(help), std::to_string(*target), false,
      [target](std::string_view v) { return ParseNumber(v, target); });
}

void FlagSet::Int64(std::string_view name, int64_t* target, std::string_view help) {
  Add(std::string(name), std::string(help), std::to_string(*target), false,
      [target](std::string_view v) { return ParseNumber(v, target); });
}

void FlagSet::Double(std::string_view name, double* target, std::string_view help) {
  Add(std::string(name), std::string(help), fmt::format("{}", *target), false,
      [target](std::string_view v) -> absl::Status {
        std::string s(v);
        char* end = nullptr;
        double d = strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d)) {
          return absl::InvalidArgumentError("not a number");
        }
        *target = d;
        return absl::OkStatus();
      });
}

void FlagSet::Bool(std::string_view name, bool* target, std::string_view help) {
  Add(std::string(name), std::string(help), *target ? "true" : "false", true,
      [target](std::string_view v) -> absl::Status {
        if (v == "true" || v == "1" || v == "t" || v == "T" || v == "True" || v == "TRUE") {
          *target = true;
        } else if (v == "false" || v == "0" || v == "f" || v == "F" || v == "False" ||
                   v == "FALSE") {
          *target = false;
        } else {
          return absl::InvalidArgumentError("not a bool");
        }
        return absl::OkStatus();
      });
}

void FlagSet::Duration(std::string_view name, std::chrono::nanoseconds* target,
                       std::string_view help) {
  Add(std::string(name), std::string(help), FormatGoDuration(*target), false,
      [target](std::string_view v) -> absl::Status {
        absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(v);
        if (!d.ok()) return absl::InvalidArgumentError("want a duration such as 15s or 1m30s");
        *target = *d;
        return absl::OkStatus();
      });
}

void FlagSet::StringList(std::string_view name, std::vector<std::string>* target,
                         std::string_view help) {
  Add(std::string(name), std::string(help), Join(*target), false, [target](std::string_view v) {
    target->clear();
    while (!v.empty()) {
      size_t comma = v.find(',');
      std::string_view part = v.substr(0, comma);
      if (!part.empty()) target->emplace_back(part);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
    return absl::OkStatus();
  });
}

void FlagSet::StringArray(std::string_view name, std::vector<std::string>* target,
                          std::string_view help) {
  Add(
      std::string(name), std::string(help), Join(*target), false,
      [target](std::string_view v) {
        target->emplace_back(v);
        return absl::OkStatus();
      },
      [target] { target->clear(); });
}

void FlagSet::Func(std::string_view name, std::string_view help, std::string default_text,
                   std::function<absl::Status(std::string_view)> set) {
  Add(std::string(name), std::string(help), std::move(default_text), false, std::move(set));
}

absl::Status FlagSet::Parse(int argc, const char* const* argv,
                            std::vector<std::string>* positional) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args, positional);
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positional) {
  return ParseArgs(args, Mode::kAll, positional);
}

absl::Status FlagSet::ParseKnown(std::vector<std::string>& args) {
  std::vector<std::string> rest;
  BASALT_RETURN_IF_ERROR(ParseArgs(args, Mode::kKnown, &rest));
  args = std::move(rest);
  return absl::OkStatus();
}

absl::Status FlagSet::ParseArgs(const std::vector<std::string>& args, Mode mode,
                                std::vector<std::string>* rest) {
  auto keep = [&](std::string_view arg) -> absl::Status {
    if (rest == nullptr) {
      return absl::InvalidArgumentError(fmt::format("unexpected argument \"{}\"", arg));
    }
    rest->emplace_back(arg);
    return absl::OkStatus();
  };
  std::set<std::string_view> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      // kKnown leaves the `--` itself to the next parser, which ends its flags there too.
      for (size_t j = mode == Mode::kKnown ? i : i + 1; j < args.size(); ++j) {
        BASALT_RETURN_IF_ERROR(keep(args[j]));
      }
      return absl::OkStatus();
    }
    if (arg.size() < 2 || arg[0] != '-') {
      BASALT_RETURN_IF_ERROR(keep(arg));
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      if (mode == Mode::kKnown) {
        rest->emplace_back(arg);
        continue;
      }
      if (name == "help" || name == "h") return absl::CancelledError("help requested");
      return absl::InvalidArgumentError(fmt::format("unknown flag --{}", name));
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (flag->is_bool) {
      value = "true";
    } else {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(fmt::format("flag --{} needs a value", name));
      }
      value = args[++i];
    }
    if (flag->reset && seen.insert(flag->name).second) flag->reset();
    if (absl::Status s = flag->set(value); !s.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("invalid value \"{}\" for flag --{}: {}", value, name, MessageOf(s)));
    }
  }
  return absl::OkStatus();
}

std::string FlagSet::Usage() const {
  return fmt::format("Usage of {}:\n", program_.empty() ? "this program" : program_) + FlagsUsage();
}

std::string FlagSet::FlagsUsage() const {
  std::string out;
  for (const Flag& f : flags_) {
    out += fmt::format("  --{}{}\n        {} (default \"{}\")\n", f.name, f.is_bool ? "" : " value",
                       f.help, f.default_value);
  }
  return out;
}

}  // namespace basalt
