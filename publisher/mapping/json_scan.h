// JSON scanning without a document tree, for the table-less path: one
// pass over a JSON object that reports each top-level member's key and the raw
// text of its value, and decodes string values. Pure.
//
// The whole text is validated as RFC 8259 JSON (strings must be valid UTF-8), so a
// raw value handed on is itself valid JSON, verbatim: what outbox_emit() wrote,
// which is jsonb's text form, the form a jsonb column of a table row has too.
#ifndef PUBLISHER_MAPPING_JSON_SCAN_H_
#define PUBLISHER_MAPPING_JSON_SCAN_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace publisher {

enum class JsonKind { kString, kNumber, kObject, kArray, kBoolean, kNull };

struct JsonMember {
  // The key as written between its quotes (escapes not decoded), and whether it
  // holds any escape (then compare it after JsonDecodeString).
  absl::string_view key;
  bool key_escaped = false;
  JsonKind kind = JsonKind::kNull;
  absl::string_view raw;  // The value's text; a string's includes its quotes.
};

// Calls `member` for each member of the object `text` (surrounding whitespace
// allowed), in order; duplicates are reported as they come. kInvalidArgument
// saying where, if `text` is not one valid JSON object; `member` may have been
// called for the members before the fault.
[[nodiscard]] absl::Status ScanJsonObject(
    absl::string_view text, absl::FunctionRef<void(const JsonMember&)> member);

// Appends the decoded text of a string's contents (between its quotes, as
// ScanJsonObject validated it) to `out`.
void JsonDecodeString(absl::string_view quoted_contents, std::string* out);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_JSON_SCAN_H_
