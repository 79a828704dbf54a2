// The consumer kit end to end on a real Apache Kafka broker: the
// publisher and the example service (outbox-paid-orders) as processes, killed on
// purpose. Each proof counts effects in the database: every committed OrderPaid
// event applied exactly once (payment_log, order_payments), none applied that was
// not committed, and per order in commit order.
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kafka/handles.h"
#include "gmock/gmock.h"
#include "tests/publisher/publisher_fixture.h"
#include "tools/harness/kafka_cluster.h"

namespace consumer {
namespace {

using harness::KafkaCluster;
using harness::Process;
using harness::WaitFor;
using publisher::DistinctIds;
using publisher::Header;
using publisher::PublisherTest;
using test_util::ValueOrDie;

KafkaCluster* cluster = nullptr;  // Shared by every test (its JVM starts slowly).

class KafkaEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    owned_ = ValueOrDie(KafkaCluster::Start(1));
    cluster = owned_.get();
  }
  void TearDown() override {
    cluster = nullptr;
    owned_.reset();
  }

 private:
  std::unique_ptr<KafkaCluster> owned_;
};

const auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new KafkaEnvironment);

constexpr int kPartitions = 4;
constexpr int kOrders = 16;

class ConsumerKafkaTest : public PublisherTest {
 protected:
  void SetUpBroker() override {
    ASSERT_NE(cluster, nullptr);
    static int test_number = 0;
    prefix_ = absl::StrCat("ck", ++test_number);
    topic_ = absl::StrCat(prefix_, ".order");
    brokers_ = cluster->bootstrap();
    topics_ = {topic_};
    broker_flags_ = {"--topic", absl::StrCat(prefix_, ".{aggregate_type}"), "--table",
                     "outbox"};
    ASSERT_TRUE(cluster->CreateTopic(topic_, kPartitions, 1).ok());
    ASSERT_TRUE(cluster->CreateTopic(DeadLetterTopic(), 1, 1).ok());
  }

  void TearDown() override {
    if (HasFailure()) {
      for (auto& [name, c] : consumers_) {
        if (c) std::cerr << "--- consumer " << name << " log ---\n" << c->Log() << "\n";
      }
    }
    consumers_.clear();
    PublisherTest::TearDown();
  }

  std::string DeadLetterTopic() const { return absl::StrCat(prefix_, ".dead-letter"); }
  std::string Group() const { return absl::StrCat(prefix_, ".paid-orders"); }

  std::unique_ptr<Process> Publisher() {
    log_path_ = absl::StrCat(cluster_->dir(), "/publisher-", ++started_, ".log");
    return StartPublisher();
  }

