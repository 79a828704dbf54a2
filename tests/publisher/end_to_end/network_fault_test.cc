// A path to PostgreSQL that is slow, narrow, or breaks its connections mid-way
// (fault-proxy between the publisher and the server): each fault shows in what
// the publisher does (rows arrive later, more slowly, or after a reconnect it
// logs with the cause), and no row is lost. The same faults on the paths to the
// brokers: kafka_network_fault_test.cc; all of them at once: the chaos suite's
// soak schedule.
#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/publisher/end_to_end/proxied_postgres.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PostgresPathFaultTest : public ProxiedPostgresTest {
 protected:
  // Writes `rows` rows and waits until the consumer has `total` distinct ids:
  // how long after the commit the last of them arrived.
  absl::Duration WriteAndTime(Consumer& consumer, int rows, size_t total, int pad = 0) {
    Write(rows, pad);
    absl::Time committed = absl::Now();
    std::set<std::string> ids = DistinctIds(consumer, total);
    EXPECT_EQ(ids.size(), total) << publisher_->Log();
    absl::Time last = committed;
    for (const auto& r : consumer.Records()) last = std::max(last, r.received);
    return last - committed;
  }

  // Ends the publisher as an operator would: it must still be running.
  void Stop() {
    EXPECT_TRUE(publisher_->running()) << publisher_->Log();
    publisher_->Signal(SIGTERM);
    EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  }
};

TEST_F(PostgresPathFaultTest, LatencyAndJitterDelayEveryRowAndLoseNone) {
  auto consumer = StartThroughProxy({"--replication-timeout", "5s"});
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(proxy_->Latency(absl::Milliseconds(300), absl::Milliseconds(100)).ok());
  // The WAL reaches the publisher 200 to 400 ms after it was sent.
  size_t total = 20;
  for (int i = 0; i < 3; ++i) {
    absl::Duration took = WriteAndTime(*consumer, 1, ++total);
    EXPECT_GE(took, absl::Milliseconds(200)) << "the latency did not take effect";
    std::cerr << "commit to consumer with 300 +- 100 ms on the path: "
              << absl::FormatDuration(took) << "\n";
  }
  ASSERT_TRUE(proxy_->Clear().ok());
  WriteAndTime(*consumer, 20, total + 20);
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(30)));
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("reconnecting")))
      << "a slow path is not a lost one";
  Stop();
}

TEST_F(PostgresPathFaultTest, ANarrowPathCapsHowFastRowsArriveAndLosesNone) {
  auto consumer = StartThroughProxy({"--replication-timeout", "5s"});
  ASSERT_NE(consumer, nullptr);
  // 100 rows of 1 kB: 100 kB of row data at 20 kB/s is 5 s at least.
  ASSERT_TRUE(proxy_->Bandwidth(20 * 1000).ok());
  absl::Duration took = WriteAndTime(*consumer, 100, 120, 1000);
  EXPECT_GE(took, absl::Seconds(4)) << "the bandwidth limit did not take effect";
  std::cerr << "100 rows of 1 kB at 20 kB/s: " << absl::FormatDuration(took) << "\n";
  ASSERT_TRUE(proxy_->Clear().ok());
  absl::Duration wide = WriteAndTime(*consumer, 100, 220, 1000);
  EXPECT_LT(wide, took);
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(30)));
  Stop();
}

TEST_F(PostgresPathFaultTest, AResetMidMessageIsSeenReconnectedAndLosesNone) {
  auto consumer = StartThroughProxy({"--replication-timeout", "5s"});
  ASSERT_NE(consumer, nullptr);
  // The next message either way (a status update, the rows' WAL) is cut half-way,
  // with an RST. libpq names a reset (ECONNRESET) as it names an end of stream:
  // "server closed the connection unexpectedly" (fe-secure.c); fault_proxy_test.cc
  // shows that the client's socket gets the RST itself.
  ASSERT_TRUE(proxy_->Reset().ok());
  Write(20);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(),
                                 "replication connection lost; reconnecting");
      },
      absl::Seconds(30)))
      << "the publisher did not see the reset\n"
      << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("server closed the connection unexpectedly"));
  EXPECT_EQ(DistinctIds(*consumer, 40).size(), 40u);
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << publisher_->Log();
  Stop();
}

TEST_F(PostgresPathFaultTest, AConnectionCutAfterSomeBytesIsReconnectedAndLosesNone) {
  auto consumer = StartThroughProxy({"--replication-timeout", "5s"});
  ASSERT_NE(consumer, nullptr);
  // Part-way through the rows' WAL (each row's message is over 500 bytes).
  ASSERT_TRUE(proxy_->CutAfter(3000).ok());
  Write(100, 500);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(),
                                 "replication connection lost; reconnecting");
      },
      absl::Seconds(30)))
      << "the publisher did not see the connection end\n"
      << publisher_->Log();
  EXPECT_EQ(DistinctIds(*consumer, 120).size(), 120u);
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << publisher_->Log();
  Stop();
}

}  // namespace
}  // namespace publisher
