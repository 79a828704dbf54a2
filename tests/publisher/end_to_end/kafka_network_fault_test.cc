// The paths between the publisher and the brokers misbehave: fault-proxy in front
// of every broker's second listener (the publisher bootstraps through them; the
// tests' consumers do not). Silent paths, slow ones, narrow ones, and paths that
// break their connections mid-request, in both delivery modes; each fault shows in
// what the publisher does, and an ordinary read_committed consumer then finds
// nothing lost, nothing out of order, and nothing doubled in exactly-once.
#include <signal.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/publisher/end_to_end/real_kafka_fixture.h"
#include "tools/harness/http_get.h"

namespace publisher {
namespace {

using harness::HttpGet;
using ::testing::HasSubstr;

class BrokerPathTest : public RealKafkaTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool exactly_once() const { return GetParam(); }

  // Every proxy at once.
  static void Each(absl::Status (FaultProxy::*command)()) {
    for (FaultProxy* proxy : proxies) ASSERT_TRUE((proxy->*command)().ok());
  }
  template <typename... Args>
  static void Each(absl::Status (FaultProxy::*command)(Args...), Args... args) {
    for (FaultProxy* proxy : proxies) ASSERT_TRUE((proxy->*command)(args...).ok());
  }

  // The publisher through the proxies, in the test's delivery mode, with `flags`.
  void StartThroughProxies(std::vector<std::string> flags = {}) {
    publisher_brokers_ = cluster->external_bootstrap();
    if (exactly_once())
      flags.insert(flags.end(), kExactlyOnce.begin(), kExactlyOnce.end());
    publisher_ = Start(flags);
  }

  // Stops the publisher with kill -9, then an ordinary consumer judges: nothing
  // lost (nothing was confirmed that the brokers did not hold), per-key order,
  // and nothing doubled in exactly-once.
  void Judge() {
    publisher_->Signal(SIGKILL);
    publisher_->Wait(absl::Seconds(10));
    size_t rows = std::stoul(ValueOrDie(sql_->Value("SELECT count(*) FROM outbox")));
    auto consumer = StartConsumer();
    WaitFor([&] { return Distinct(Events(consumer->Records())) >= rows; },
            absl::Seconds(60));
    std::vector<Event> events = Events(consumer->Records());
    EXPECT_EQ(Lost(events), 0u);
    EXPECT_EQ(OrderViolations(events), 0u);
    if (exactly_once()) {
      EXPECT_EQ(Doubled(events), 0u);
    }
  }

  // How long after `since` the slot confirms the WAL written up to now.
  absl::Duration FlowsAgain(absl::Time since, absl::Duration deadline) {
    Lsn end = WalInsert();
    if (!WaitFor([&] { return Confirmed() >= end; }, deadline))
      return absl::InfiniteDuration();
    return absl::Now() - since;
  }
};

// Silent broker paths: the paths between the publisher and the brokers go silent without
// closing (a NAT or firewall that dropped its state): fault-proxy in front of
// every broker forwards nothing and closes nothing. In both delivery modes:
//  1. Only the connections open now die (new ones work, as after a NAT reset):
//     librdkafka's request timeout (socket.timeout.ms, 30 s by our default)
//     drops them and rows flow again without help.
//  2. Every path stays dead until it heals: nothing is confirmed meanwhile,
//     /healthz says what is wrong, and rows flow soon after the path returns.
// Then a kill -9 and an ordinary consumer judge: nothing lost (nothing was
// confirmed that the brokers did not hold), and nothing doubled in exactly-once.
class KafkaBlackholeTest : public BrokerPathTest {};

TEST_P(KafkaBlackholeTest, SilentPathsToTheBrokersStallNothingAndConfirmNothingUnproven) {
  int metrics_port = harness::FreeTcpPort();
  StartThroughProxies({"--metrics-port", absl::StrCat(metrics_port)});
  Write(10);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << publisher_->Log();

  // 1. The open connections go silent; new ones would work.
  Each(&FaultProxy::Freeze);
  absl::Time frozen = absl::Now();
  Write(20);
  absl::Duration recovered = FlowsAgain(frozen, absl::Seconds(50));
  EXPECT_LT(recovered, absl::Seconds(50))
      << "rows did not flow again within 50 s of the paths going silent "
         "(socket.timeout.ms 30 s)\n"
      << publisher_->Log();

  // 2. Every path dead, new connections too, for longer than the stall bound.
  Each(&FaultProxy::Blackhole);
  Lsn before = WalInsert();
  Write(20);
  std::pair<int, std::string> health;
  Lsn highest;
  ASSERT_TRUE(WaitFor(
      [&] {
        highest = std::max(highest, Confirmed());
        health = HttpGet(metrics_port, "/healthz");
        // The cause as librdkafka names it: requests or connections timed out.
        // Exactly-once first names the stall too (its commit goes on beside the
        // reader), then, once the commit gives up, the producer it cannot make.
        return health.first == 503 &&
               (absl::StrContains(health.second, "_TIMED_OUT") ||
                absl::StrContains(health.second, "_TRANSPORT")) &&
               (!exactly_once() ||
                absl::StrContains(health.second, "cannot create the Kafka producer"));
      },
      absl::Seconds(90)))
      << "/healthz answered " << health.first << " " << health.second;
  // At-least-once waits on acknowledgements; exactly-once aborts the Kafka
  // transaction it cannot commit and then cannot initialize a new producer.
  EXPECT_THAT(health.second, HasSubstr(exactly_once() ? "cannot create the Kafka producer"
                                                      : "none acknowledged for 30s; "
                                                        "librdkafka reported"))
      << health.second;
  highest = std::max(highest, Confirmed());
  EXPECT_LE(highest, before) << "confirmed rows while no broker could be reached";
  absl::Time healed = absl::Now();
  Each(&FaultProxy::Thaw);
  absl::Duration after_heal = FlowsAgain(healed, absl::Seconds(60));
  EXPECT_LT(after_heal, absl::Seconds(45))
      << "rows did not flow again within 45 s of the paths returning\n"
      << publisher_->Log();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(metrics_port, "/healthz").first == 200; },
                      absl::Seconds(30)));

  // Whatever was confirmed is in Kafka without this publisher's help.
  Judge();
  std::cerr << (exactly_once() ? "exactly-once" : "at-least-once")
            << ": rows flowed again " << absl::FormatDuration(recovered)
            << " after the open connections went silent, and "
            << absl::FormatDuration(after_heal) << " after dead paths returned\n";
}

