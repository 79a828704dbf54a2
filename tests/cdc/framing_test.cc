#include "cdc/framing.h"

#include <string>

#include "gtest/gtest.h"

namespace cdc {
namespace {

using std::string_literals::operator""s;

TEST(FramingTest, XLogDataRoundTrips) {
  const std::string payload = "I\0payload"s;  // XLogData only views its payload.
  XLogData m{Lsn(0), Lsn(0x1'2345'6789), 123456789, payload};
  std::string bytes = BuildXLogData(m);
  EXPECT_EQ(bytes.size(), 1 + 24 + m.payload.size());
  absl::StatusOr<ServerMessage> got = ParseServerMessage(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::get<XLogData>(*got), m);
}

TEST(FramingTest, XLogDataMayHaveAnEmptyPayload) {
  absl::StatusOr<ServerMessage> got =
      ParseServerMessage(BuildXLogData({Lsn(1), Lsn(2), 3, ""}));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(std::get<XLogData>(*got).payload.empty());
}

TEST(FramingTest, KeepaliveRoundTrips) {
  for (bool reply : {false, true}) {
    Keepalive m{Lsn(0xABCDEF), -5, reply};
    absl::StatusOr<ServerMessage> got = ParseServerMessage(BuildKeepalive(m));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(std::get<Keepalive>(*got), m);
  }
}

TEST(FramingTest, KeepaliveKnownBytes) {
  std::string bytes = "k\0\0\0\x01\0\0\0\x10\0\0\0\0\0\0\0\x07\x01"s;
  absl::StatusOr<ServerMessage> got = ParseServerMessage(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(std::get<Keepalive>(*got), (Keepalive{Lsn(0x1'0000'0010), 7, true}));
}

TEST(FramingTest, StandbyStatusRoundTripsAndHasTheDocumentedLayout) {
  StandbyStatus m{Lsn(1), Lsn(2), Lsn(3), 4, true};
  std::string bytes = BuildStandbyStatus(m);
  EXPECT_EQ(bytes,
            "r\0\0\0\0\0\0\0\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0\x03"
            "\0\0\0\0\0\0\0\x04\x01"s);
  absl::StatusOr<StandbyStatus> got = ParseStandbyStatus(bytes);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, m);
}

TEST(FramingTest, TruncatedMessagesAreDataLoss) {
  for (const std::string& full :
       {BuildXLogData({Lsn(1), Lsn(2), 3, ""}), BuildKeepalive({Lsn(1), 2, false})}) {
    for (size_t n = 0; n < full.size(); ++n) {
      absl::StatusOr<ServerMessage> got = ParseServerMessage(full.substr(0, n));
      ASSERT_FALSE(got.ok()) << n;
      EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
    }
  }
  std::string status = BuildStandbyStatus({});
  for (size_t n = 0; n < status.size(); ++n) {
    EXPECT_EQ(ParseStandbyStatus(status.substr(0, n)).status().code(),
              absl::StatusCode::kDataLoss);
  }
}

TEST(FramingTest, KeepaliveWithTrailingBytesIsDataLoss) {
  absl::StatusOr<ServerMessage> got = ParseServerMessage(BuildKeepalive({}) + "x");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("primary keepalive"), absl::string_view::npos);
}

TEST(FramingTest, UnknownTypeIsDataLoss) {
  absl::StatusOr<ServerMessage> got = ParseServerMessage("q123");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "unknown replication CopyData message type 0x71");
  EXPECT_FALSE(ParseStandbyStatus("k").ok());
}

}  // namespace
}  // namespace cdc
