// The flag table's code, on a table of its own: values from the environment and
// the command line (which wins), booleans with and without a value, refusals that
// say where a value came from, sizes and --help.
#include "common/flag_table.h"

#include <map>

#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace common {
namespace {

using ::testing::HasSubstr;

struct Options {
  int64_t count = 3;
  bool loud = false;
  int64_t size = int64_t{16} << 20;
};

const FlagTable<Options>& Table() {
  static const auto* table = new FlagTable<Options>({
      {"count", "Numbers", "N", "how many",
       [](Options& o, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(o.count, ParseFlagPositive("count", v));
         return absl::OkStatus();
       },
       [](const Options& o) { return absl::StrCat(o.count); }},
      {"loud", "Manners", "", "speak up",
       [](Options& o, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(o.loud, ParseFlagBool("loud", v));
         return absl::OkStatus();
       },
       [](const Options& o) { return ShowBool(o.loud); }},
      {"size", "Numbers", "SIZE", "how big",
       [](Options& o, absl::string_view v) -> absl::Status {
         absl::StatusOr<int64_t> n = ParseByteSize(v);
         if (!n.ok()) return BadFlagValue("size", v, n.status().message());
         o.size = *n;
         return absl::OkStatus();
       },
       [](const Options& o) { return ShowBytes(o.size); }},
  });
  return *table;
}

// Parses `args` over `env` as a program would: the table's flags, nothing else.
absl::StatusOr<Options> Parse(std::vector<std::string> args,
                              std::map<std::string, std::string> env = {}) {
  FlagValues given;
  Table().TakeEnvironment(
      [&](const std::string& name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      given);
  for (size_t i = 0; i < args.size(); ++i) {
    ASSIGN_OR_RETURN(bool taken, Table().TakeArgument(args, &i, given));
    if (!taken) return absl::InvalidArgumentError("not a flag: " + args[i]);
  }
  Options o;
  RETURN_IF_ERROR(Table().Apply(given, o));
  return o;
}

TEST(FlagTableTest, BothSpellingsAndTheEnvironment) {
  EXPECT_EQ(Parse({"--count", "7"})->count, 7);
  EXPECT_EQ(Parse({"--count=8"})->count, 8);
  EXPECT_EQ(Parse({}, {{"OUTBOX_COUNT", "9"}})->count, 9);
  EXPECT_EQ(Parse({})->count, 3);
  EXPECT_FALSE(Parse({"--other"}).ok());
}

TEST(FlagTableTest, TheCommandLineWinsEvenOverAValueItWouldRefuse) {
  EXPECT_EQ(Parse({"--count", "5"}, {{"OUTBOX_COUNT", "x"}})->count, 5);
  absl::StatusOr<Options> bad = Parse({}, {{"OUTBOX_COUNT", "x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "invalid value \"x\" for --count: expected a positive integer (from "
            "OUTBOX_COUNT)");
  EXPECT_EQ(Parse({"--count", "0"}).status().message(),
            "invalid value \"0\" for --count: expected a positive integer");
}

TEST(FlagTableTest, ABooleanTakesAValueOnlyWhenTheNextArgumentIsOne) {
  EXPECT_TRUE(Parse({"--loud"})->loud);
  EXPECT_FALSE(Parse({"--loud", "false"})->loud);
  EXPECT_FALSE(Parse({"--loud=off"})->loud);
  absl::StatusOr<Options> o = Parse({"--loud", "--count", "4"});
  EXPECT_TRUE(o->loud);
  EXPECT_EQ(o->count, 4);
  EXPECT_FALSE(Parse({"--loud=maybe"}).ok());
  EXPECT_THAT(Parse({"--count"}).status().message(), HasSubstr("--count needs a value"));
}

TEST(FlagTableTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("1GB"), int64_t{1} << 30);
  EXPECT_EQ(*ParseByteSize("1 gib"), int64_t{1} << 30);
  EXPECT_EQ(*ParseByteSize("64kB"), 64 * 1024);
  EXPECT_EQ(*ParseByteSize("2TB"), int64_t{2} << 40);
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(*ParseByteSize("10B"), 10);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("GB").ok());
  EXPECT_FALSE(ParseByteSize("1.5GB").ok());
  EXPECT_FALSE(ParseByteSize("99999999999TB").ok());
}

TEST(FlagTableTest, ShownSizesReadBackAsTheSameNumber) {
  EXPECT_EQ(ShowBytes(int64_t{1} << 30), "1GiB");
  EXPECT_EQ(ShowBytes(int64_t{16} << 20), "16MiB");
  EXPECT_EQ(ShowBytes(3072), "3KiB");
  EXPECT_EQ(ShowBytes(1500), "1500B");
  EXPECT_EQ(ShowBytes(0), "0B");
  for (int64_t n :
       {int64_t{1} << 30, int64_t{3} << 10, int64_t{1500}, int64_t{5} << 40}) {
    EXPECT_EQ(*ParseByteSize(ShowBytes(n)), n) << ShowBytes(n);
  }
  EXPECT_EQ(ShowBool(true), "true");
  EXPECT_EQ(ShowDuration(absl::Seconds(10)), "10s");
}

TEST(FlagTableTest, HelpGroupsTheFlagsAndShowsDefaultsAsAPersonReadsThem) {
  std::string help = RenderFlagHelp(Table().HelpLines(Options()));
  EXPECT_EQ(help,
            "Numbers:\n"
            "  --count N                   how many [3]\n"
            "  --size SIZE                 how big [16MiB]\n"
            "\n"
            "Manners:\n"
            "  --loud                      speak up [false]\n");
  // Long help wraps, indented to its column.
  std::string words;
  for (int i = 0; i < 30; ++i) absl::StrAppend(&words, i == 0 ? "" : " ", "word");
  std::string wrapped = RenderFlagHelp({{"G", "--w", words, "x"}});
  for (absl::string_view line : absl::StrSplit(wrapped, '\n')) {
    EXPECT_LE(line.size(), 90u) << wrapped;
  }
  EXPECT_THAT(wrapped, HasSubstr("\n" + std::string(30, ' ') + "word"));
  EXPECT_THAT(wrapped, HasSubstr("word [x]\n"));
  // A usage longer than the column puts the help on the next line.
  std::string long_usage =
      RenderFlagHelp({{"G", "--a-very-long-flag-name VALUE", "h", ""}});
  EXPECT_EQ(long_usage,
            "G:\n  --a-very-long-flag-name VALUE\n" + std::string(30, ' ') + "h\n");
}

}  // namespace
}  // namespace common
