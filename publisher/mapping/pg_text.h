// PostgreSQL's text output of the values the mapper reads from pgoutput's text
// tuples: timestamps (ISO DateStyle) and bytea (hex). Pure.
#ifndef PUBLISHER_MAPPING_PG_TEXT_H_
#define PUBLISHER_MAPPING_PG_TEXT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace publisher {

// PostgreSQL's text output of timestamptz/timestamp (ISO DateStyle), e.g.
// "2026-01-02 03:04:05.123456+00" or "...+05:30"; no offset means UTC.
[[nodiscard]] absl::StatusOr<absl::Time> ParsePgTimestamp(absl::string_view text);

// bytea's hex output ("\x0aff") to raw bytes.
[[nodiscard]] absl::StatusOr<std::string> DecodeByteaHex(absl::string_view text);

}  // namespace publisher

#endif  // PUBLISHER_MAPPING_PG_TEXT_H_
