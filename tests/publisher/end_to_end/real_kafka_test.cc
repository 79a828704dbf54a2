// The guarantees again, on a real Apache Kafka cluster: three KRaft
// nodes from Maven Central's jars (tools/harness/kafka_cluster.sh), shared by every
// test of this binary (its JVMs start slowly), each test on topics of its own.
// Unlike librdkafka's mock cluster, this broker writes transaction markers (an
// ordinary read_committed consumer hides aborted transactions), fences an older
// instance of a transactional id, checks producer sequence numbers, answers
// CreateTopics and moves partition leaders. Judged by an ordinary consumer,
// without any header of ours.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "outbox/v1/envelope.pb.h"
#include "tests/publisher/publisher_fixture.h"
#include "tools/harness/http_get.h"
#include "tools/harness/kafka_cluster.h"
#include "tools/harness/shell.h"

namespace publisher {
namespace {

using harness::BlackholeProxy;
using harness::HttpGet;
using harness::KafkaCluster;
using ::testing::HasSubstr;

KafkaCluster* cluster =
    nullptr;  // Shared by every test; made by the common::Environment.
// The one account of the cluster's SASL/PLAIN listeners.
constexpr char kSaslUser[] = "outbox";
constexpr char kSaslPassword[] = "pw-5e3cr3t-q7";
// One blackhole-proxy in front of each broker's second listener: a publisher given
// cluster->external_bootstrap() reaches the cluster only through these, so a test
// can silence every path between it and the brokers.
std::vector<BlackholeProxy*> proxies;

class KafkaEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::vector<std::pair<int, int>> external;
    std::set<int> taken;
    while (external.size() < 3) {
      // The brokers bind these seconds from now: a port outside the ephemeral
      // range, as the cluster's own.
      int listen = harness::FreeTcpPort();
      if (!taken.insert(listen).second) continue;
      owned_proxies_.push_back(
          ValueOrDie(BlackholeProxy::Start(absl::StrCat("127.0.0.1:", listen))));
      proxies.push_back(owned_proxies_.back().get());
      external.emplace_back(listen, owned_proxies_.back()->port());
    }
    owned_ = ValueOrDie(KafkaCluster::Start(3, external, KafkaCluster::Jvm::kSmall,
                                            absl::StrCat(kSaslUser, ":", kSaslPassword)));
    cluster = owned_.get();
  }
  void TearDown() override {
    cluster = nullptr;
    owned_.reset();
    proxies.clear();
    owned_proxies_.clear();
  }

 private:
  std::vector<std::unique_ptr<BlackholeProxy>> owned_proxies_;
  std::unique_ptr<KafkaCluster> owned_;
};

const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new KafkaEnvironment);


// One row as a consumer sees it.
struct Event {
  std::string id;
  std::string key;
  int64_t n = -1;  // The row's number within its key (payload "n").
  int32_t partition = 0;
};

class RealKafkaTest : public PublisherTest {
 protected:
  void SetUpBroker() override {
    ASSERT_NE(cluster, nullptr);
    // Every test its own topic, transactional id and checkpoint topic.
    static int test_number = 0;
    prefix_ = absl::StrCat("rk", ++test_number);
    topic_ = absl::StrCat(prefix_, ".order");
    brokers_ = cluster->bootstrap();
    topics_ = {topic_};
    broker_flags_ = {"--topic",
                     absl::StrCat(prefix_, ".{aggregate_type}"),
                     "--transactional-id",
                     prefix_,
                     "--checkpoint-topic",
                     absl::StrCat(prefix_, ".checkpoints"),
                     "--table",
                     "outbox"};
    ASSERT_TRUE(cluster->CreateTopic(topic_, 4, 3, {{"min.insync.replicas", "2"}}).ok());
  }

  void TearDown() override {
    PublisherTest::TearDown();
    // A test that failed half-way must not leave a broker down, or a path to one
    // silent, for the next.
    EXPECT_TRUE(cluster->Heal().ok());
    for (BlackholeProxy* proxy : proxies) EXPECT_TRUE(proxy->Thaw().ok());
  }

