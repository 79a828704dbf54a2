// The hand-written envelope against the protobuf library: the same bytes where
// the library's are deterministic (no map), and the same message parsed back.
#include "publisher/mapping/envelope_writer.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"

namespace publisher {
namespace {

// What the library writes for the same fields (created_at and source always set).
std::string LibraryBytes(const EnvelopeFields& f) {
  std::string out;
  EXPECT_TRUE(ToEnvelope(f).SerializeToString(&out));
  return out;
}

EnvelopeFields Typical() {
  EnvelopeFields f;
  f.id = "7d3f1b2c-0d9e-4b7a-9c1e-2f0a8b6d4e51";
  f.aggregate_type = "order";
  f.aggregate_id = "o-42";
  f.event_type = "OrderPaid";
  f.payload = R"({"amount": 1250, "currency": "EUR"})";
  f.content_type = "application/json";
  f.created_at = absl::FromUnixMicros(1'790'000'000'123'456);
  f.lsn = 0x1A2B3C4D;
  f.commit_lsn = 0x1A2B3D00;
  f.xid = 771;
  f.commit_time = absl::FromUnixMicros(1'790'000'000'124'000);
  f.database = "shop";
  f.schema = "public";
  f.table = "outbox";
  return f;
}

TEST(EnvelopeWriterTest, WritesTheLibrarysBytes) {
  EnvelopeFields f = Typical();
  std::string out;
  WriteEnvelope(f, &out);
  EXPECT_EQ(out, LibraryBytes(f));
}

TEST(EnvelopeWriterTest, LeavesOutDefaultsAsTheLibraryDoes) {
  EnvelopeFields f;  // Every string empty, every number zero, both times at 1970.
  std::string out;
  WriteEnvelope(f, &out);
  EXPECT_EQ(out, LibraryBytes(f));
  f.id = "x";
  f.commit_time = absl::FromUnixMicros(5);  // Nanos only.
  WriteEnvelope(f, &out);
  EXPECT_EQ(out, LibraryBytes(f));
}

TEST(EnvelopeWriterTest, ExtremeNumbersAndLongFields) {
  EnvelopeFields f = Typical();
  f.lsn = ~uint64_t{0};
  f.commit_lsn = uint64_t{1} << 63;
  f.xid = ~uint32_t{0};
  f.created_at = absl::FromUnixMicros(-1'234'567);  // Before 1970: negative seconds.
  f.commit_time = absl::FromUnixSeconds(253'402'300'799);  // 9999-12-31.
  std::string big(70'000, 'p');                            // A three-byte length.
  std::string mid(200, 'm');                               // A two-byte length.
  f.payload = big;
  f.event_type = mid;
  std::string out;
  WriteEnvelope(f, &out);
  EXPECT_EQ(out, LibraryBytes(f));
}

TEST(EnvelopeWriterTest, HeadersParseBackAsTheMap) {
  EnvelopeFields f = Typical();
  std::vector<std::pair<std::string, std::string>> headers = {
      {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
      {"empty", ""},
      {"", "empty key"},
      {"long", std::string(300, 'h')}};
  f.headers = headers;
  std::string out;
  WriteEnvelope(f, &out);
  outbox::v1::Envelope parsed, expected;
  ASSERT_TRUE(parsed.ParseFromString(out));
  ASSERT_TRUE(expected.ParseFromString(LibraryBytes(f)));
  EXPECT_EQ(parsed.DebugString(), expected.DebugString());
  ASSERT_EQ(parsed.headers_size(), 4);
  EXPECT_EQ(parsed.headers().at("long"), std::string(300, 'h'));
  EXPECT_EQ(parsed.headers().at(""), "empty key");
  EXPECT_EQ(out.size(), LibraryBytes(f).size());
}

TEST(EnvelopeWriterTest, ReusingTheStringReplacesItsContent) {
  EnvelopeFields f = Typical();
  std::string out(5000, 'z');
  WriteEnvelope(f, &out);
  EXPECT_EQ(out, LibraryBytes(f));
}

}  // namespace
}  // namespace publisher
