// A replication connection that goes silent without closing (a dropped
// NAT entry, a paused server: fault-proxy freezes it) must not stall the
// publisher. It notices within --replication-timeout, warns with the cause,
// reconnects (standing by until the old walsender lets go of the slot), and
// publishes every row; nothing is confirmed that the broker does not hold.
#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/publisher/end_to_end/proxied_postgres.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

class SilentConnectionTest : public ProxiedPostgresTest {};

TEST_F(SilentConnectionTest, AFrozenReplicationConnectionIsDroppedAndStreamingResumes) {
  auto consumer = StartThroughProxy({"--replication-timeout", "5s"});
  ASSERT_NE(consumer, nullptr);

  ASSERT_TRUE(proxy_->Freeze().ok());
  absl::Time frozen = absl::Now();
  Write(20);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(),
                                 "the replication connection is silent");
      },
      absl::Seconds(60)))
      << "the publisher never noticed the silent connection\n"
      << publisher_->Log();
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << "rows did not flow again after the silent connection\n"
      << publisher_->Log();
  absl::Duration recovered = absl::Now() - frozen;
  EXPECT_LT(recovered, absl::Seconds(45)) << "replication timeout 5 s, walsender 5 s";
  std::set<std::string> ids = DistinctIds(*consumer, 40);
  EXPECT_EQ(ids.size(), 40u);
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  ASSERT_TRUE(proxy_->Thaw().ok());
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  std::cerr << "silent replication connection: rows flowed again "
            << absl::FormatDuration(recovered) << " after the freeze\n";
}

// Every path to the server dead, new connections too (their TCP handshake with the
// proxy still succeeds, then nothing): each attempt to reconnect fails in bounded
// time (connect_timeout and the set-up statements' answer timeout follow
// --replication-timeout) instead of waiting forever; rows flow soon after the path
// returns; and a SIGTERM while the slot watcher's connection is dead still ends
// the publisher (its statements have an answer timeout too).
TEST_F(SilentConnectionTest, APathThatStaysDeadIsRetriedAndNeverHangsShutdown) {
  auto consumer = StartThroughProxy(
      {"--replication-timeout", "5s", "--slot-check-interval", "300ms"});
  ASSERT_NE(consumer, nullptr);

  ASSERT_TRUE(proxy_->Blackhole().ok());
  Write(20);
  auto count = [&](const std::string& text) {
    size_t n = 0;
    std::string log = publisher_->Log();
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
      ++n;
    return n;
  };
  // Two failed attempts after the silence: neither waited forever.
  ASSERT_TRUE(WaitFor([&] { return count("cannot reach PostgreSQL; retrying") >= 2; },
                      absl::Seconds(90)))
      << "a reconnect through the dead path never ended\n"
      << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("the replication connection is silent"));
  ASSERT_TRUE(proxy_->Thaw().ok());
  absl::Time healed = absl::Now();
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << "rows did not flow again after the path returned\n"
      << publisher_->Log();
  absl::Duration recovered = absl::Now() - healed;
  EXPECT_EQ(DistinctIds(*consumer, 40).size(), 40u);

  // Dead again: the slot watcher (every 300 ms while streaming) is waiting on its
  // connection by the time the replication silence is noticed.
  size_t silences = count("the replication connection is silent");
  ASSERT_TRUE(proxy_->Blackhole().ok());
  ASSERT_TRUE(
      WaitFor([&] { return count("the replication connection is silent") > silences; },
              absl::Seconds(60)))
      << publisher_->Log();
  absl::Time term = absl::Now();
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(45)), 0)
      << "SIGTERM did not end the publisher while its connections were dead\n"
      << publisher_->Log();
  std::cerr << "dead path: rows flowed again " << absl::FormatDuration(recovered)
            << " after it returned; SIGTERM with dead connections ended the publisher in "
            << absl::FormatDuration(absl::Now() - term) << "\n";
}

}  // namespace
}  // namespace publisher