// Slow, narrow and breaking paths to every broker, one after the other, under
// one publisher: latency with jitter delays each record by at least the path's
// one-way delay; a narrow path caps how fast a backlog leaves; an RST in the
// middle of a request, and a connection cut after a few bytes, are reconnected
// by librdkafka (and logged), and the records flow on.
class KafkaNetworkFaultTest : public BrokerPathTest {
 protected:
  // Writes `transactions` transactions (Write's mix of 1 to 10 rows) and waits
  // until `consumer` has every row of the table: how long after the commit the
  // last one arrived.
  absl::Duration WriteAndTime(harness::Consumer& consumer, int transactions) {
    Write(transactions);
    absl::Time committed = absl::Now();
    size_t rows = std::stoul(ValueOrDie(sql_->Value("SELECT count(*) FROM outbox")));
    EXPECT_TRUE(WaitFor([&] { return Distinct(Events(consumer.Records())) >= rows; },
                        absl::Seconds(90)))
        << publisher_->Log();
    absl::Time last = committed;
    for (const auto& r : consumer.Records()) last = std::max(last, r.received);
    return last - committed;
  }

  size_t Count(const std::string& text) {
    std::string log = publisher_->Log();
    size_t n = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
      ++n;
    return n;
  }
};

TEST_P(KafkaNetworkFaultTest, SlowNarrowAndBreakingPathsToTheBrokersLoseNothing) {
  StartThroughProxies();
  auto consumer = StartConsumer();
  WriteAndTime(*consumer, 10);

  // 1. 200 +- 50 ms each way: a record reaches its broker 150 ms after it left.
  Each(&FaultProxy::Latency, absl::Milliseconds(200), absl::Milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    absl::Duration took = WriteAndTime(*consumer, 1);
    EXPECT_GE(took, absl::Milliseconds(150)) << "the latency did not take effect";
    std::cerr << "commit to consumer with 200 +- 50 ms to the brokers: "
              << absl::FormatDuration(took) << "\n";
  }
  Each(&FaultProxy::Clear);

  // 2. 10 kB/s to each broker: a backlog of 1 kB rows leaves at most 30 kB a second.
  Each(&FaultProxy::Bandwidth, int64_t{10 * 1000});
  ASSERT_TRUE(sql_->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) SELECT 'order', 'k' || (i % 8), 'E', "
                         "jsonb_build_object('pad', repeat('x', 1000)) "
                         "FROM generate_series(1, 100) i")
                  .ok());
  absl::Duration narrow = WriteAndTime(*consumer, 1);
  EXPECT_GE(narrow, absl::Seconds(2)) << "100 kB over 3 paths of 10 kB/s";
  std::cerr << "100 rows of 1 kB at 10 kB/s a broker: " << absl::FormatDuration(narrow)
            << "\n";
  Each(&FaultProxy::Clear);

  // 3. Every open connection reset (an RST) in the middle of its next request.
  size_t resets = Count("reset by peer");
  Each(&FaultProxy::Reset);
  WriteAndTime(*consumer, 20);
  EXPECT_TRUE(WaitFor([&] { return Count("reset by peer") > resets; }, absl::Seconds(30)))
      << "the publisher never saw an RST\n"
      << publisher_->Log();

  // 4. Every open connection cut after 200 more bytes (a request's worth or less).
  Each(&FaultProxy::CutAfter, int64_t{200});
  WriteAndTime(*consumer, 20);
  EXPECT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << publisher_->Log();
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  Judge();
}

INSTANTIATE_TEST_SUITE_P(BothDeliveryModes, KafkaBlackholeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ExactlyOnce" : "AtLeastOnce";
                         });

INSTANTIATE_TEST_SUITE_P(BothDeliveryModes, KafkaNetworkFaultTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ExactlyOnce" : "AtLeastOnce";
                         });

}  // namespace
}  // namespace publisher
