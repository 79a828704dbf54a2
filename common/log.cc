// Logger: JSON lines through nlohmann::json (correct escaping of any value), or text.
#include "common/log.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace common {

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::string Logger::Format(absl::Time ts, LogLevel level, absl::string_view msg,
                           const std::vector<Field>& fields) const {
  std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", ts, absl::UTCTimeZone());
  if (format_ == LogFormat::kJson) {
    nlohmann::ordered_json line;
    line["ts"] = time;
    line["level"] = std::string(LogLevelName(level));
    line["msg"] = std::string(msg);
    for (const auto& [key, value] : fields) {
      std::visit([&](const auto& v) { line[key] = v; }, value);
    }
    // Invalid UTF-8 (say, from a corrupt row) is replaced, never fatal.
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string text = absl::StrCat(time, " ", LogLevelName(level), " ", msg);
  for (const auto& [key, value] : fields) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            bool quote = v.empty() || v.find(' ') != std::string::npos;
            absl::StrAppend(&text, " ", key, "=", quote ? "\"" : "", v,
                            quote ? "\"" : "");
          } else if constexpr (std::is_same_v<T, bool>) {
            absl::StrAppend(&text, " ", key, "=", v ? "true" : "false");
          } else {
            absl::StrAppend(&text, " ", key, "=", v);
          }
        },
        value);
  }
  return text;
}

void Logger::Log(LogLevel level, absl::string_view msg,
                 const std::vector<Field>& fields) {
  if (!enabled(level)) return;
  std::string line = Format(absl::Now(), level, msg, fields);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace common
