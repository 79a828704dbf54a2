// Guarantee 8 (README, "Guarantees"), one test per kind of bad input: it gets one
// log line that names the problem and the fix, the documented exit code, and no
// LSN confirmed past an unpublished row.
#include <signal.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

class BadInputTest : public PublisherTest {
 protected:
  // Runs the publisher to its end; checks the exit code and that exactly one
  // error line was logged, containing `message`. Returns the log.
  std::string ExpectExit(std::vector<std::string> args, int code,
                         const std::string& message, const std::string& conninfo = "") {
    std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                     "--pg",
                                     conninfo.empty() ? cluster_->conninfo() : conninfo,
                                     "--brokers",
                                     mock_->bootstrap(),
                                     "--status-interval",
                                     "200ms"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = ValueOrDie(
        Process::Start(argv, absl::StrCat(cluster_->dir(), "/run-", ++runs_, ".log")));
    std::optional<int> exit = p->Wait(absl::Seconds(90));
    std::string log = p->Log();
    EXPECT_EQ(exit, code) << log;
    EXPECT_THAT(log, HasSubstr(message));
    EXPECT_EQ(ErrorLines(log), 1) << log;
    return log;
  }

  // What the publisher creates at start, done first so that rows written before
  // it runs are in the slot's WAL.
  void CreatePublicationAndSlot(const std::string& tables = "outbox") {
    ASSERT_TRUE(sql_->Exec(absl::StrCat("CREATE PUBLICATION outbox_publisher FOR TABLE ",
                                        tables, " WITH (publish = 'insert')"))
                    .ok());
    ASSERT_TRUE(
        sql_->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                   "'pgoutput')")
            .ok());
  }

  // Runs the publisher (with `args`) until it has confirmed everything, applies
  // `change`, then commits `row`: the publisher must stop with exit 1 and one error
  // line containing `message`, and nothing may be confirmed past the row.
  void ExpectRuntimeStop(std::vector<std::string> args,
                         const std::function<void()>& change, const std::string& row,
                         const std::string& message) {
    publisher_ = StartPublisher(std::move(args));
    ASSERT_TRUE(WaitFor([&] { return Confirmed() >= WalInsert(); }, absl::Seconds(30)));
    change();
    Lsn before = WalInsert();
    ASSERT_TRUE(sql_->Exec(row).ok());
    EXPECT_EQ(publisher_->Wait(absl::Seconds(90)), 1) << publisher_->Log();
    std::string log = publisher_->Log();
    EXPECT_THAT(log, HasSubstr(message));
    EXPECT_EQ(ErrorLines(log), 1) << log;
    EXPECT_LE(Confirmed(), before) << "confirmed past the row that was not published";
  }

  static int ErrorLines(const std::string& log) {
    int errors = 0;
    for (absl::string_view line : absl::StrSplit(log, '\n')) {
      errors += absl::StrContains(line, "\"level\":\"error\"");
    }
    return errors;
  }

  bool SlotExists() {
    return !ValueOrDie(sql_->Exec("SELECT 1 FROM pg_replication_slots")).empty();
  }

  int runs_ = 0;
};

TEST_F(BadInputTest, BadFlagsExitTwoAndCreateNothing) {
  ExpectExit({"--no-such-flag"}, 2, "unknown flag --no-such-flag");
  ExpectExit(
      {"--max-in-flight", "lots"}, 2,
      "invalid value \\\"lots\\\" for --max-in-flight: expected a positive integer");
  ExpectExit({"--on-error", "ignore"}, 2, "expected halt or dead-letter");
  ExpectExit({"--status-interval", "10"}, 2, "expected a positive duration");
  ExpectExit({"-X", "no.such.property=1"}, 2, "invalid librdkafka property");
  EXPECT_FALSE(SlotExists());
}

TEST_F(BadInputTest, SettingsThatVoidAGuaranteeExitTwoNamingIt) {
  ExpectExit({"-X", "enable.idempotence=false", "-X", "acks=1"}, 2,
             "enable.idempotence: voids per-key order");
  ExpectExit({"-X", "enable.idempotence=false", "-X", "acks=1"}, 2,
             "acks: voids at-least-once (guarantees 1 and 2)");
  ExpectExit({"--delivery", "exactly-once", "-X", "max.in.flight=10"}, 2,
             "max.in.flight: voids per-key order (guarantee 4)");
  EXPECT_FALSE(SlotExists());
}