  // Starts (or restarts) consumer `name` of the example service; with
  // `kit_defaults`, without the tests' short session timeout.
  void StartConsumer(const std::string& name, std::vector<std::string> extra = {},
                     const std::string& pg_options = "", bool kit_defaults = false) {
    std::vector<std::string> argv = {harness::BuildPath("outbox-paid-orders"),
                                     "--pg",
                                     cluster_->conninfo() + pg_options,
                                     "--brokers",
                                     brokers_,
                                     "--group",
                                     Group(),
                                     "--topic",
                                     topic_,
                                     "--dead-letter-topic",
                                     DeadLetterTopic(),
                                     "--log-stats-every",
                                     "1s"};
    if (!kit_defaults) {
      argv.insert(argv.end(),
                  {"-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    consumers_[name] =
        ValueOrDie(Process::Start(argv, absl::StrCat(cluster_->dir(), "/consumer-", name,
                                                     "-", ++started_, ".log")));
    EXPECT_TRUE(WaitFor(
        [&] {
          return consumers_[name]->Log().find("\"msg\":\"consuming\"") !=
                     std::string::npos ||
                 !consumers_[name]->running();
        },
        absl::Seconds(30)));
    ASSERT_TRUE(consumers_[name]->running()) << consumers_[name]->Log();
  }

  // Whether consumer `name` holds partitions: what it logged assigned, less what
  // revoked (a cooperative rebalance logs only the change, often none).
  bool HoldsPartitions(const std::string& name) {
    std::string log = consumers_[name]->Log();
    int64_t held = 0;
    for (const char* what : {"assigned", "revoked"}) {
      const std::string line =
          absl::StrCat("\"msg\":\"partitions ", what, "\",\"count\":");
      for (size_t at = log.find(line); at != std::string::npos;
           at = log.find(line, at + 1))
        held += (what[0] == 'a' ? 1 : -1) * std::atoll(log.c_str() + at + line.size());
    }
    return held > 0;
  }

  void Kill(const std::string& name) {
    consumers_[name]->Signal(SIGKILL);
    consumers_[name]->Wait(absl::Seconds(10));
  }

  // Commits `transactions` transactions of 1 to 5 OrderPaid events over kOrders
  // orders; "n" numbers each order's events in commit order. Every tenth is
  // followed by a rolled-back copy.
  void Write(int transactions, harness::PgSession* session = nullptr) {
    if (session == nullptr) session = sql_.get();
    for (int t = 0; t < transactions; ++t) {
      std::string values;
      int rows = 1 + (written_transactions_++ * 7) % 5;
      for (int r = 0; r < rows; ++r) {
        std::string order = absl::StrCat("o", (written_transactions_ + r) % kOrders);
        absl::StrAppend(&values, values.empty() ? "" : ",", "('order','", order,
                        "','OrderPaid',jsonb_build_object('order','", order,
                        "','amount',1.25,'n',", next_[order]++, "))");
      }
      std::string insert = absl::StrCat(
          "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
          "VALUES ",
          values);
      ASSERT_TRUE(session->Exec(insert).ok());
      if (written_transactions_ % 10 == 0) {
        // Rolled back: never published, so never applied (the "none applied that
        // was not committed" check finds no such id in outbox).
        ASSERT_TRUE(session->Exec(absl::StrCat("BEGIN; ", insert, "; ROLLBACK")).ok());
      }
    }
  }

  // Writes from a thread of its own until destroyed.
  class BackgroundWriter {
   public:
    explicit BackgroundWriter(ConsumerKafkaTest* test)
        : session_(ValueOrDie(test->cluster_->Connect())) {
      thread_ = std::thread([this, test] {
        while (!stop_) {
          test->Write(1, session_.get());
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // Pacing only.
        }
      });
    }
    ~BackgroundWriter() {
      stop_ = true;
      thread_.join();
    }

   private:
    std::unique_ptr<harness::PgSession> session_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
  };

  int64_t Count(const std::string& sql) {
    absl::StatusOr<std::string> v = sql_->Value(sql);
    return v.ok() ? std::stoll(*v) : -1;
  }
  int64_t Committed() { return Count("SELECT count(*) FROM outbox"); }
  int64_t Applied() {
    // The example creates its tables when it starts.
    return Count(
        "SELECT CASE WHEN to_regclass('payment_log') IS NULL THEN 0 ELSE "
        "(SELECT count(DISTINCT event_id) FROM payment_log) END");
  }
  int64_t Applications() {
    return Count(
        "SELECT CASE WHEN to_regclass('payment_log') IS NULL THEN 0 ELSE "
        "(SELECT count(*) FROM payment_log) END");
  }

  // Waits until every committed event was applied, then checks the effects.
  void ExpectEveryEventAppliedOnce() {
    int64_t committed = Committed();
    EXPECT_TRUE(WaitFor([&] { return Applied() >= committed; }, absl::Seconds(180)))
        << Applied() << " of " << committed << " events applied";
    // Give a straggling duplicate time to show: everything is committed in Kafka
    // by now, so wait until each consumer's group offsets reach the end.
    EXPECT_TRUE(
        WaitFor([&] { return CommittedOffsetsReachTheEnd(); }, absl::Seconds(60)));
    EXPECT_EQ(Applications(), committed) << "an event was applied more than once";
    EXPECT_EQ(Count("SELECT count(*) FROM payment_log p WHERE NOT EXISTS "
                    "(SELECT 1 FROM outbox o WHERE o.id::text = p.event_id)"),
              0)
        << "an effect of an event that was never committed";
    EXPECT_EQ(Count("SELECT coalesce(sum(payments), 0) FROM order_payments"), committed);
    EXPECT_EQ(Count("SELECT count(*) FROM (SELECT (o.payload->>'n')::int AS n,"
                    " lag((o.payload->>'n')::int) OVER (PARTITION BY p.order_id"
                    " ORDER BY p.seq) AS prev FROM payment_log p JOIN outbox o"
                    " ON o.id::text = p.event_id) AS x WHERE n < prev"),
              0)
        << "an order's events applied out of order";
  }

  // A consumer with `properties`, for looking at the group and the topic.
  static common::KafkaClient Client(
      std::vector<std::pair<std::string, std::string>> properties) {
    absl::StatusOr<common::KafkaConf> conf = common::NewKafkaConf(std::move(properties), {});
    absl::StatusOr<common::KafkaClient> rk =
        conf.ok() ? common::NewKafkaClient(RD_KAFKA_CONSUMER, *std::move(conf), {},
                                           "a test consumer")
                  : conf.status();
    EXPECT_TRUE(rk.ok()) << rk.status();
    return rk.ok() ? *std::move(rk) : nullptr;
  }

  // The group's committed offset of each partition (-1: none), asked of the group
  // coordinator without joining the group.
  std::map<int32_t, int64_t> GroupOffsets() {
    common::KafkaClient rk = Client({{"bootstrap.servers", brokers_}, {"group.id", Group()}});
    common::KafkaPartitionList owned(rd_kafka_topic_partition_list_new(kPartitions));
    rd_kafka_topic_partition_list_t* list = owned.get();
    for (int p = 0; p < kPartitions; ++p) {
      rd_kafka_topic_partition_list_add(list, topic_.c_str(), p);
    }
    std::map<int32_t, int64_t> out;
    if (rd_kafka_committed(rk.get(), list, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int i = 0; i < list->cnt; ++i) {
        out[list->elems[i].partition] =
            list->elems[i].offset >= 0 ? list->elems[i].offset : -1;
      }
    }
    return out;
  }

  // The end of each partition (the high watermark).
  std::map<int32_t, int64_t> EndOffsets() {
    common::KafkaClient rk = Client({{"bootstrap.servers", brokers_}});
    std::map<int32_t, int64_t> out;
    for (int p = 0; p < kPartitions; ++p) {
      int64_t low = 0, high = 0;
      if (rd_kafka_query_watermark_offsets(rk.get(), topic_.c_str(), p, &low, &high, 10000) ==
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        out[p] = high;
      }
    }
    return out;
  }

  bool CommittedOffsetsReachTheEnd() {
    std::map<int32_t, int64_t> end = EndOffsets(), committed = GroupOffsets();
    if (end.size() != kPartitions || committed.size() != kPartitions) return false;
    for (int p = 0; p < kPartitions; ++p) {
      if (committed[p] < end[p]) return false;
    }
    return true;
  }

  // Records in the topic, and how many carry an id seen before in it.
  std::pair<size_t, size_t> TopicRecordsAndDuplicates() {
    auto c = PublisherTest::StartConsumer();
    size_t distinct = 0;
    WaitFor(
        [&] {
          distinct = DistinctIds(*c, static_cast<size_t>(Committed())).size();
          return distinct >= static_cast<size_t>(Committed());
        },
        absl::Seconds(60));
    size_t records = c->Count();
    return {records, records - distinct};
  }

  std::string prefix_, topic_;
  int started_ = 0;
  int written_transactions_ = 0;
  std::map<std::string, int> next_;
  std::map<std::string, std::unique_ptr<Process>> consumers_;
};

TEST_F(ConsumerKafkaTest, DuplicatesFromPublisherRewindsAreAppliedOnce) {
  publisher_ = Publisher();
  StartConsumer("a");
  {
    BackgroundWriter writer(this);
    // kill -9 mid-stream: the publisher rewinds to its last confirmed LSN and
    // publishes again what the broker had already stored.
    for (int kill = 0; kill < 4; ++kill) {
      int64_t before = Applied();
      ASSERT_TRUE(WaitFor([&] { return Applied() > before + 200; }, absl::Seconds(60)));
      publisher_->Signal(SIGKILL);
      publisher_->Wait(absl::Seconds(10));
      publisher_ = Publisher();
    }
  }
  ExpectEveryEventAppliedOnce();
  auto [records, duplicates] = TopicRecordsAndDuplicates();
  EXPECT_GT(duplicates, 0u) << "the publisher's kills produced no duplicate to skip";
  std::cerr << "records " << records << ", duplicates " << duplicates << ", events "
            << Committed() << "\n";
}

TEST_F(ConsumerKafkaTest, AConsumerKilledBeforeItsOffsetCommitReReadsAndSkips) {
  publisher_ = Publisher();
  // Offsets are committed only once an hour, so every applied event is between
  // its database commit and its offset commit when the consumer dies.
  StartConsumer("a", {"-X", "auto.commit.interval.ms=3600000"});
  Write(300);
  int64_t committed = Committed();
  ASSERT_TRUE(WaitFor([&] { return Applied() >= committed; }, absl::Seconds(120)));
  Kill("a");
  std::map<int32_t, int64_t> offsets = GroupOffsets();
  for (const auto& [p, offset] : offsets) EXPECT_EQ(offset, -1) << "partition " << p;

  StartConsumer("a");
  ASSERT_TRUE(WaitFor([&] { return CommittedOffsetsReachTheEnd(); }, absl::Seconds(120)));
  // Everything was read again, and skipped.
  EXPECT_EQ(Applications(), committed);
  consumers_["a"]->Signal(SIGTERM);
  ASSERT_EQ(consumers_["a"]->Wait(absl::Seconds(30)), 0) << consumers_["a"]->Log();
  EXPECT_THAT(consumers_["a"]->Log(), testing::HasSubstr(absl::StrCat(
                                          "\"applied\":0,\"duplicates\":", committed)));
  ExpectEveryEventAppliedOnce();
}

TEST_F(ConsumerKafkaTest, TwoConsumersThroughRebalancesApplyOnceInOrder) {
  publisher_ = Publisher();
  StartConsumer("a");
  {
    BackgroundWriter writer(this);
    ASSERT_TRUE(WaitFor([&] { return Applied() > 300; }, absl::Seconds(60)));
    StartConsumer("b");  // A rebalance: the partitions are shared.
    ASSERT_TRUE(WaitFor([&] { return HoldsPartitions("b"); }, absl::Seconds(60)))
        << consumers_["b"]->Log();
    int64_t before = Applied();
    ASSERT_TRUE(WaitFor([&] { return Applied() > before + 300; }, absl::Seconds(60)));
    Kill("a");  // Another, once its session times out: b takes everything.
    before = Applied();
    ASSERT_TRUE(WaitFor([&] { return Applied() > before + 300; }, absl::Seconds(60)));
    StartConsumer("a");  // And back.
    before = Applied();
    ASSERT_TRUE(WaitFor([&] { return Applied() > before + 300; }, absl::Seconds(60)));
  }
  ExpectEveryEventAppliedOnce();
}

TEST_F(ConsumerKafkaTest, APoisonEventIsDeadLetteredAndTheRestFlow) {
  publisher_ = Publisher();
  StartConsumer("a");
  Write(20);
  ASSERT_TRUE(sql_->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order','o1','OrderPaid',"
                         "'{\"order\":\"o1\",\"amount\":\"lots\"}')")
                  .ok());
  std::string poison = ValueOrDie(
      sql_->Value("SELECT id::text FROM outbox WHERE payload->>'amount' = 'lots'"));
  Write(20);
  int64_t good = Committed() - 1;
  ASSERT_TRUE(WaitFor([&] { return Applied() >= good; }, absl::Seconds(120)));
  auto dlq = ValueOrDie(harness::Consumer::Start(brokers_, {DeadLetterTopic()}));
  ASSERT_TRUE(WaitFor([&] { return dlq->Count() >= 1; }, absl::Seconds(60)));
  auto dead = dlq->Records();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(Header(dead[0], "id"), poison);
  EXPECT_EQ(Header(dead[0], "dlq.reason"), "permanent error");
  EXPECT_THAT(Header(dead[0], "dlq.error"), testing::HasSubstr("numeric"));
  EXPECT_EQ(Header(dead[0], "dlq.source.topic"), topic_);
  EXPECT_EQ(Header(dead[0], "dlq.consumer.group"), Group());
  ASSERT_TRUE(WaitFor([&] { return CommittedOffsetsReachTheEnd(); }, absl::Seconds(60)));
  EXPECT_EQ(Applications(), good);
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM payment_log WHERE event_id = '",
                               poison, "'")),
            0);
}