  std::unique_ptr<Process> Start(const std::vector<std::string>& extra = {},
                                 const std::vector<std::string>& env = {}) {
    log_path_ = absl::StrCat(cluster_->dir(), "/publisher-", ++started_, ".log");
    return StartPublisher(extra, env);
  }

  // Commits `transactions` transactions of 1 to 10 rows over 8 keys; each row's
  // payload numbers it within its key, so a consumer can check per-key order.
  void Write(int transactions, PgSession* session = nullptr) {
    if (session == nullptr) session = sql_.get();
    for (int t = 0; t < transactions; ++t) {
      std::string values;
      for (int r = 0; r <= (t * 7) % 10; ++r) {
        std::string key = absl::StrCat("k", (t + r) % 8);
        absl::StrAppend(&values, values.empty() ? "" : ",", "('order','", key,
                        "','E',jsonb_build_object('n',", next_[key]++, "))");
      }
      ASSERT_TRUE(
          session
              ->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, aggregate_id, "
                                  "event_type, payload) VALUES ",
                                  values))
              .ok());
    }
  }

  // Writes from a thread of its own until stopped.
  class BackgroundWriter {
   public:
    BackgroundWriter(RealKafkaTest* test)
        : session_(ValueOrDie(test->cluster_->Connect())) {
      thread_ = std::thread([this, test] {
        while (!stop_) test->Write(1, session_.get());
      });
    }
    ~BackgroundWriter() {
      stop_ = true;
      thread_.join();
    }

   private:
    std::unique_ptr<PgSession> session_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
  };

  static std::vector<Event> Events(
      const std::vector<harness::ConsumedRecord>& rs) {
    std::vector<Event> events;
    for (const auto& r : rs) {
      outbox::v1::Envelope e;
      EXPECT_TRUE(e.ParseFromString(r.value));
      Event ev{e.id(), r.key, -1, r.partition};
      const std::string& p = e.payload();
      size_t at = p.find("\"n\": ");
      if (at != std::string::npos) {
        size_t end = p.find_first_of(",}", at);
        EXPECT_TRUE(absl::SimpleAtoi(p.substr(at + 5, end - at - 5), &ev.n)) << p;
      }
      events.push_back(ev);
    }
    return events;
  }

  // Waits until the slot is confirmed to the end of the WAL written so far and a
  // consumer (read_committed) has every row; returns what it read.
  std::vector<Event> ReadAll() {
    Lsn end = WalInsert();
    EXPECT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(120)))
        << "the slot did not catch up: " << Confirmed() << " < " << end;
    size_t rows = std::stoul(ValueOrDie(sql_->Value("SELECT count(*) FROM outbox")));
    auto consumer = StartConsumer();
    WaitFor([&] { return Distinct(Events(consumer->Records())) >= rows; },
            absl::Seconds(60));
    consumer_records_ = consumer->Records();
    return Events(consumer_records_);
  }

  static size_t Distinct(const std::vector<Event>& events) {
    std::set<std::string> ids;
    for (const auto& e : events) ids.insert(e.id);
    return ids.size();
  }

  // Rows received more than once.
  static size_t Doubled(const std::vector<Event>& events) {
    std::map<std::string, int> copies;
    for (const auto& e : events) ++copies[e.id];
    size_t doubled = 0;
    for (const auto& [id, n] : copies) doubled += n > 1;
    return doubled;
  }

  // Rows of the table no consumer saw.
  size_t Lost(const std::vector<Event>& events) {
    std::set<std::string> ids;
    for (const auto& e : events) ids.insert(e.id);
    size_t lost = 0;
    for (const auto& row : ValueOrDie(sql_->Exec("SELECT id::text FROM outbox")))
      lost += ids.count(*row[0]) == 0;
    return lost;
  }

  // Per key, the first time each row appears must follow the first appearance of
  // every earlier row of the key (redelivery after a rewind may repeat rows, never
  // put a later one first); and a key stays on one partition.
  static size_t OrderViolations(const std::vector<Event>& events) {
    std::map<std::string, int64_t> highest;
    std::map<std::string, int32_t> partition;
    size_t violations = 0;
    for (const auto& e : events) {
      auto [it, fresh] = partition.emplace(e.key, e.partition);
      if (!fresh && it->second != e.partition) ++violations;
      auto h = highest.find(e.key);
      int64_t top = h == highest.end() ? -1 : h->second;
      if (e.n > top + 1) ++violations;  // Skipped a row not yet seen.
      if (e.n > top) highest[e.key] = e.n;
    }
    return violations;
  }

  std::string prefix_, topic_;
  std::vector<harness::ConsumedRecord> consumer_records_;  // ReadAll's.
  std::map<std::string, int64_t> next_;
  int started_ = 0;
};