TEST_F(BadInputTest, UnreachablePostgresExitsTwo) {
  ExpectExit({}, 2, "cannot connect to PostgreSQL",
             "host=127.0.0.1 port=1 connect_timeout=5");
}

TEST_F(BadInputTest, UnreachableBrokersExitTwoBeforeTouchingPostgres) {
  std::vector<std::string> argv = {"--brokers", "127.0.0.1:1"};
  ExpectExit(argv, 2, "cannot reach the Kafka brokers 127.0.0.1:1");
  EXPECT_FALSE(SlotExists());
}

TEST_F(BadInputTest, WalLevelNotLogicalExitsTwo) {
  auto replica = ValueOrDie(PgCluster::Start({"wal_level=replica"}));
  ExpectExit({}, 2, "wal_level = logical", replica->conninfo());
}

TEST_F(BadInputTest, MissingTableExitsTwo) {
  ExpectExit({"--table", "missing_table"}, 2,
             "table \\\"public\\\".\\\"missing_table\\\" does not exist");
  EXPECT_FALSE(SlotExists());
}

TEST_F(BadInputTest, MissingColumnExitsTwo) {
  ExpectExit({"--table", "outbox", "--key-column", "nope"}, 2,
             "has no column \\\"nope\\\" (--key-column)");
  EXPECT_FALSE(SlotExists());
}

TEST_F(BadInputTest, SlotOfAnotherPluginExitsTwo) {
  ASSERT_TRUE(sql_->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                         "'test_decoding')")
                  .ok());
  Lsn before = Confirmed();
  ExpectExit({"--table", "outbox"}, 2, "uses plugin test_decoding, not pgoutput");
  EXPECT_EQ(Confirmed(), before);
}

// Writes `good` rows, then one huge row, then more: returns the LSN just before
// the huge row's transaction.
Lsn WriteAroundAHugeRow(PgSession& sql) {
  EXPECT_TRUE(
      sql.Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
               "SELECT 'order', 'o-' || i, 'Small', '{}' FROM generate_series(1, 3) i")
          .ok());
  Lsn before =
      ValueOrDie(Lsn::Parse(ValueOrDie(sql.Value("SELECT pg_current_wal_insert_lsn()"))));
  EXPECT_TRUE(
      sql.Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
               "SELECT 'order', 'o-huge', 'Huge', jsonb_build_object('blob', "
               "string_agg(md5(i::text), '')) FROM generate_series(1, 400) i")
          .ok());
  EXPECT_TRUE(
      sql.Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
               "VALUES ('order', 'o-after', 'After', '{}')")
          .ok());
  return before;
}

TEST_F(BadInputTest, OversizedMessageHaltsWithoutConfirmingIt) {
  CreatePublicationAndSlot();
  Lsn before_huge = WriteAroundAHugeRow(*sql_);
  std::string log = ExpectExit({"--table", "outbox", "-X", "message.max.bytes=4096"}, 1,
                               "MSG_SIZE_TOO_LARGE");
  EXPECT_THAT(log, HasSubstr("--on-error=dead-letter"));
  EXPECT_LE(Confirmed(), before_huge) << "confirmed past the unpublished row";
  // Restarted, it stops at the same row again: nothing was skipped.
  ExpectExit({"--table", "outbox", "-X", "message.max.bytes=4096"}, 1,
             "MSG_SIZE_TOO_LARGE");
  EXPECT_LE(Confirmed(), before_huge);
}