TEST_F(ConsumerKafkaTest, ALockedRowIsRetriedWhileTheOtherPartitionsFlow) {
  publisher_ = Publisher();
  // With a lock timeout, a locked row fails the handler's statement (55P03, a
  // retryable error) instead of waiting for it.
  StartConsumer("a", {}, " options='-c lock_timeout=300'");
  Write(50);
  int64_t first = Committed();
  ASSERT_TRUE(WaitFor([&] { return Applied() >= first; }, absl::Seconds(120)));
  std::string partition = ValueOrDie(sql_->Value(
      "SELECT p.kafka_partition FROM processed_messages p JOIN outbox o ON o.id::text = "
      "p.id WHERE o.aggregate_id = 'o3' LIMIT 1"));

  auto locker = ValueOrDie(cluster_->Connect());
  ASSERT_TRUE(
      locker->Exec("BEGIN; SELECT * FROM order_payments WHERE order_id = 'o3' FOR UPDATE")
          .ok());
  Write(100);
  // Events of the other partitions are applied while o3's partition waits.
  auto others_pending = [&] {
    return Count(absl::StrCat(
        "SELECT count(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM payment_log p "
        "WHERE p.event_id = o.id::text) AND o.aggregate_id IN (SELECT o2.aggregate_id "
        "FROM outbox o2 JOIN processed_messages m ON m.id = o2.id::text "
        "WHERE m.kafka_partition <> ",
        partition, ")"));
  };
  EXPECT_TRUE(WaitFor([&] { return others_pending() == 0; }, absl::Seconds(60)));
  EXPECT_TRUE(WaitFor(
      [&] {
        std::string log = consumers_["a"]->Log();
        size_t retries = 0;
        for (size_t at = 0;
             (at = log.find("retrying the record", at)) != std::string::npos; ++at) {
          ++retries;
        }
        return retries >= 3;
      },
      absl::Seconds(60)));
  EXPECT_LT(Applied(), Committed()) << "o3's partition went on past its locked row";
  ASSERT_TRUE(locker->Exec("ROLLBACK").ok());
  ExpectEveryEventAppliedOnce();
  consumers_["a"]->Signal(SIGTERM);
  ASSERT_EQ(consumers_["a"]->Wait(absl::Seconds(30)), 0);
  EXPECT_THAT(consumers_["a"]->Log(), testing::HasSubstr("\"dead_lettered\":0}"));
}

