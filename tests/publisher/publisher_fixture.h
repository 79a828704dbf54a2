// The fixture of the end-to-end tests: a throwaway PostgreSQL with outbox tables,
// mock-kafka with their topics, and helpers to run the publisher binary and read
// what it published.
#ifndef TESTS_PUBLISHER_PUBLISHER_FIXTURE_H_
#define TESTS_PUBLISHER_PUBLISHER_FIXTURE_H_

#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cdc/lsn.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace publisher {

using cdc::Lsn;
using harness::ConsumedRecord;
using harness::Consumer;
using harness::MockKafka;
using harness::PgCluster;
using harness::PgSession;
using harness::Process;
using harness::WaitFor;
using test_util::ValueOrDie;

inline constexpr char kSchema[] = R"sql(
  CREATE TABLE outbox (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    aggregate_type text NOT NULL, aggregate_id text NOT NULL, event_type text NOT NULL,
    payload jsonb NOT NULL, headers jsonb, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE outbox_bin (
    id bigint PRIMARY KEY, aggregate_type text NOT NULL, aggregate_id text NOT NULL,
    event_type text NOT NULL, payload bytea NOT NULL);
  CREATE TABLE other (id serial PRIMARY KEY, v text);
)sql";

// The flags of --delivery=exactly-once in these tests: short Kafka transactions.
inline const std::vector<std::string> kExactlyOnce = {"--delivery", "exactly-once",
                                                      "--transaction-interval", "50ms"};

// A record's header, or "<absent>".
inline std::string Header(const ConsumedRecord& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "<absent>";
}

// The distinct ids (header `id`) of every record the consumer has seen so far.
inline std::set<std::string> PublishedIds(Consumer& consumer) {
  std::set<std::string> ids;
  for (const auto& r : consumer.Records()) ids.insert(Header(r, "id"));
  return ids;
}

// Distinct ids the consumer has seen, once it has seen at least `n` (or the
// deadline passed): the consumer may trail the slot's confirmation.
inline std::set<std::string> DistinctIds(Consumer& consumer, size_t n) {
  std::set<std::string> ids;
  WaitFor(
      [&] {
        ids = PublishedIds(consumer);
        return ids.size() >= n;
      },
      absl::Seconds(60));
  return ids;
}

// `name` as the publisher serves it on /metrics, with its slot label (every sample
// has one) and any `more` labels: outbox_publisher_up{slot="outbox_publisher"}.
inline std::string Series(const std::string& name, const std::string& more = "",
                          const std::string& slot = "outbox_publisher") {
  return absl::StrCat(name, "{slot=\"", slot, "\"", more.empty() ? "" : ",", more, "}");
}

class PublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = ValueOrDie(PgCluster::Start(ServerSettings(), ServerVersion()));
    sql_ = ValueOrDie(cluster_->Connect());
    ASSERT_TRUE(sql_->Exec(kSchema).ok());
    log_path_ = absl::StrCat(cluster_->dir(), "/publisher.log");
    SetUpBroker();
  }

  // The server's settings and major release (0: $PG_VERSION, else Debian's 15); a
  // fixture that needs others overrides these.
  virtual std::vector<std::string> ServerSettings() { return {"TimeZone=UTC"}; }
  virtual int ServerVersion() { return 0; }

  // mock-kafka with the default template's topics. A fixture on another broker
  // overrides this, setting brokers_, topics_ and any flags the publisher needs.
  virtual void SetUpBroker() {
    mock_ = ValueOrDie(MockKafka::Start(1));
    brokers_ = mock_->bootstrap();
    topics_ = {"outbox.event.order", "outbox.event.user", "outbox.event.bin"};
    for (const std::string& topic : topics_) {
      ASSERT_EQ(mock_->Command(absl::StrCat("topic ", topic, " 4")), "ok");
    }
  }

  void TearDown() override {
    if (HasFailure() && publisher_) {
      std::cerr << "--- publisher log ---\n" << publisher_->Log() << "\n";
    }
  }

  // The publisher's command line in these tests, with `extra` flags at the end.
  std::vector<std::string> PublisherArgv(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                     "--pg",
                                     cluster_->conninfo(),
                                     "--brokers",
                                     publisher_brokers_.empty() ? brokers_
                                                                : publisher_brokers_,
                                     "--table",
                                     "outbox,outbox_bin",
                                     "--status-interval",
                                     "500ms",
                                     "--log-stats-every",
                                     "1s",
                                     "-X",
                                     "reconnect.backoff.max.ms=500"};
    argv.insert(argv.end(), broker_flags_.begin(), broker_flags_.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // `env`: NAME=value settings for the publisher's environment (through env(1),
  // so they stay off the publisher's own command line).
  std::unique_ptr<Process> StartPublisher(std::vector<std::string> extra = {},
                                          std::vector<std::string> env = {}) {
    std::vector<std::string> argv = PublisherArgv(extra);
    if (!env.empty()) {
      env.insert(env.begin(), "/usr/bin/env");
      argv.insert(argv.begin(), env.begin(), env.end());
    }
    auto p = ValueOrDie(Process::Start(argv, log_path_));
    EXPECT_TRUE(WaitFor(
        [&] {
          return p->Log().find("\"msg\":\"streaming\"") != std::string::npos ||
                 !p->running();
        },
        absl::Seconds(60)))
        << p->Log();
    EXPECT_TRUE(p->running()) << p->Log();
    return p;
  }

  std::unique_ptr<Consumer> StartConsumer() {
    return ValueOrDie(Consumer::Start(brokers_, topics_));
  }

  Lsn Query(const std::string& q) {
    return ValueOrDie(Lsn::Parse(ValueOrDie(sql_->Value(q))));
  }
  Lsn Confirmed() {
    return Query(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
        "WHERE slot_name = 'outbox_publisher'");
  }
  Lsn WalInsert() { return Query("SELECT pg_current_wal_insert_lsn()::text"); }

  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<PgSession> sql_;
  std::unique_ptr<MockKafka> mock_;
  std::string brokers_;                    // What the harness's clients use.
  std::string publisher_brokers_;          // --brokers, when not brokers_.
  std::vector<std::string> topics_;        // What StartConsumer reads.
  std::vector<std::string> broker_flags_;  // Flags a broker's fixture adds.
  std::unique_ptr<Process> publisher_;
  std::string log_path_;
};

}  // namespace publisher

#endif  // TESTS_PUBLISHER_PUBLISHER_FIXTURE_H_
