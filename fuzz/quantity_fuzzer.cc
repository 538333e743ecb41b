// fuzz_quantity: Quantity::Parse and FromJson on arbitrary text.
//
// Invariants checked on every input that parses:
//  - the canonical string parses back to an equal quantity and is a fixed point of
//    Parse -> String (what Basalt writes, it can read again: a canonical string that does not
//    parse would make an object Basalt wrote unreadable to Basalt);
//  - a JSON string holding the same text decodes to the same quantity;
//  - arithmetic, comparison and conversions run without undefined behaviour (the sanitizers
//    check), and negation and subtraction are consistent with the sign.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/resource/quantity.h"
#include "fmt/format.h"
#include "fuzz/fuzz_check.h"
#include "rapidjson/document.h"

using basalt::resource::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Quantity> parsed = Quantity::Parse(text);
  if (parsed.ok()) {
    const Quantity& q = *parsed;
    std::string canonical = q.String();
    absl::StatusOr<Quantity> again = Quantity::Parse(canonical);
    FUZZ_CHECK(again.ok(), fmt::format("\"{}\" parses but its canonical form \"{}\" does not: {}",
                                       text, canonical, again.status().ToString()));
    FUZZ_CHECK(*again == q, fmt::format("\"{}\" -> \"{}\" parses to a different value \"{}\"", text,
                                        canonical, again->String()));
    FUZZ_CHECK(again->String() == canonical,
               fmt::format("canonical \"{}\" of \"{}\" is not stable: prints \"{}\"", canonical,
                           text, again->String()));

    // The same text as a JSON string reads the same.
    rapidjson::Document doc;
    doc.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), doc.GetAllocator());
    absl::StatusOr<Quantity> from_json = Quantity::FromJson(doc);
    FUZZ_CHECK(from_json.ok() && *from_json == q,
               fmt::format("JSON string \"{}\" does not decode like Parse", text));

    // Arithmetic and conversions: no UB, and the results make sense.
    Quantity neg = q.Neg();
    FUZZ_CHECK(neg.Sign() == -q.Sign(), fmt::format("Neg of \"{}\" has the wrong sign", canonical));
    FUZZ_CHECK(q.Sub(q).IsZero(), fmt::format("\"{}\" - itself is not zero", canonical));
    Quantity sum = q.Add(*again);
    FUZZ_CHECK(sum.Sign() == q.Sign(), fmt::format("\"{}\" + itself changed sign", canonical));
    (void)q.MulInt(3);
    (void)q.MulInt(-1000000007);
    (void)q.Value();
    (void)q.MilliValue();
    (void)q.ScaledValue(-9);
    (void)q.ScaledValue(9);
    (void)q.AsApproximateDouble();
    (void)sum.String();
    FUZZ_CHECK(q.Cmp(neg) == q.Sign(),
               fmt::format("Cmp(\"{}\", its negation) is wrong", canonical));
  }

  // The same bytes as a JSON document: numbers (8, 0.5, 1e400) and strings.
  rapidjson::Document json;
  json.Parse(text.data(), text.size());
  if (!json.HasParseError()) {
    absl::StatusOr<Quantity> q = Quantity::FromJson(json);
    if (q.ok()) {
      std::string canonical = q->String();
      absl::StatusOr<Quantity> again = Quantity::Parse(canonical);
      FUZZ_CHECK(again.ok() && *again == *q,
                 fmt::format("JSON {} decodes to \"{}\", which does not parse back to it", text,
                             canonical));
    }
  }
  return 0;
}