// At the kit's defaults, an instance killed for good loses its group little time:
// the other keeps applying its own partitions through the rebalance (cooperative
// rebalancing), and takes the dead one's once its session times out (10 s). With
// librdkafka's defaults (eager rebalancing, a 45 s session) the dead one's events
// waited about 50 s here, and every rebalance stopped the whole group.
TEST_F(ConsumerKafkaTest, AtTheDefaultsAKilledInstancesEventsAreAppliedWithinSeconds) {
  publisher_ = Publisher();
  StartConsumer("a", {}, "", /*kit_defaults=*/true);
  StartConsumer("b", {}, "", /*kit_defaults=*/true);
  ASSERT_TRUE(WaitFor([&] { return HoldsPartitions("a") && HoldsPartitions("b"); },
                      absl::Seconds(90)))
      << consumers_["a"]->Log() << consumers_["b"]->Log();
  Write(50);
  ASSERT_TRUE(WaitFor([&] { return Applied() >= Committed(); }, absl::Seconds(60)));
  Kill("a");
  absl::Time killed = absl::Now();
  Write(50);  // Events on every partition: the dead one's too.
  ASSERT_TRUE(WaitFor([&] { return Applied() >= Committed(); }, absl::Seconds(180)));
  absl::Duration took = absl::Now() - killed;
  EXPECT_LT(took, absl::Seconds(30)) << consumers_["b"]->Log();
  std::cerr << "an instance killed for good: every event applied "
            << absl::FormatDuration(took) << " after the kill\n";
  ExpectEveryEventAppliedOnce();
}

