#pragma once
// Converts a Kubernetes manifest written in YAML (or JSON, a subset of YAML) into JSON text, as
// `kubectl create -f` does before sending it: mappings become objects, sequences arrays, and
// plain scalars are typed by YAML 1.1's core rules (null/~, true/false, integers, floats);
// quoted scalars stay strings. Exactly one document is accepted (vcctl job run submits one
// Job). Errors name the line and column. Pure functions; thread-safe.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace basalt::cli {

// JSON text of the single YAML document in `yaml`. kInvalidArgument for a syntax error, an
// empty input, more than one document, or a top level that is not a mapping.
absl::StatusOr<std::string> YamlToJson(std::string_view yaml);

}  // namespace basalt::cli
