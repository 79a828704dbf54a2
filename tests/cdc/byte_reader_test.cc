#include "cdc/byte_reader.h"

#include <string>

#include "cdc/byte_writer.h"
#include "gtest/gtest.h"

namespace cdc {
namespace {

using std::string_literals::operator""s;

TEST(ByteReaderTest, ReadsWhatTheWriterWrote) {
  ByteWriter w;
  w.U8(0xAB).BE16(0x1234).BE32(0xDEADBEEF).BE64(0x0102030405060708).CString("héllo");
  w.Bytes("raw\0bytes"s).BE64(static_cast<uint64_t>(int64_t{-2}));
  ByteReader r(w.data());
  EXPECT_EQ(*r.ReadU8(), 0xAB);
  EXPECT_EQ(*r.ReadBE16(), 0x1234);
  EXPECT_EQ(*r.ReadBE32(), 0xDEADBEEFu);
  EXPECT_EQ(r.ReadLsn()->value(), 0x0102030405060708u);
  EXPECT_EQ(*r.ReadCString(), "héllo");
  EXPECT_EQ(*r.ReadBytes(9), "raw\0bytes"s);
  EXPECT_EQ(*r.ReadI64(), -2);
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(ByteReaderTest, BigEndianOnTheWire) {
  ByteWriter w;
  w.BE32(0x01020304);
  EXPECT_EQ(w.data(), "\x01\x02\x03\x04");
}

TEST(ByteReaderTest, TruncationNamesTheOffset) {
  const std::string bytes = "\x01\x02\x03";
  ByteReader r(bytes);
  ASSERT_TRUE(r.ReadU8().ok());
  absl::StatusOr<uint32_t> v = r.ReadBE32();
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(v.status().message(), "truncated at byte offset 1: need 4 byte(s), 2 left");
  // A failed read consumes nothing.
  EXPECT_EQ(r.offset(), 1u);
  EXPECT_EQ(*r.ReadBE16(), 0x0203);
}

TEST(ByteReaderTest, EveryReadFailsOnEmptyInput) {
  ByteReader r("");
  EXPECT_FALSE(r.ReadU8().ok());
  EXPECT_FALSE(r.ReadBE16().ok());
  EXPECT_FALSE(r.ReadBE32().ok());
  EXPECT_FALSE(r.ReadBE64().ok());
  EXPECT_FALSE(r.ReadI64().ok());
  EXPECT_FALSE(r.ReadLsn().ok());
  EXPECT_FALSE(r.ReadCString().ok());
  EXPECT_FALSE(r.ReadBytes(1).ok());
  EXPECT_TRUE(r.ReadBytes(0).ok());
  EXPECT_TRUE(r.ExpectEnd().ok());
}

TEST(ByteReaderTest, AbsurdLengthFailsWithoutReading) {
  ByteReader r("abc");
  absl::StatusOr<absl::string_view> s = r.ReadBytes(size_t{0xFFFFFFFF});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(r.remaining(), 3u);
}

TEST(ByteReaderTest, UnterminatedString) {
  ByteReader r("abc");
  absl::StatusOr<absl::string_view> s = r.ReadCString();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("offset 0"), absl::string_view::npos);
}

TEST(ByteReaderTest, TrailingBytesAreAnError) {
  ByteReader r("ab");
  ASSERT_TRUE(r.ReadU8().ok());
  absl::Status s = r.ExpectEnd();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "1 unexpected trailing byte(s) at offset 1");
  EXPECT_EQ(r.ReadRest(), "b");
  EXPECT_TRUE(r.ExpectEnd().ok());
}

}  // namespace
}  // namespace cdc
