// Structured logging: one line per event on stderr, JSON by default
// ({"ts":..., "level":..., "msg":..., fields...}) or human-readable text.
// Operators watch the publisher through these lines, so messages name the problem
// and fields carry the numbers. Thread-safe: librdkafka may log from its threads.
#ifndef COMMON_LOG_H_
#define COMMON_LOG_H_

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace common {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kJson, kText };

absl::string_view LogLevelName(LogLevel level);

using FieldValue = std::variant<std::string, int64_t, uint64_t, double, bool>;
using Field = std::pair<std::string, FieldValue>;

class Logger {
 public:
  // Writes to `out` (not owned), which must outlive the logger.
  Logger(LogFormat format, LogLevel level, std::FILE* out = stderr)
      : format_(format), level_(level), out_(out) {}

  void Log(LogLevel level, absl::string_view msg, const std::vector<Field>& fields = {});
  void Debug(absl::string_view msg, const std::vector<Field>& fields = {}) {
    Log(LogLevel::kDebug, msg, fields);
  }
  void Info(absl::string_view msg, const std::vector<Field>& fields = {}) {
    Log(LogLevel::kInfo, msg, fields);
  }
  void Warn(absl::string_view msg, const std::vector<Field>& fields = {}) {
    Log(LogLevel::kWarn, msg, fields);
  }
  void Error(absl::string_view msg, const std::vector<Field>& fields = {}) {
    Log(LogLevel::kError, msg, fields);
  }

  bool enabled(LogLevel level) const { return level >= level_; }

  // Formats one line without the trailing newline (exposed for tests).
  std::string Format(absl::Time ts, LogLevel level, absl::string_view msg,
                     const std::vector<Field>& fields) const;

 private:
  LogFormat format_;
  LogLevel level_;
  std::FILE* out_;
  std::mutex mu_;
};

}  // namespace common

#endif  // COMMON_LOG_H_