TEST_F(BadInputTest, OversizedMessageGoesToTheDeadLetterTopicWithoutItsValue) {
  ASSERT_EQ(mock_->Command("topic outbox.dead-letter 1"), "ok");
  CreatePublicationAndSlot("outbox, outbox_bin");
  WriteAroundAHugeRow(*sql_);
  Lsn end = WalInsert();
  publisher_ =
      StartPublisher({"-X", "message.max.bytes=4096", "--on-error", "dead-letter"});
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)))
      << publisher_->Log();
  auto dlq = ValueOrDie(Consumer::Start(mock_->bootstrap(), {"outbox.dead-letter"}));
  ASSERT_TRUE(WaitFor([&] { return dlq->Count() >= 1; }, absl::Seconds(30)));
  ConsumedRecord letter = dlq->Records()[0];
  EXPECT_THAT(Header(letter, "error"), HasSubstr("MSG_SIZE_TOO_LARGE"));
  EXPECT_EQ(Header(letter, "value_dropped"), "true");
  EXPECT_EQ(Header(letter, "original_topic"), "outbox.event.order");
  EXPECT_EQ(letter.key, "o-huge");
  EXPECT_TRUE(letter.value.empty());
}

constexpr char kRow[] =
    "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
    "VALUES ('order', 'o-2', 'E', '{}')";

TEST_F(BadInputTest, RejectedMessageHaltsWithoutConfirmingIt) {
  ExpectRuntimeStop(
      {"--table", "outbox"},
      [&] {
        // The broker refuses the next produce requests: not authorized for the topic.
        std::string errors = "errors Produce";
        for (int i = 0; i < 20; ++i) errors += " TOPIC_AUTHORIZATION_FAILED";
        ASSERT_EQ(mock_->Command(errors), "ok");
      },
      kRow, "TOPIC_AUTHORIZATION_FAILED");
}

TEST_F(BadInputTest, MissingTopicHaltsWithoutConfirmingIt) {
  // As a cluster with auto.create.topics.enable=false answers for a topic nobody
  // created.
  ASSERT_EQ(mock_->Command("topic-error outbox.event.nowhere UNKNOWN_TOPIC_OR_PART"),
            "ok");
  ExpectRuntimeStop(
      {"--table", "outbox", "-X", "topic.metadata.propagation.max.ms=1000"}, [] {},
      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
      "VALUES ('nowhere', 'n-1', 'E', '{}')",
      "UNKNOWN_TOPIC");
}

TEST_F(BadInputTest, DroppedPublicationMidStreamStopsWithoutConfirmingNewRows) {
  ExpectRuntimeStop(
      {"--table", "outbox"},
      [&] { ASSERT_TRUE(sql_->Exec("DROP PUBLICATION outbox_publisher").ok()); }, kRow,
      "publication \\\"outbox_publisher\\\" does not exist");
}

TEST_F(BadInputTest, AlteredOutboxTableMidStreamStopsAtTheFirstRowItCannotMap) {
  ExpectRuntimeStop(
      {"--table", "outbox"},
      [&] { ASSERT_TRUE(sql_->Exec("ALTER TABLE outbox DROP COLUMN event_type").ok()); },
      "INSERT INTO outbox (aggregate_type, aggregate_id, payload) VALUES ('order', "
      "'o-1', '{}')",
      "has no column \\\"event_type\\\" (--type-column)");
}

TEST_F(BadInputTest, SlotWhoseWalWasRemovedExitsTwo) {
  auto small = ValueOrDie(PgCluster::Start(
      {"max_slot_wal_keep_size=1MB", "max_wal_size=32MB", "min_wal_size=32MB"}));
  auto sql = ValueOrDie(small->Connect());
  ASSERT_TRUE(sql->Exec(kSchema).ok());
  ASSERT_TRUE(sql->Exec("CREATE PUBLICATION outbox_publisher FOR TABLE outbox").ok());
  ASSERT_TRUE(
      sql->Exec(
             "SELECT pg_create_logical_replication_slot('outbox_publisher', 'pgoutput')")
          .ok());
  // Write and switch WAL until checkpoints remove what the slot still needs.
  ASSERT_TRUE(WaitFor(
      [&] {
        EXPECT_TRUE(
            sql->Exec("INSERT INTO other (v) SELECT repeat('x', 1000) FROM "
                      "generate_series(1, 5000); SELECT pg_switch_wal(); CHECKPOINT")
                .ok());
        return ValueOrDie(sql->Value("SELECT wal_status FROM pg_replication_slots")) ==
               "lost";
      },
      absl::Seconds(120)));
  ExpectExit({"--table", "outbox"}, 2, "wal_status = lost", small->conninfo());
}

}  // namespace
}  // namespace publisher
