// libpq connection strings: both forms libpq accepts ("host=... dbname=..." and
// "postgresql://user@host/db?..."), parsed by libpq itself so that every rule of
// its grammar (quoting, escapes, PG* environment fallbacks) holds unchanged.
#ifndef CDC_CONNINFO_H_
#define CDC_CONNINFO_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cdc {

// Keyword/value pairs explicitly set in a conninfo string or URI, in libpq's order.
using ConnParams = std::vector<std::pair<std::string, std::string>>;

// Parses `conninfo` ("" = nothing set: libpq will use PG* variables and defaults).
// kInvalidArgument with libpq's own message when it is malformed.
[[nodiscard]] absl::StatusOr<ConnParams> ParseConninfo(absl::string_view conninfo);

// Returns `params` with `key` set to `value`, replacing any earlier setting.
ConnParams WithParam(ConnParams params, absl::string_view key, absl::string_view value);

// The conninfo for logs: every password replaced by "********". A string that does
// not parse is shown only as "<unparsable conninfo>", since it may hold a secret.
std::string RedactConninfo(absl::string_view conninfo);

}  // namespace cdc

#endif  // CDC_CONNINFO_H_