// An instance that restarts under its own name (static membership, KIP-345: a
// StatefulSet's pod, a systemd unit) takes its partitions back as it rejoins:
// the group does not rebalance, so the other instance keeps its partitions and
// the restarted one's events wait for its restart, not for its session to time
// out (10 s) and a rebalance. Also: every line either instance writes is one of
// its JSON log lines, librdkafka's own included (here the dead-letter producer's
// warning that group.instance.id is not a producer property).
TEST_F(ConsumerKafkaTest, AnInstanceRestartedUnderItsOwnNameTakesItsPartitionsBack) {
  publisher_ = Publisher();
  auto named = [&](const std::string& name) {
    StartConsumer(name, {"-X", absl::StrCat("group.instance.id=", Group(), "-", name)},
                  "", /*kit_defaults=*/true);
  };
  named("a");
  named("b");
  ASSERT_TRUE(WaitFor([&] { return HoldsPartitions("a") && HoldsPartitions("b"); },
                      absl::Seconds(90)))
      << consumers_["a"]->Log() << consumers_["b"]->Log();
  Write(50);
  ASSERT_TRUE(WaitFor([&] { return Applied() >= Committed(); }, absl::Seconds(60)));
  auto revocations = [&](const std::string& name) {
    std::string log = consumers_[name]->Log();
    int n = 0;
    for (size_t at = log.find("\"msg\":\"partitions revoked\""); at != std::string::npos;
         at = log.find("\"msg\":\"partitions revoked\"", at + 1))
      ++n;
    return n;
  };
  int b_revoked = revocations("b");
  Kill("a");
  absl::Time killed = absl::Now();
  named("a");
  Write(50);  // Events on every partition: the restarted one's too.
  ASSERT_TRUE(WaitFor([&] { return Applied() >= Committed(); }, absl::Seconds(180)));
  absl::Duration took = absl::Now() - killed;
  std::cerr << "an instance killed and restarted under its name: every event applied "
            << absl::FormatDuration(took) << " after the kill\n";
  // Without the name the dead member's partitions move once its session ends,
  // 7-10 s after the kill (heartbeats every 3 s): 9.8 s here. With it, 0.3 s.
  EXPECT_LT(took, absl::Seconds(5)) << "waited for the session timeout\n"
                                    << consumers_["a"]->Log();
  EXPECT_TRUE(HoldsPartitions("a")) << consumers_["a"]->Log();
  EXPECT_EQ(revocations("b"), b_revoked) << "the group rebalanced\n"
                                         << consumers_["b"]->Log();
  ExpectEveryEventAppliedOnce();
  for (const char* name : {"a", "b"}) {
    std::string log = consumers_[name]->Log();
    EXPECT_THAT(log, ::testing::HasSubstr("\"component\":\"librdkafka\""));
    for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty()))
      EXPECT_TRUE(absl::StartsWith(line, "{")) << "not a log line: " << line;
  }
}

