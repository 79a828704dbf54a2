// The guarantees again, on a real Apache Kafka cluster: three KRaft
// nodes from Maven Central's jars (tools/harness/kafka_cluster.sh), shared by every
// test of this binary (its JVMs start slowly), each test on topics of its own.
// Unlike librdkafka's mock cluster, this broker writes transaction markers (an
// ordinary read_committed consumer hides aborted transactions), fences an older
// instance of a transactional id, checks producer sequence numbers, answers
// CreateTopics and moves partition leaders. Judged by an ordinary consumer,
// without any header of ours.
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/publisher/end_to_end/real_kafka_fixture.h"
#include "tools/harness/http_get.h"
#include "tools/harness/shell.h"

namespace publisher {
namespace {

using harness::HttpGet;
using ::testing::HasSubstr;

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


}  // namespace
}  // namespace publisher
