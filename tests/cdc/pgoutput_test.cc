// Round-trip and malformed-input tests for the pgoutput decoder. Golden bytes
// captured from a real server are in pgoutput_golden_test.cc.
#include "cdc/pgoutput.h"

#include <string>
#include <vector>

#include "cdc/byte_writer.h"
#include "gtest/gtest.h"
#include "cdc/pgoutput_encoder.h"

namespace cdc::pgoutput {
namespace {

using std::string_literals::operator""s;

Value Text(std::string s) { return Value{Value::Kind::kText, std::move(s)}; }
Value Binary(std::string s) { return Value{Value::Kind::kBinary, std::move(s)}; }
Value Null() { return Value{Value::Kind::kNull, ""}; }
Value Toast() { return Value{Value::Kind::kUnchangedToast, ""}; }

struct Sample {
  PgOutputMessage message;
  bool in_stream_block;
};

// One or more instances of every message type, in and out of stream blocks.
std::vector<Sample> Samples() {
  const int64_t t = 786'000'000'123'456;
  return {
      {Begin{Lsn(0x1'0000'0ABC), t, 742}, false},
      {Commit{0, Lsn(0x1'0000'0ABC), Lsn(0x1'0000'0AF0), t}, false},
      {Origin{Lsn(0x5000), "node_a"}, false},
      {Relation{std::nullopt,
                16384,
                "public",
                "outbox",
                'd',
                {{1, "id", 2950, -1}, {0, "payload", 3802, -1}, {0, "n", 1043, 36}}},
       false},
      {Relation{99u, 16384, "", "t", 'f', {}}, true},
      {Type{std::nullopt, 16500, "public", "mood"}, false},
      {Type{7u, 16500, "s", "mood"}, true},
      {Insert{std::nullopt,
              16384,
              {Text("a"), Null(), Binary("\x00\x01\xff"s), Text("ünïcødé ✓"), Text("")}},
       false},
      {Insert{1234u, 16384, {Text("x")}}, true},
      {Update{std::nullopt, 16384, 0, {}, {Text("1"), Toast(), Null()}}, false},
      {Update{
           std::nullopt, 16384, 'K', {Text("old-key"), Null()}, {Text("new"), Text("v")}},
       false},
      {Update{5u, 16384, 'O', {Text("1"), Text("a")}, {Text("1"), Text("b")}}, true},
      {Delete{std::nullopt, 16384, 'K', {Text("1"), Null()}}, false},
      {Delete{9u, 16384, 'O', {Text("1"), Text("all")}}, true},
      {Truncate{
           std::nullopt, Truncate::kCascade | Truncate::kRestartIdentity, {16384, 16390}},
       false},
      {Truncate{3u, 0, {}}, true},
      {Message{std::nullopt, Message::kTransactional, Lsn(0x7777), "outbox", "hello\0x"s},
       false},
      {Message{11u, 0, Lsn(0x7778), "", ""}, true},
      {StreamStart{742, 1}, false},
      {StreamStop{}, true},
      {StreamCommit{742, 0, Lsn(0x9000), Lsn(0x9040), t}, false},
      {StreamAbort{742, 743}, false},
  };
}

TEST(PgOutputTest, EveryMessageRoundTrips) {
  std::vector<Sample> samples = Samples();
  std::vector<bool> seen(std::variant_size_v<PgOutputMessage>);
  for (const Sample& s : samples) {
    std::string bytes = Encode(s.message);
    absl::StatusOr<PgOutputMessage> got = Decode(bytes, {s.in_stream_block});
    ASSERT_TRUE(got.ok()) << MessageName(s.message) << ": " << got.status();
    EXPECT_EQ(*got, s.message) << MessageName(s.message);
    EXPECT_EQ(Encode(*got), bytes) << MessageName(s.message);
    seen[s.message.index()] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_TRUE(seen[i]) << "no sample of type " << i;
}

TEST(PgOutputTest, KnownBytesOfBegin) {
  // 'B', final_lsn 0/16B3748, commit_time 1, xid 0x2A: written out by hand.
  std::string bytes = "B\0\0\0\0\x01\x6b\x37\x48\0\0\0\0\0\0\0\x01\0\0\0\x2a"s;
  absl::StatusOr<PgOutputMessage> got = Decode(bytes, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::get<Begin>(*got), (Begin{Lsn(0x16B3748), 1, 42}));
}

TEST(PgOutputTest, TruncationAtEveryOffsetIsDataLoss) {
  for (const Sample& s : Samples()) {
    std::string bytes = Encode(s.message);
    for (size_t n = 0; n < bytes.size(); ++n) {
      absl::StatusOr<PgOutputMessage> got =
          Decode(bytes.substr(0, n), {s.in_stream_block});
      ASSERT_FALSE(got.ok()) << MessageName(s.message) << " cut to " << n << " bytes";
      EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
      if (n > 0) {
        EXPECT_NE(got.status().message().find(std::string(MessageName(s.message))),
                  absl::string_view::npos)
            << got.status();
        EXPECT_NE(got.status().message().find("offset"), absl::string_view::npos)
            << got.status();
      }
    }
  }
}

TEST(PgOutputTest, TrailingBytesAreDataLoss) {
  for (const Sample& s : Samples()) {
    std::string bytes = Encode(s.message) + "Z";
    absl::StatusOr<PgOutputMessage> got = Decode(bytes, {s.in_stream_block});
    ASSERT_FALSE(got.ok()) << MessageName(s.message);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(got.status().message().find("trailing"), absl::string_view::npos);
  }
}

TEST(PgOutputTest, UnknownTagIsDataLoss) {
  absl::StatusOr<PgOutputMessage> got = Decode("Z123", {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(got.status().message(),
            "unknown pgoutput message type 0x5a at byte offset 0");
  EXPECT_EQ(Decode("", {}).status().code(), absl::StatusCode::kDataLoss);
}

TEST(PgOutputTest, TwoPhaseMessagesAreUnimplemented) {
  for (char tag : {'b', 'P', 'K', 'r', 'p'}) {
    absl::StatusOr<PgOutputMessage> got = Decode(std::string(1, tag) + "xxxx", {});
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented) << tag;
  }
}

TEST(PgOutputTest, UnknownTupleKindNamesColumnAndOffset) {
  ByteWriter w;
  w.U8('I').BE32(16384).U8('N').BE16(2).U8('n').U8('x');
  absl::StatusOr<PgOutputMessage> got = Decode(w.data(), {});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(
      got.status().message(),
      "pgoutput Insert message: unknown tuple column kind 0x78 for column 1 at byte "
      "offset 9");
}

TEST(PgOutputTest, WrongTupleTagsAreDataLoss) {
  ByteWriter insert;
  insert.U8('I').BE32(1).U8('K').BE16(0);
  EXPECT_EQ(Decode(insert.data(), {}).status().code(), absl::StatusCode::kDataLoss);
  ByteWriter update;
  update.U8('U').BE32(1).U8('X').BE16(0);
  EXPECT_EQ(Decode(update.data(), {}).status().code(), absl::StatusCode::kDataLoss);
  ByteWriter update_old_then_not_new;
  update_old_then_not_new.U8('U').BE32(1).U8('K').BE16(0).U8('K').BE16(0);
  EXPECT_EQ(Decode(update_old_then_not_new.data(), {}).status().code(),
            absl::StatusCode::kDataLoss);
  ByteWriter del;
  del.U8('D').BE32(1).U8('N').BE16(0);
  EXPECT_EQ(Decode(del.data(), {}).status().code(), absl::StatusCode::kDataLoss);
}

// Lengths and counts near 2^32 or 2^16 must fail on the bounds check, not allocate.
TEST(PgOutputTest, AbsurdLengthsFailWithoutAllocating) {
  ByteWriter huge_value;
  huge_value.U8('I').BE32(1).U8('N').BE16(1).U8('t').BE32(0xFFFFFFF0).Bytes("abc");
  ByteWriter huge_ncols;
  huge_ncols.U8('I').BE32(1).U8('N').BE16(0xFFFF).U8('n');
  ByteWriter huge_natts;
  huge_natts.U8('R').BE32(1).CString("s").CString("t").U8('d').BE16(0xFFFF);
  ByteWriter huge_nrelids;
  huge_nrelids.U8('T').BE32(0xFFFFFFFF).U8(0).BE32(1);
  ByteWriter huge_message;
  huge_message.U8('M').U8(1).BE64(1).CString("p").BE32(0x7FFFFFFF).Bytes("x");
  for (const ByteWriter* w :
       {&huge_value, &huge_ncols, &huge_natts, &huge_nrelids, &huge_message}) {
    absl::StatusOr<PgOutputMessage> got = Decode(w->data(), {});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss) << got.status();
  }
}

TEST(PgOutputTest, StreamBlockDecidesWhetherChangesCarryAnXid) {
  Insert insert{77u, 16384, {Text("v")}};
  std::string bytes = Encode(insert);
  // Outside a block the same bytes would be misread: oid 77, then garbage.
  EXPECT_FALSE(Decode(bytes, {false}).ok());
  EXPECT_EQ(std::get<Insert>(*Decode(bytes, {true})), insert);
}

TEST(PgOutputTest, StreamDecoderTracksBlocks) {
  StreamDecoder decoder;
  ASSERT_TRUE(decoder.Decode(Encode(StreamStart{10, 1})).ok());
  EXPECT_TRUE(decoder.in_stream_block());
  absl::StatusOr<PgOutputMessage> insert =
      decoder.Decode(Encode(Insert{10u, 5, {Null()}}));
  ASSERT_TRUE(insert.ok()) << insert.status();
  EXPECT_EQ(std::get<Insert>(*insert).xid, 10u);
  EXPECT_FALSE(decoder.Decode(Encode(StreamStart{11, 1})).ok());
  ASSERT_TRUE(decoder.Decode(Encode(StreamStop{})).ok());
  EXPECT_FALSE(decoder.in_stream_block());
  EXPECT_FALSE(decoder.Decode(Encode(StreamStop{})).ok());
  absl::StatusOr<PgOutputMessage> plain =
      decoder.Decode(Encode(Insert{std::nullopt, 5, {}}));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(std::get<Insert>(*plain).xid.has_value());
}

TEST(PgOutputTest, MessageNames) {
  EXPECT_EQ(MessageName(Begin{}), "Begin");
  EXPECT_EQ(MessageName(StreamAbort{}), "StreamAbort");
  EXPECT_EQ(MessageName(Truncate{}), "Truncate");
}

}  // namespace
}  // namespace cdc::pgoutput
