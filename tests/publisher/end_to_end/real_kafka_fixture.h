// The real Apache Kafka cluster the tests of real_kafka_tests share: three KRaft
// nodes from Maven Central's jars (tools/harness/kafka_cluster.sh), started once
// per test binary (its JVMs start slowly), with a fault-proxy in front of each
// broker's second listener; and the fixture whose tests each use topics, a
// transactional id and a checkpoint topic of their own.
#ifndef TESTS_PUBLISHER_END_TO_END_REAL_KAFKA_FIXTURE_H_
#define TESTS_PUBLISHER_END_TO_END_REAL_KAFKA_FIXTURE_H_

#include <signal.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"
#include "tests/publisher/publisher_fixture.h"
#include "tools/harness/kafka_cluster.h"

namespace publisher {

using harness::FaultProxy;
using harness::KafkaCluster;

// Shared by every test of the binary; made by the KafkaEnvironment.
inline KafkaCluster* cluster = nullptr;
// The one account of the cluster's SASL/PLAIN listeners.
inline constexpr char kSaslUser[] = "outbox";
inline constexpr char kSaslPassword[] = "pw-5e3cr3t-q7";
// One fault-proxy in front of each broker's second listener: a publisher given
// cluster->external_bootstrap() reaches the cluster only through these, so a test
// can silence every path between it and the brokers.
inline std::vector<FaultProxy*> proxies;

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
          ValueOrDie(FaultProxy::Start(absl::StrCat("127.0.0.1:", listen))));
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
  std::vector<std::unique_ptr<FaultProxy>> owned_proxies_;
  std::unique_ptr<KafkaCluster> owned_;
};

inline const auto* const kEnvironment =
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
    for (FaultProxy* proxy : proxies) EXPECT_TRUE(proxy->Thaw().ok());
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

  static std::vector<Event> Events(const std::vector<harness::ConsumedRecord>& rs) {
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

}  // namespace publisher

#endif  // TESTS_PUBLISHER_END_TO_END_REAL_KAFKA_FIXTURE_H_
