// Conninfo parsing and redaction on top of PQconninfoParse.
#include "cdc/postgres/conninfo.h"

#include <libpq-fe.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace cdc {

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

std::string RedactConninfo(absl::string_view conninfo) {
  absl::StatusOr<ConnParams> params = ParseConninfo(conninfo);
  if (!params.ok()) return "<unparsable conninfo>";
  std::vector<std::string> parts;
  for (const auto& [k, v] : *params) {
    parts.push_back(absl::StrCat(k, "=", k == "password" ? "********" : v));
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace cdc