TEST_F(RealKafkaTest, AtLeastOnceAcrossKill9) {
  publisher_ = Start();
  Write(50);
  {
    BackgroundWriter writer(this);
    ASSERT_TRUE(WaitFor([&] { return Confirmed() > Lsn(0); }, absl::Seconds(60)));
    publisher_->Signal(SIGKILL);
    publisher_->Wait(absl::Seconds(10));
    publisher_ = Start();
    auto consumer = StartConsumer();
    ASSERT_TRUE(WaitFor([&] { return consumer->Count() > 200; }, absl::Seconds(60)));
    publisher_->Signal(SIGKILL);
    publisher_->Wait(absl::Seconds(10));
    publisher_ = Start();
  }
  Write(20);
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  EXPECT_EQ(OrderViolations(events), 0u);
}

TEST_F(RealKafkaTest, NothingIsConfirmedWhileThePartitionLeadersBrokerIsDown) {
  // One partition, one replica, on broker 3: with it down the partition is offline.
  const std::string topic = absl::StrCat(prefix_, ".solo");
  ASSERT_TRUE(cluster->CreateTopic(topic, 1, 1, {}, {{3}}).ok());
  topics_ = {topic};
  publisher_ = Start({"--topic", topic});
  Write(5);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  ASSERT_TRUE(cluster->Kill(3).ok());
  Lsn before = WalInsert();
  Write(20);
  // The publisher has read and produced them (its stats line counts them in
  // flight); none may be confirmed while no broker holds them.
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(), "\"in_flight\":") &&
               !absl::StrContains(
                   publisher_->Log().substr(publisher_->Log().rfind("stats")),
                   "\"in_flight\":0");
      },
      absl::Seconds(60)))
      << publisher_->Log();
  EXPECT_LE(Confirmed(), before) << "confirmed rows that no broker stored";
  ASSERT_TRUE(cluster->Restart(3).ok());
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
}

TEST_F(RealKafkaTest, PerKeyOrderHoldsAcrossALeaderChangeAndABrokerKill) {
  publisher_ = Start();
  {
    BackgroundWriter writer(this);
    auto consumer = StartConsumer();
    ASSERT_TRUE(WaitFor([&] { return consumer->Count() > 100; }, absl::Seconds(60)));
    for (int p = 0; p < 2; ++p) {
      int leader = ValueOrDie(cluster->Leader(topic_, p));
      ASSERT_TRUE(cluster->MoveLeader(topic_, p, leader % 3 + 1).ok());
    }
    size_t seen = consumer->Count();
    ASSERT_TRUE(
        WaitFor([&] { return consumer->Count() > seen + 100; }, absl::Seconds(60)));
    int victim = ValueOrDie(cluster->Leader(topic_, 0));
    ASSERT_TRUE(cluster->Kill(victim).ok());
    seen = consumer->Count();
    ASSERT_TRUE(
        WaitFor([&] { return consumer->Count() > seen + 100; }, absl::Seconds(90)))
        << "no progress with broker " << victim << " down (replication factor 3)";
    ASSERT_TRUE(cluster->Restart(victim).ok());
  }
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  EXPECT_EQ(OrderViolations(events), 0u);
}

