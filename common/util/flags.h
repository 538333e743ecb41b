#pragma once
// FlagSet: the command-line flag parser of every Basalt binary, in the manner of Go's flag
// package (the flags are Volcano's, so their spelling is too):
//
//   basalt::FlagSet flags("vc-scheduler");
//   int workers = 16;
//   flags.Int("bind-workers", &workers, "concurrent pods/binding requests");
//   if (absl::Status s = flags.Parse(argc, argv); !s.ok()) { ... print s and flags.Usage() ... }
//
// Accepted forms: `--name=value`, `-name=value`, `--name value`, `-name value`; a bool flag alone
// means true (`--leader-elect`), otherwise it takes the `=` form (`--leader-elect=false`). `--`
// ends the flags. Each component registers its flags on a FlagSet (client::ClientOptions,
// runtime::RuntimeOptions, ctrlkit::LeaderElectionFlags, the binaries' options); a component
// that parses its flags ahead of the binary's own uses ParseKnown().
//
// Thread-compatible. Registered targets must outlive Parse().

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace basalt {

class FlagSet {
 public:
  explicit FlagSet(std::string program = "") : program_(std::move(program)) {}
  FlagSet(const FlagSet&) = delete;
  FlagSet& operator=(const FlagSet&) = delete;

  // Registers a flag writing into `*target`, whose current value is the default. A later
  // registration of the same name replaces the earlier one.
  void String(std::string_view name, std::string* target, std::string_view help);
  void Int(std::string_view name, int* target, std::string_view help);
  void Int64(std::string_view name, int64_t* target, std::string_view help);
  void Double(std::string_view name, double* target, std::string_view help);
  // true/false, 1/0, t/f, T/F, True/False, TRUE/FALSE, as Go's strconv.ParseBool.
  void Bool(std::string_view name, bool* target, std::string_view help);
  // A Go duration (common/util/duration.h): "15s", "1m30s", "500ms".
  void Duration(std::string_view name, std::chrono::nanoseconds* target, std::string_view help);
  // Comma-separated list (`--controllers=job,queue`); replaces the default.
  void StringList(std::string_view name, std::vector<std::string>* target, std::string_view help);
  // Repeatable (`--scheduler-name=a --scheduler-name=b`): the first occurrence in a Parse
  // replaces the default, later ones append. Values are not split at commas.
  void StringArray(std::string_view name, std::vector<std::string>* target, std::string_view help);
  // A flag with its own setter (Go's flag.Func); `default_text` is shown by Usage(). An error
  // of `set` is reported as `invalid value "<value>" for flag --<name>: <its message>`.
  void Func(std::string_view name, std::string_view help, std::string default_text,
            std::function<absl::Status(std::string_view)> set);

  // Parses argv[1..argc) (or `args`). Non-flag arguments and all after `--` go to `positional`
  // if given, else are an error. kInvalidArgument naming the flag for an unknown flag
  // ("unknown flag --x"), a missing value ("flag --x needs a value") or a bad one
  // ("invalid value \"v\" for flag --x: not a number"). `--help`/`-h` returns kCancelled (the
  // caller prints Usage() and exits 0) unless the binary registered a "help" flag.
  absl::Status Parse(int argc, const char* const* argv,
                     std::vector<std::string>* positional = nullptr);
  absl::Status Parse(const std::vector<std::string>& args,
                     std::vector<std::string>* positional = nullptr);
  // Parses only the registered flags and takes them out of `args`; everything else (other
  // flags with their values, positional arguments, `--` and all after it) stays, in order, for
  // the next parser. On error `args` is unchanged.
  absl::Status ParseKnown(std::vector<std::string>& args);

  // "Usage of <program>:" and FlagsUsage().
  std::string Usage() const;
  // Two lines per flag: `  --name value` and its help with the default.
  std::string FlagsUsage() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_value;
    bool is_bool = false;
    // Reports only the reason ("not a number"); Parse adds the flag and the value.
    std::function<absl::Status(std::string_view)> set;
    // Called before the first value of a Parse (StringArray), if set.
    std::function<void()> reset;
  };
  enum class Mode { kAll, kKnown };

  void Add(std::string name, std::string help, std::string default_value, bool is_bool,
           std::function<absl::Status(std::string_view)> set,
           std::function<void()> reset = nullptr);
  const Flag* Find(std::string_view name) const;
  absl::Status ParseArgs(const std::vector<std::string>& args, Mode mode,
                         std::vector<std::string>* rest);

  std::string program_;
  std::vector<Flag> flags_;
};

// For an options struct with `void AddFlags(FlagSet&)` (its members are the defaults):
// ParseKnownFlags applies the struct's flags in `args` over `options` and takes them out
// (FlagSet::ParseKnown); FlagsUsageOf is the help text of its flags with their defaults.
template <typename Options>
absl::StatusOr<Options> ParseKnownFlags(std::vector<std::string>& args, Options options) {
  FlagSet flags;
  options.AddFlags(flags);
  if (absl::Status s = flags.ParseKnown(args); !s.ok()) return s;
  return options;
}
template <typename Options>
std::string FlagsUsageOf(Options defaults = {}) {
  FlagSet flags;
  defaults.AddFlags(flags);
  return flags.FlagsUsage();
}

}  // namespace basalt
