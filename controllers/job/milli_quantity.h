#pragma once
// Exact resource arithmetic in milli-units, for PodGroup minResources.
//
// A stop-gap until common/resource/quantity.h is available to the controllers: quantities are
// parsed with the Kubernetes grammar (decimal SI n/u/m/k/M/G/T/P/E, binary SI Ki..Ei, decimal
// exponents e/E) into an exact int64 count of thousandths, rounding a sub-milli remainder up
// as Kubernetes does for MilliValue(). Values beyond int64 milli-units (about 9.2e15 units,
// i.e. 8 PiB of memory) are rejected rather than wrapped. No floating point.
//
// Thread-compatible value helpers.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/util/json.h"

namespace basalt::controllers {

// Parses a Kubernetes quantity ("500m", "2", "1.5Gi", "1e3") into milli-units.
absl::StatusOr<int64_t> ParseMilliQuantity(std::string_view text);
// Reads a quantity from JSON: a string as above, or an integer number of units.
absl::StatusOr<int64_t> MilliQuantityFromJson(const json::Value& v);
// Formats milli-units: whole units print as an integer ("2", "68719476736"), others with the
// "m" suffix ("1500m"). Both forms parse back to the same value.
std::string FormatMilliQuantity(int64_t milli);

// A ResourceList in milli-units, ordered by resource name.
using MilliResourceList = std::map<std::string, int64_t>;

// Reads a ResourceList object ({"cpu": "500m", "memory": "1Gi"}); a null pointer is empty.
absl::StatusOr<MilliResourceList> ParseMilliResourceList(const json::Value* list);
// a += b, key by key. Returns kOutOfRange if a sum leaves the int64 range.
absl::Status AddInto(MilliResourceList& a, const MilliResourceList& b);
// Element-wise max, for init containers.
void MaxInto(MilliResourceList& a, const MilliResourceList& b);
// Writes the list as a JSON object of quantity strings.
json::Value ToJson(const MilliResourceList& list, json::Allocator& alloc);

}  // namespace basalt::controllers