TEST_F(RealKafkaTest, AStandbyTakesOverFromAKilledPublisher) {
  publisher_ = Start();
  std::unique_ptr<Process> standby = ValueOrDie(
      Process::Start(PublisherArgv(), absl::StrCat(cluster_->dir(), "/standby.log")));
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(standby->Log(), "standing by"); },
                      absl::Seconds(60)))
      << standby->Log();
  Write(30);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  publisher_->Signal(SIGKILL);
  Write(30);
  ASSERT_TRUE(
      WaitFor([&] { return absl::StrContains(standby->Log(), "\"msg\":\"streaming\""); },
              absl::Seconds(60)))
      << standby->Log();
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  EXPECT_EQ(OrderViolations(events), 0u);
}

TEST_F(RealKafkaTest, ExactlyOnceForAPlainReadCommittedConsumerAcrossEveryFault) {
  publisher_ = Start(kExactlyOnce);
  EXPECT_THAT(publisher_->Log(), HasSubstr("created the checkpoint topic"));
  {
    BackgroundWriter writer(this);
    // kill -9 mid-stream twice (Kafka transactions open), SIGTERM once.
    for (int signal : {SIGKILL, SIGTERM, SIGKILL}) {
      auto consumer = StartConsumer();
      ASSERT_TRUE(WaitFor([&] { return consumer->Count() > 150; }, absl::Seconds(60)))
          << publisher_->Log();
      publisher_->Signal(signal);
      publisher_->Wait(absl::Seconds(60));
      publisher_ = Start(kExactlyOnce);
    }
  }
  // A broker killed mid-stream (its partitions' leaders move), the walsender
  // terminated, and PostgreSQL restarted: PostgreSQL 15 sets the slot back, and
  // the checkpoint must skip what Kafka already holds.
  ASSERT_TRUE(cluster->Kill(1).ok());
  Write(30);
  ASSERT_TRUE(cluster->Restart(1).ok());
  ASSERT_TRUE(
      sql_->Exec("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots")
          .ok());
  Write(10);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(90)))
      << publisher_->Log();
  sql_.reset();
  ASSERT_TRUE(cluster_->Restart("fast").ok());
  sql_ = ValueOrDie(cluster_->Connect());
  Write(10);
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  EXPECT_EQ(Doubled(events), 0u) << "rows a read_committed consumer received twice";
  EXPECT_EQ(OrderViolations(events), 0u);
  // What the faults left: records of aborted transactions, which only a
  // read_uncommitted reader sees. It has read far enough once, in every partition,
  // it reached the last record the read_committed consumer received.
  std::map<int32_t, int64_t> last;
  for (const auto& r : consumer_records_)
    last[r.partition] = std::max(last[r.partition], r.offset);
  auto raw = ValueOrDie(
      harness::Consumer::Start(brokers_, topics_, {}, "read_uncommitted"));
  EXPECT_TRUE(WaitFor(
      [&] {
        std::map<int32_t, int64_t> seen;
        for (const auto& r : raw->Records())
          seen[r.partition] = std::max(seen[r.partition], r.offset);
        for (const auto& [p, offset] : last)
          if (seen[p] < offset) return false;
        return true;
      },
      absl::Seconds(60)));
  std::set<std::string> rows;
  for (const auto& row : ValueOrDie(sql_->Exec("SELECT id::text FROM outbox")))
    rows.insert(*row[0]);
  size_t foreign = 0;
  for (const auto& e : Events(raw->Records())) foreign += rows.count(e.id) == 0;
  EXPECT_EQ(foreign, 0u) << "records of rows the table never committed";
  std::cerr << "exactly-once on Apache Kafka: " << Distinct(events) << " rows once each; "
            << raw->Count() - events.size()
            << " records of aborted transactions hidden from read_committed\n";
}

