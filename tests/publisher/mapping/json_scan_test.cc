#include "publisher/mapping/json_scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

struct Seen {
  std::string key;
  bool key_escaped;
  JsonKind kind;
  std::string raw;
};

absl::Status Scan(absl::string_view text, std::vector<Seen>* seen) {
  return ScanJsonObject(text, [&](const JsonMember& m) {
    seen->push_back({std::string(m.key), m.key_escaped, m.kind, std::string(m.raw)});
  });
}

std::string Decoded(absl::string_view raw_string) {
  std::string out;
  JsonDecodeString(raw_string.substr(1, raw_string.size() - 2), &out);
  return out;
}

TEST(JsonScanTest, ReportsEachMemberWithItsValueVerbatim) {
  std::vector<Seen> seen;
  ASSERT_TRUE(Scan(R"( {"s": "a\"b", "n": -1.5e+3, "o": {"x": [1, {"y": null}]},
                       "a": [], "t": true, "f": false, "z": null, "e\u0041": {}} )",
                   &seen)
                  .ok());
  ASSERT_EQ(seen.size(), 8u);
  EXPECT_EQ(seen[0].key, "s");
  EXPECT_EQ(seen[0].kind, JsonKind::kString);
  EXPECT_EQ(seen[0].raw, R"("a\"b")");
  EXPECT_EQ(Decoded(seen[0].raw), "a\"b");
  EXPECT_EQ(seen[1].kind, JsonKind::kNumber);
  EXPECT_EQ(seen[1].raw, "-1.5e+3");
  EXPECT_EQ(seen[2].kind, JsonKind::kObject);
  EXPECT_EQ(seen[2].raw, R"({"x": [1, {"y": null}]})");
  EXPECT_EQ(seen[3].kind, JsonKind::kArray);
  EXPECT_EQ(seen[3].raw, "[]");
  EXPECT_EQ(seen[4].kind, JsonKind::kBoolean);
  EXPECT_EQ(seen[5].raw, "false");
  EXPECT_EQ(seen[6].kind, JsonKind::kNull);
  EXPECT_EQ(seen[7].key, R"(e\u0041)");
  EXPECT_TRUE(seen[7].key_escaped);
  EXPECT_FALSE(seen[0].key_escaped);
}

TEST(JsonScanTest, AnEmptyObjectHasNoMembers) {
  std::vector<Seen> seen;
  EXPECT_TRUE(Scan("{}", &seen).ok());
  EXPECT_TRUE(Scan(" \n{ \t}\r\n", &seen).ok());
  EXPECT_TRUE(seen.empty());
}

TEST(JsonScanTest, RefusesWhatIsNotOneValidObject) {
  for (const char* bad : {
           "",
           "[]",
           "\"s\"",
           "1",
           "{",
           "}",
           "{\"a\"}",
           "{\"a\":}",
           "{\"a\":1,}",
           "{\"a\":1}x",
           "{\"a\":1}{}",
           "{a:1}",
           "{'a':1}",
           "{\"a\":01}",
           "{\"a\":1.}",
           "{\"a\":.5}",
           "{\"a\":1e}",
           "{\"a\":+1}",
           "{\"a\":-}",
           "{\"a\":tru}",
           "{\"a\":nul}",
           "{\"a\":[1,]}",
           "{\"a\":[1 2]}",
           "{\"a\":{\"b\"}}",
           "{\"a\":{\"b\":1]}",
           "{\"a\":[}",
           "{\"a\":\"x}",
           "{\"a\":\"\\x\"}",
           "{\"a\":\"\\u12\"}",
           "{\"a\":\"\\ud800\"}",
           "{\"a\":\"\\udc00\"}",
           "{\"a\":\"\\ud800\\u0041\"}",
           "{\"a\":\"tab\there\"}",
           "{\"a\":\"\xff\"}",
           "{\"a\":\"\xc0\xaf\"}",
           "{\"a\":\"\xed\xa0\x80\"}",
           "{\"a\":\"\xe2\x82\"}",
           "{\"a\":\"\xf4\x90\x80\x80\"}",
           "{\"a\":NaN}",
           "{\"a\":1} //",
       }) {
    std::vector<Seen> seen;
    absl::Status s = Scan(bad, &seen);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("not valid JSON")) << bad;
  }
}

TEST(JsonScanTest, DecodesEscapesAndSurrogatePairsToUtf8) {
  std::vector<Seen> seen;
  ASSERT_TRUE(
      Scan(R"({"k": "\"\\\/\b\f\n\r\t \u00e9 \u20AC \ud83d\ude00 Zoë"})", &seen).ok());
  EXPECT_EQ(Decoded(seen[0].raw), "\"\\/\b\f\n\r\t é € 😀 Zoë");
}

TEST(JsonScanTest, DeepNestingNeedsNoRecursion) {
  std::string deep =
      absl::StrCat("{\"a\": ", std::string(200000, '['), std::string(200000, ']'), "}");
  std::vector<Seen> seen;
  ASSERT_TRUE(Scan(deep, &seen).ok());
  EXPECT_EQ(seen[0].raw.size(), 400000u);
  deep.pop_back();
  deep.pop_back();
  EXPECT_FALSE(Scan(deep + "}", &seen).ok());
}

// Against a full parser: on texts mutated at random from valid ones, the scanner
// accepts exactly the objects nlohmann::json accepts, reports the same members,
// and decodes strings to the same text.
TEST(JsonScanTest, AgreesWithAFullParserOnMutatedTexts) {
  const std::vector<std::string> seeds = {
      R"({"id": "5a9e", "payload": {"total": 12.5, "items": [1, 2, -0.5e-3]}, "h": null})",
      R"({"s": "\u00e9\ud83d\ude00\n", "t": true, "f": false, "a": [[], {}, ""]})",
      "{\"z\": \"Zo\xc3\xab \xe2\x82\xac \xf0\x9f\x98\x80\", \"n\": 0}",
  };
  const std::string alphabet = "{}[]\":,.-+eE0123456789 \\u\"tfnlrsa\xc3\xab\xff\xed";
  std::mt19937 rng(20261204);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string text = seeds[rng() % seeds.size()];
    for (int edits = 1 + rng() % 3; edits > 0; --edits) {
      size_t at = rng() % (text.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + at, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
      }
    }
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    bool full = !j.is_discarded() && j.is_object();
    std::vector<Seen> seen;
    bool ours = Scan(text, &seen).ok();
    ASSERT_EQ(ours, full) << text;
    if (!ours) {
      ++refused;
      continue;
    }
    ++accepted;
    for (const Seen& m : seen) {
      std::string key = m.key;
      if (m.key_escaped) key = Decoded(absl::StrCat("\"", m.key, "\""));
      ASSERT_TRUE(j.contains(key)) << text;
      nlohmann::json value = nlohmann::json::parse(m.raw, nullptr, false);
      ASSERT_FALSE(value.is_discarded()) << m.raw;
      if (m.kind == JsonKind::kString) {
        EXPECT_EQ(Decoded(m.raw), value.get<std::string>()) << text;
      }
    }
  }
  // Both outcomes must have been exercised for the comparison to mean anything.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace publisher
