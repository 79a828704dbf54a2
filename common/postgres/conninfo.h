// libpq connection strings: both forms libpq accepts ("host=... dbname=..." and
// "postgresql://user@host/db?..."), parsed by libpq itself so that every rule of
// its grammar (quoting, escapes, PG* environment fallbacks) holds unchanged.
#ifndef COMMON_POSTGRES_CONNINFO_H_
#define COMMON_POSTGRES_CONNINFO_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace common {

// Keyword/value pairs explicitly set in a conninfo string or URI, in libpq's order.
using ConnParams = std::vector<std::pair<std::string, std::string>>;

// Parses `conninfo` ("" = nothing set: libpq will use PG* variables and defaults).
// kInvalidArgument with libpq's own message when it is malformed.
[[nodiscard]] absl::StatusOr<ConnParams> ParseConninfo(absl::string_view conninfo);

// Returns `params` with `key` set to `value`, replacing any earlier setting.
ConnParams WithParam(ConnParams params, absl::string_view key, absl::string_view value);

// Returns `params` with each of `defaults` added unless `params` sets that key.
ConnParams WithDefaults(ConnParams params, const ConnParams& defaults);

// What every connection of the publisher gets unless its conninfo says otherwise:
// a peer that goes silent without closing (a NAT or firewall that dropped its
// state, a paused VM) is noticed in bounded time instead of never.
//   keepalives=1, keepalives_idle=30, keepalives_interval=10, keepalives_count=3:
//     an idle connection whose peer is gone fails after about 60 s;
//   tcp_user_timeout=30000: data written to a peer that acknowledges nothing
//     (a standby status update, a query) fails the connection after 30 s.
// TCP only: libpq ignores them on Unix-domain sockets.
const ConnParams& SocketTimeoutDefaults();

// `params` as a key=value conninfo string, each value quoted for libpq.
std::string FormatConninfo(const ConnParams& params);

// One conninfo per host of a multi-host `conninfo` (host=a,b port=p1,p2, or a
// URI with several hosts): the same settings with that host alone (its port and
// hostaddr too) and target_session_attrs=any, to reach each server, standbys
// included. One element when it names one host or none.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> SplitHosts(
    absl::string_view conninfo);

// The conninfo for logs: every password replaced by "********". A string that does
// not parse is shown only as "<unparsable conninfo>", since it may hold a secret.
std::string RedactConninfo(absl::string_view conninfo);

}  // namespace common

#endif  // COMMON_POSTGRES_CONNINFO_H_