TEST_F(RealKafkaTest, AnAbortedTransactionIsInvisibleToReadCommitted) {
  // A long --transaction-interval keeps a Kafka transaction open while its records
  // are stored (a read_uncommitted reader sees them, a read_committed one not).
  // The publisher is killed then; the next instance's init aborts that
  // transaction, and publishes its rows again. (Killing a partition's only broker
  // to hold the transaction open instead was flaky: librdkafka registers a
  // transaction's partitions in one request, which then fails for every partition,
  // so sometimes no record was stored at all.)
  const std::string topic = absl::StrCat(prefix_, ".two");
  ASSERT_TRUE(cluster->CreateTopic(topic, 2, 1, {}, {{3}, {1}}).ok());
  topics_ = {topic};
  const std::vector<std::string> flags = {"--delivery", "exactly-once", "--topic", topic};
  std::vector<std::string> held = flags;
  held.insert(held.end(), {"--transaction-interval", "30s"});
  publisher_ = Start(held);
  Write(20);  // 8 keys: rows for both partitions.
  size_t rows = std::stoul(ValueOrDie(sql_->Value("SELECT count(*) FROM outbox")));
  auto raw = ValueOrDie(
      harness::Consumer::Start(brokers_, {topic}, {}, "read_uncommitted"));
  ASSERT_TRUE(WaitFor([&] { return raw->Count() >= rows; }, absl::Seconds(60)))
      << raw->Count() << " of " << rows << " records of the open transaction stored\n"
      << publisher_->Log();
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(10));
  size_t aborted = raw->Count();
  publisher_ = Start(flags);
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  EXPECT_EQ(Doubled(events), 0u)
      << "a read_committed consumer received an aborted record";
  // The aborted records are still in the log: a read_uncommitted reader sees them.
  EXPECT_TRUE(
      WaitFor([&] { return raw->Count() >= aborted + events.size(); }, absl::Seconds(60)))
      << raw->Count() << " records read_uncommitted, " << aborted << " aborted and "
      << events.size() << " committed";
}

TEST_F(RealKafkaTest, ASecondInstanceWithTheTransactionalIdFencesTheFirst) {
  publisher_ = Start(kExactlyOnce);
  Write(20);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)));
  // Rows committed from now on, each with a WAL position at or past its commit.
  std::vector<std::pair<Lsn, std::string>> committed;
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    auto session = ValueOrDie(cluster_->Connect());
    for (int i = 0; writing; ++i) {
      auto id = session->Value(absl::StrCat(
          "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) VALUES "
          "('order', 'f",
          i % 8, "', 'E', '{}') RETURNING id::text"));
      auto lsn = session->Value("SELECT pg_current_wal_insert_lsn()::text");
      if (id.ok() && lsn.ok()) committed.emplace_back(ValueOrDie(Lsn::Parse(*lsn)), *id);
    }
  });
  // The second instance streams a slot of its own, to a topic of its own, under
  // the same transactional id: its init fences the first.
  std::vector<std::string> argv = PublisherArgv(kExactlyOnce);
  argv.insert(argv.end(), {"--slot", "intruder", "--publication", "intruder", "--topic",
                           absl::StrCat(prefix_, ".intruder.{aggregate_type}")});
  auto consumer = StartConsumer();
  WaitFor([&] { return consumer->Count() > 20; }, absl::Seconds(30));
  auto intruder =
      ValueOrDie(Process::Start(argv, absl::StrCat(cluster_->dir(), "/intruder.log")));
  std::optional<int> code = publisher_->Wait(absl::Seconds(90));
  writing = false;
  writer.join();
  EXPECT_EQ(code, 1) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("took over"));
  EXPECT_TRUE(
      WaitFor([&] { return absl::StrContains(intruder->Log(), "exactly-once: "); },
              absl::Seconds(60)))
      << intruder->Log();
  intruder.reset();
  // Nothing the fenced instance confirmed is missing for a read_committed
  // consumer: every row committed at or before its slot's confirmed LSN is there.
  Lsn confirmed = Confirmed();
  std::set<std::string> must;
  for (const auto& [lsn, id] : committed) {
    if (lsn <= confirmed) must.insert(id);
  }
  std::set<std::string> seen;
  WaitFor(
      [&] {
        seen.clear();
        for (const auto& e : Events(consumer->Records())) seen.insert(e.id);
        for (const auto& id : must)
          if (!seen.count(id)) return false;
        return true;
      },
      absl::Seconds(60));
  size_t missing = 0;
  for (const auto& id : must) missing += seen.count(id) == 0;
  EXPECT_EQ(missing, 0u) << "of " << must.size()
                         << " rows the fenced instance confirmed (slot at "
                         << confirmed.ToString() << ")";
}

