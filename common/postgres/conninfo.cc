// Conninfo parsing and redaction on top of PQconninfoParse.
#include "common/postgres/conninfo.h"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace common {

absl::StatusOr<ConnParams> ParseConninfo(absl::string_view conninfo) {
  std::string text(conninfo);
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(text.c_str(), &err);
  if (options == nullptr) {
    std::string why = err != nullptr
                          ? std::string(absl::StripTrailingAsciiWhitespace(err))
                          : "out of memory";
    PQfreemem(err);
    return absl::InvalidArgumentError(
        absl::StrCat("invalid PostgreSQL connection string: ", why));
  }
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> owner(options,
                                                                     PQconninfoFree);
  ConnParams params;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val != nullptr) params.emplace_back(o->keyword, o->val);
  }
  return params;
}

ConnParams WithParam(ConnParams params, absl::string_view key, absl::string_view value) {
  for (auto& [k, v] : params) {
    if (k == key) {
      v = std::string(value);
      return params;
    }
  }
  params.emplace_back(std::string(key), std::string(value));
  return params;
}

ConnParams WithDefaults(ConnParams params, const ConnParams& defaults) {
  for (const auto& [key, value] : defaults) {
    bool set = false;
    for (const auto& p : params) set = set || p.first == key;
    if (!set) params.emplace_back(key, value);
  }
  return params;
}

const ConnParams& SocketTimeoutDefaults() {
  static const ConnParams* defaults = new ConnParams{{"keepalives", "1"},
                                                     {"keepalives_idle", "30"},
                                                     {"keepalives_interval", "10"},
                                                     {"keepalives_count", "3"},
                                                     {"tcp_user_timeout", "30000"}};
  return *defaults;
}

std::string FormatConninfo(const ConnParams& params) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : params) {
    std::string quoted = absl::StrReplaceAll(v, {{"\\", "\\\\"}, {"'", "\\'"}});
    parts.push_back(absl::StrCat(k, "='", quoted, "'"));
  }
  return absl::StrJoin(parts, " ");
}

absl::StatusOr<std::vector<std::string>> SplitHosts(absl::string_view conninfo) {
  absl::StatusOr<ConnParams> params = ParseConninfo(conninfo);
  if (!params.ok()) return params.status();
  std::vector<std::string> hosts, ports, addrs;
  for (const auto& [k, v] : *params) {
    if (k == "host") hosts = absl::StrSplit(v, ',');
    if (k == "port") ports = absl::StrSplit(v, ',');
    if (k == "hostaddr") addrs = absl::StrSplit(v, ',');
  }
  size_t n = std::max({hosts.size(), addrs.size(), size_t{1}});
  if (n == 1) return std::vector<std::string>{std::string(conninfo)};
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    ConnParams one = WithParam(*params, "target_session_attrs", "any");
    // libpq: one port for all hosts, or one per host.
    if (!hosts.empty())
      one = WithParam(one, "host", hosts[std::min(i, hosts.size() - 1)]);
    if (!addrs.empty())
      one = WithParam(one, "hostaddr", addrs[std::min(i, addrs.size() - 1)]);
    if (!ports.empty())
      one = WithParam(one, "port",
                      ports[ports.size() == 1 ? 0 : std::min(i, ports.size() - 1)]);
    out.push_back(FormatConninfo(one));
  }
  return out;
}

std::string RedactConninfo(absl::string_view conninfo) {
  absl::StatusOr<ConnParams> params = ParseConninfo(conninfo);
  if (!params.ok()) return "<unparsable conninfo>";
  std::vector<std::string> parts;
  for (const auto& [k, v] : *params) {
    parts.push_back(absl::StrCat(k, "=", k == "password" ? "********" : v));
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace common
