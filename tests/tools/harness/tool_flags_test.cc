#include "tools/harness/tool_flags.h"

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, max_tx_rows, 1, "a dashed flag");
ABSL_FLAG(std::string, delivery, "at-least-once", "a flag whose value has dashes");
ABSL_FLAG(bool, steady_only, false, "a dashed boolean");

namespace harness {
namespace {

using ::testing::ElementsAre;

TEST(ToolFlagsTest, DashesInAFlagsNameBecomeUnderscoresButNotInItsValue) {
  EXPECT_EQ(UnderscoredFlag("--max-tx-rows=5"), "--max_tx_rows=5");
  EXPECT_EQ(UnderscoredFlag("--max-tx-rows"), "--max_tx_rows");
  EXPECT_EQ(UnderscoredFlag("-steady-only"), "-steady_only");
  EXPECT_EQ(UnderscoredFlag("--delivery=exactly-once"), "--delivery=exactly-once");
  EXPECT_EQ(UnderscoredFlag("exactly-once"), "exactly-once");
  EXPECT_EQ(UnderscoredFlag("--"), "--");
}

TEST(ToolFlagsTest, ParsesDashedFlagsAndKeepsWhatFollowsTheDoubleDash) {
  std::vector<std::string> args = {
      "tool",          "--max-tx-rows", "7",  "--delivery",       "exactly-once",
      "--steady-only", "left",          "--", "--publisher-flag", "value-with-dashes"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ToolArgs parsed = ParseToolFlags(static_cast<int>(argv.size()), argv.data(), "tool");
  EXPECT_EQ(absl::GetFlag(FLAGS_max_tx_rows), 7);
  EXPECT_EQ(absl::GetFlag(FLAGS_delivery), "exactly-once");
  EXPECT_TRUE(absl::GetFlag(FLAGS_steady_only));
  EXPECT_THAT(parsed.positional, ElementsAre("left"));
  EXPECT_THAT(parsed.passed_on, ElementsAre("--publisher-flag", "value-with-dashes"));
}

}  // namespace
}  // namespace harness