// Silent broker paths: the paths between the publisher and the brokers go silent without
// closing (a NAT or firewall that dropped its state): blackhole-proxy in front of
// every broker forwards nothing and closes nothing. In both delivery modes:
//  1. Only the connections open now die (new ones work, as after a NAT reset):
//     librdkafka's request timeout (socket.timeout.ms, 30 s by our default)
//     drops them and rows flow again without help.
//  2. Every path stays dead until it heals: nothing is confirmed meanwhile,
//     /healthz says what is wrong, and rows flow soon after the path returns.
// Then a kill -9 and an ordinary consumer judge: nothing lost (nothing was
// confirmed that the brokers did not hold), and nothing doubled in exactly-once.
class KafkaBlackholeTest : public RealKafkaTest,
                           public ::testing::WithParamInterface<bool> {
 protected:
  bool exactly_once() const { return GetParam(); }

  // Every proxy at once.
  static void Each(absl::Status (BlackholeProxy::*command)()) {
    for (BlackholeProxy* proxy : proxies) ASSERT_TRUE((proxy->*command)().ok());
  }

  // How long after `since` the slot confirms the WAL written up to now.
  absl::Duration FlowsAgain(absl::Time since, absl::Duration deadline) {
    Lsn end = WalInsert();
    if (!WaitFor([&] { return Confirmed() >= end; }, deadline))
      return absl::InfiniteDuration();
    return absl::Now() - since;
  }
};

TEST_P(KafkaBlackholeTest, SilentPathsToTheBrokersStallNothingAndConfirmNothingUnproven) {
  int metrics_port = harness::FreeTcpPort();
  publisher_brokers_ = cluster->external_bootstrap();
  std::vector<std::string> flags = {"--metrics-port", absl::StrCat(metrics_port)};
  if (exactly_once()) flags.insert(flags.end(), kExactlyOnce.begin(), kExactlyOnce.end());
  publisher_ = Start(flags);
  Write(10);
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(60)))
      << publisher_->Log();

  // 1. The open connections go silent; new ones would work.
  Each(&BlackholeProxy::Freeze);
  absl::Time frozen = absl::Now();
  Write(20);
  absl::Duration recovered = FlowsAgain(frozen, absl::Seconds(50));
  EXPECT_LT(recovered, absl::Seconds(50))
      << "rows did not flow again within 50 s of the paths going silent "
         "(socket.timeout.ms 30 s)\n"
      << publisher_->Log();

  // 2. Every path dead, new connections too, for longer than the stall bound.
  Each(&BlackholeProxy::Blackhole);
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
  Each(&BlackholeProxy::Thaw);
  absl::Duration after_heal = FlowsAgain(healed, absl::Seconds(60));
  EXPECT_LT(after_heal, absl::Seconds(45))
      << "rows did not flow again within 45 s of the paths returning\n"
      << publisher_->Log();
  EXPECT_TRUE(WaitFor([&] { return HttpGet(metrics_port, "/healthz").first == 200; },
                      absl::Seconds(30)));

  // Whatever was confirmed is in Kafka without this publisher's help.
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
  std::cerr << (exactly_once() ? "exactly-once" : "at-least-once")
            << ": rows flowed again " << absl::FormatDuration(recovered)
            << " after the open connections went silent, and "
            << absl::FormatDuration(after_heal) << " after dead paths returned\n";
}