// Kills the publisher and the consumers at random while events flow (kill -9 or
// SIGTERM, one at a time, each restarted at once), then checks every committed
// event's effect applied exactly once. OUTBOX_CONSUMER_CHAOS_FAULTS sets how many
// faults (scripts/consumer-chaos.sh runs many more than ctest's 12).
TEST_F(ConsumerKafkaTest, KillsOfThePublisherAndConsumersAtRandomLeaveEachEffectOnce) {
  int faults = 12;
  if (const char* f = std::getenv("OUTBOX_CONSUMER_CHAOS_FAULTS")) faults = std::atoi(f);
  std::mt19937 rng(20);
  publisher_ = Publisher();
  StartConsumer("a");
  StartConsumer("b");
  std::map<std::string, int> counts;
  {
    BackgroundWriter writer(this);
    for (int i = 0; i < faults; ++i) {
      int64_t before = Applied();
      ASSERT_TRUE(WaitFor([&] { return Applied() > before + 100; }, absl::Seconds(90)))
          << "no progress before fault " << i;
      int target = static_cast<int>(rng() % 3);  // publisher, a, b
      int sig = rng() % 3 == 0 ? SIGTERM : SIGKILL;
      std::string what = absl::StrCat(target == 0   ? "publisher"
                                      : target == 1 ? "a"
                                                    : "b",
                                      sig == SIGKILL ? " kill-9" : " sigterm");
      ++counts[what];
      if (target == 0) {
        publisher_->Signal(sig);
        publisher_->Wait(absl::Seconds(30));
        publisher_ = Publisher();
      } else {
        std::string name = target == 1 ? "a" : "b";
        consumers_[name]->Signal(sig);
        consumers_[name]->Wait(absl::Seconds(30));
        StartConsumer(name);
      }
    }
  }
  ExpectEveryEventAppliedOnce();
  auto [records, duplicates] = TopicRecordsAndDuplicates();
  std::string faults_done;
  for (const auto& [what, n] : counts) absl::StrAppend(&faults_done, " ", what, "=", n);
  std::cerr << "consumer chaos: events committed " << Committed() << ", applied "
            << Applications() << " (each once), records in the topic " << records
            << " (duplicates " << duplicates << "), faults:" << faults_done << "\n";
}

}  // namespace
}  // namespace consumer
