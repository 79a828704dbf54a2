#include "common/log.h"

#include <nlohmann/json.hpp>

#include "gtest/gtest.h"

namespace common {
namespace {

const absl::Time kTs =
    absl::FromUnixMillis(1'767'323'045'123);  // 2026-01-02T03:04:05.123Z

TEST(LogTest, JsonLineHasTsLevelMsgAndFields) {
  Logger log(LogFormat::kJson, LogLevel::kInfo);
  std::string line = log.Format(
      kTs, LogLevel::kWarn, "broker \"down\"",
      {{"in_flight", int64_t{5}}, {"lsn", std::string("0/1A")}, {"ok", false}});
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["ts"], "2026-01-02T03:04:05.123Z");
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["msg"], "broker \"down\"");
  EXPECT_EQ(j["in_flight"], 5);
  EXPECT_EQ(j["lsn"], "0/1A");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("{\"ts\":", 0), 0u) << "ts comes first";
}

TEST(LogTest, InvalidUtf8IsReplacedNotFatal) {
  Logger log(LogFormat::kJson, LogLevel::kInfo);
  std::string line = log.Format(kTs, LogLevel::kInfo, "bad \xff byte", {});
  EXPECT_NO_THROW(nlohmann::json::parse(line));
}

TEST(LogTest, TextLine) {
  Logger log(LogFormat::kText, LogLevel::kInfo);
  EXPECT_EQ(log.Format(kTs, LogLevel::kError, "halted",
                       {{"reason", std::string("too large")}, {"n", uint64_t{3}}}),
            "2026-01-02T03:04:05.123Z error halted reason=\"too large\" n=3");
}

TEST(LogTest, LevelFilters) {
  Logger log(LogFormat::kJson, LogLevel::kWarn);
  EXPECT_FALSE(log.enabled(LogLevel::kInfo));
  EXPECT_TRUE(log.enabled(LogLevel::kError));
}

}  // namespace
}  // namespace common