// Credentials kept off the command line: SASL/PLAIN from OUTBOX_KAFKA_* variables,
// then from a properties file (-F), in both delivery modes, against brokers that
// refuse anyone else. The rows arrive, and the password shows nowhere: not in the
// log, not in --check's output, not in /metrics.
TEST_F(RealKafkaTest, SaslCredentialsFromTheEnvironmentOrAFileWorkAndNeverShow) {
  ASSERT_FALSE(cluster->sasl_bootstrap().empty());
  publisher_brokers_ = cluster->sasl_bootstrap();
  const std::vector<std::string> credentials = {
      "OUTBOX_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT", "OUTBOX_KAFKA_SASL_MECHANISM=PLAIN",
      absl::StrCat("OUTBOX_KAFKA_SASL_USERNAME=", kSaslUser),
      absl::StrCat("OUTBOX_KAFKA_SASL_PASSWORD=", kSaslPassword)};
  auto shows_no_secret = [](const std::string& text) {
    return !absl::StrContains(text, kSaslPassword);
  };

  // 1. From the environment, at least once, with /metrics.
  int metrics_port = harness::FreeTcpPort();
  publisher_ = Start({"--metrics-port", absl::StrCat(metrics_port)}, credentials);
  Write(30);
  std::vector<Event> events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  std::pair<int, std::string> metrics = HttpGet(metrics_port, "/metrics");
  EXPECT_EQ(metrics.first, 200);
  EXPECT_TRUE(shows_no_secret(metrics.second));
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"X.sasl.password\":\"********\""));
  EXPECT_TRUE(shows_no_secret(publisher_->Log())) << publisher_->Log();

  // 2. From a properties file, exactly once; and --check with the same file.
  const std::string file = absl::StrCat(cluster_->dir(), "/kafka.properties");
  {
    std::ofstream out(file);
    out << "# SASL/PLAIN for the test cluster\n"
        << "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        << "sasl.username=" << kSaslUser << "\nsasl.password=" << kSaslPassword << "\n";
  }
  std::vector<std::string> flags = {"-F", file};
  flags.insert(flags.end(), kExactlyOnce.begin(), kExactlyOnce.end());
  publisher_ = Start(flags);
  Write(30);
  events = ReadAll();
  EXPECT_EQ(Lost(events), 0u);
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  EXPECT_TRUE(shows_no_secret(publisher_->Log())) << publisher_->Log();

  auto check = [&](const std::vector<std::string>& extra,
                   const std::vector<std::string>& env) {
    std::vector<std::string> argv = PublisherArgv(extra);
    argv.push_back("--check");
    if (!env.empty()) {
      argv.insert(argv.begin(), env.begin(), env.end());
      argv.insert(argv.begin(), "/usr/bin/env");
    }
    std::string log = absl::StrCat(cluster_->dir(), "/check-", ++started_, ".log");
    auto p = ValueOrDie(Process::Start(argv, log));
    std::optional<int> code = p->Wait(absl::Seconds(120));
    return std::make_pair(code.value_or(-1), p->Log());
  };
  auto [code, out] = check({"-F", file}, {});
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(shows_no_secret(out)) << out;

  // 3. The brokers do check the password: a wrong one (from the environment,
  // which wins over the file) fails --check, and is not shown either.
  std::tie(code, out) = check({"-F", file}, {"OUTBOX_KAFKA_SASL_PASSWORD=wrong-pw-x1"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("uthentication")) << out;
  EXPECT_FALSE(absl::StrContains(out, "wrong-pw-x1")) << out;
}

INSTANTIATE_TEST_SUITE_P(BothDeliveryModes, KafkaBlackholeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ExactlyOnce" : "AtLeastOnce";
                         });

}  // namespace
}  // namespace publisher
