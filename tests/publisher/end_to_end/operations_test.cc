// Operations end to end: --check against real servers, /metrics and /healthz over
// real HTTP, and the slot watcher (--max-retained-wal, a dropped outbox table).
#include <httplib.h>
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/publisher_fixture.h"
#include "tools/harness/http_get.h"
#include "tools/harness/metrics_text.h"

namespace publisher {
namespace {

using harness::HttpGet;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRow[] =
    "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload) "
    "VALUES ('order', 'o-1', 'Created', '{}')";

class OperationsTest : public PublisherTest {
 protected:
  struct CheckRun {
    int exit_code = -1;
    std::string output;
  };

  // Runs --check with the fixture's servers (or `conninfo`) and `args`.
  CheckRun Check(std::vector<std::string> args, const std::string& conninfo = "") {
    std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                     "--check",
                                     "--pg",
                                     conninfo.empty() ? cluster_->conninfo() : conninfo,
                                     "--brokers",
                                     mock_->bootstrap(),
                                     "--table",
                                     "outbox"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = ValueOrDie(
        Process::Start(argv, absl::StrCat(cluster_->dir(), "/check-", ++runs_, ".log")));
    std::optional<int> code = p->Wait(absl::Seconds(90));
    return {code.value_or(-1), p->Log()};
  }

  // The line of `output` about `what`, or "" when there is none.
  static std::string LineAbout(const std::string& output, const std::string& what) {
    for (absl::string_view line : absl::StrSplit(output, '\n')) {
      if (absl::StartsWith(line, absl::StrCat("ok    ", what, ":")) ||
          absl::StartsWith(line, absl::StrCat("FAIL  ", what, ":"))) {
        return std::string(line);
      }
    }
    return "";
  }

  bool SlotExists() {
    return ValueOrDie(
               sql_->Value("SELECT count(*) FROM pg_replication_slots WHERE slot_name = "
                           "'outbox_publisher'")) == "1";
  }

  // GET `path` from a metrics server on `port`: {status, body}, status -1 when no
  // answer came.
  // The value of the sample `series` in a /metrics body, or "" when absent.
  static std::string Sample(const std::string& body, const std::string& series) {
    return harness::SampleValue(body, series).value_or("");
  }

  int runs_ = 0;
};

TEST_F(OperationsTest, CheckPassesOnAHealthyEnvironmentCreatesNothingAndHidesSecrets) {
  const std::string kPgSecret = "PlantedPgSecret-c4e1";
  const std::string kKafkaSecret = "PlantedKafkaSecret-0b7d";
  CheckRun r = Check({"-X", absl::StrCat("sasl.password=", kKafkaSecret), "-X",
                      absl::StrCat("ssl.key.password=", kKafkaSecret)},
                     absl::StrCat(cluster_->conninfo(), " password=", kPgSecret));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("checks passed"));
  EXPECT_THAT(r.output, Not(HasSubstr("FAIL")));
  for (const char* what :
       {"PostgreSQL connection", "server version", "primary", "wal_level",
        "replication slots", "WAL senders", "role", "replication connection",
        "table public.outbox", "columns of public.outbox", "publication outbox_publisher",
        "slot outbox_publisher", "Kafka brokers", "topics of public.outbox"}) {
    EXPECT_THAT(LineAbout(r.output, what), HasSubstr("ok    ")) << what << "\n"
                                                                << r.output;
  }
  EXPECT_THAT(LineAbout(r.output, "topics of public.outbox"),
              HasSubstr("outbox.event.order, outbox.event.user"));
  EXPECT_FALSE(absl::StrContains(r.output, kPgSecret)) << r.output;
  EXPECT_FALSE(absl::StrContains(r.output, kKafkaSecret)) << r.output;
  EXPECT_FALSE(SlotExists()) << "--check created the slot";
  EXPECT_EQ(ValueOrDie(sql_->Value("SELECT count(*) FROM pg_publication")), "0")
      << "--check created the publication";
}

TEST_F(OperationsTest, CheckFailsARoleWithoutReplicationOrSelect) {
  ASSERT_TRUE(sql_->Exec("CREATE ROLE app LOGIN").ok());
  std::string conninfo = cluster_->conninfo();
  conninfo = absl::StrReplaceAll(conninfo, {{"user=postgres", "user=app"}});
  ASSERT_THAT(conninfo, HasSubstr("user=app"));
  CheckRun r = Check({}, conninfo);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(
      LineAbout(r.output, "role"),
      HasSubstr("FAIL  role: role app lacks the REPLICATION attribute: ALTER ROLE "
                "app REPLICATION"));
  EXPECT_THAT(LineAbout(r.output, "replication connection"), HasSubstr("FAIL  "));
  EXPECT_THAT(LineAbout(r.output, "table public.outbox"),
              HasSubstr("GRANT SELECT ON public.outbox TO app"));
  EXPECT_THAT(LineAbout(r.output, "publication outbox_publisher"),
              HasSubstr("have the table owner run CREATE PUBLICATION"));
  EXPECT_THAT(r.output, HasSubstr("checks failed"));
}

TEST_F(OperationsTest, CheckFailsWalLevelAndFullSlotsAndSenders) {
  auto bare = ValueOrDie(PgCluster::Start(
      {"wal_level=replica", "max_replication_slots=0", "max_wal_senders=0"}));
  ASSERT_TRUE(bare->Exec(kSchema).ok());
  CheckRun r = Check({}, bare->conninfo());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(LineAbout(r.output, "wal_level"),
              HasSubstr("FAIL  wal_level: wal_level is 'replica'"));
  EXPECT_THAT(LineAbout(r.output, "replication slots"),
              HasSubstr("raise max_replication_slots"));
  EXPECT_THAT(LineAbout(r.output, "WAL senders"), HasSubstr("raise max_wal_senders"));
}

TEST_F(OperationsTest, CheckFailsTableColumnsPublicationAndSlotProblems) {
  CheckRun missing = Check({"--table", "nowhere"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(LineAbout(missing.output, "table public.nowhere"),
              HasSubstr("FAIL  table public.nowhere: does not exist"));

  CheckRun column = Check({"--type-column", "kind"});
  EXPECT_THAT(LineAbout(column.output, "columns of public.outbox"),
              HasSubstr("has no column \"kind\" (--type-column)"));

  ASSERT_TRUE(sql_->Exec("CREATE PUBLICATION outbox_publisher FOR TABLE other").ok());
  ASSERT_TRUE(sql_->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                         "'test_decoding')")
                  .ok());
  CheckRun r = Check({});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(LineAbout(r.output, "publication outbox_publisher"),
              HasSubstr("ALTER PUBLICATION \"outbox_publisher\" ADD TABLE "
                        "\"public\".\"outbox\""));
  EXPECT_THAT(LineAbout(r.output, "slot outbox_publisher"),
              HasSubstr("uses plugin test_decoding, not pgoutput"));
}

TEST_F(OperationsTest,
       CheckFailsASlotThatRetainsTooMuchWalAndMissingObjectsWithoutCreate) {
  CheckRun nothing = Check({"--create=false"});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(LineAbout(nothing.output, "publication outbox_publisher"),
              HasSubstr("does not exist: create it (CREATE PUBLICATION"));
  EXPECT_THAT(LineAbout(nothing.output, "slot outbox_publisher"),
              HasSubstr("does not exist: create it (SELECT "
                        "pg_create_logical_replication_slot('outbox_publisher', "
                        "'pgoutput'))"));

  ASSERT_TRUE(sql_->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                         "'pgoutput')")
                  .ok());
  ASSERT_TRUE(sql_->Exec("INSERT INTO other (v) SELECT repeat('x', 100) FROM "
                         "generate_series(1, 1000)")
                  .ok());
  CheckRun r = Check({"--max-retained-wal", "64kB"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(LineAbout(r.output, "slot outbox_publisher"),
              HasSubstr("more than --max-retained-wal (65536)"));
}

TEST_F(OperationsTest, CheckFailsKafkaProblems) {
  CheckRun topic = Check({"--topic", "events.{table}", "--on-error", "dead-letter"});
  EXPECT_EQ(topic.exit_code, 2) << topic.output;
  EXPECT_THAT(LineAbout(topic.output, "topics of public.outbox"),
              HasSubstr("every row goes to events.outbox, which does not exist"));
  EXPECT_THAT(LineAbout(topic.output, "dead-letter topic"),
              HasSubstr("outbox.dead-letter does not exist"));

  std::vector<std::string> args = {
      "--brokers", absl::StrCat("127.0.0.1:", harness::FreeTcpPort())};
  CheckRun down = Check(args);
  EXPECT_EQ(down.exit_code, 2) << down.output;
  EXPECT_THAT(LineAbout(down.output, "Kafka brokers"),
              HasSubstr("FAIL  Kafka brokers: "));
  EXPECT_THAT(LineAbout(down.output, "wal_level"), HasSubstr("ok    "))
      << "a Kafka problem hid the PostgreSQL checks";
}

TEST_F(OperationsTest, MetricsAndHealthOverHttp) {
  int port = harness::FreeTcpPort();
  publisher_ = StartPublisher(
      {"--metrics-port", absl::StrCat(port), "--slot-check-interval", "300ms"});
  EXPECT_THAT(publisher_->Log(), HasSubstr("serving /metrics and /healthz"));
  ASSERT_TRUE(
      WaitFor([&] { return HttpGet(port, "/healthz").first == 200; }, absl::Seconds(30)));
  EXPECT_EQ(HttpGet(port, "/healthz").second, "ok\n");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sql_->Exec(kRow).ok());
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)));
  std::string body;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto [status, text] = HttpGet(port, "/metrics");
        body = text;
        return status == 200 &&
               Sample(body, Series("outbox_publisher_acknowledged_total")) == "3" &&
               !Sample(body, Series("outbox_publisher_slot_retained_wal_bytes")).empty();
      },
      absl::Seconds(30)))
      << body;
  EXPECT_EQ(Sample(body, Series("outbox_publisher_rows_seen_total")), "3");
  EXPECT_EQ(Sample(body, Series("outbox_publisher_published_total")), "3");
  EXPECT_EQ(Sample(body, Series("outbox_publisher_in_flight_messages")), "0");
  EXPECT_EQ(Sample(body, Series("outbox_publisher_streaming")), "1");
  EXPECT_EQ(Sample(body, Series("outbox_publisher_commit_to_ack_seconds_count")), "3");
  EXPECT_EQ(Sample(body, Series("outbox_publisher_errors_total", "kind=\"mapping\"")), "0");
  EXPECT_FALSE(Sample(body, Series("outbox_publisher_lag_bytes")).empty());
  // Everything acknowledged: no lag in time, however long ago the rows committed.
  EXPECT_EQ(Sample(body, Series("outbox_publisher_lag_seconds")), "0");
  EXPECT_GE(std::stod(Sample(body, Series("outbox_publisher_confirmed_lsn"))),
            static_cast<double>(end.value()));
  EXPECT_THAT(body,
              HasSubstr("outbox_publisher_build_info{slot=\"outbox_publisher\",version=\""));
  EXPECT_EQ(HttpGet(port, "/nowhere").first, 404);

  // A second publisher on the same slot stands by: not healthy, and it says why.
  int standby_port = harness::FreeTcpPort();
  auto standby = ValueOrDie(
      Process::Start({harness::BuildPath("outbox-publisher"), "--pg",
                      cluster_->conninfo(), "--brokers", mock_->bootstrap(), "--table",
                      "outbox,outbox_bin", "--metrics-port", absl::StrCat(standby_port)},
                     absl::StrCat(cluster_->dir(), "/standby.log")));
  std::pair<int, std::string> verdict;
  ASSERT_TRUE(WaitFor(
      [&] {
        verdict = HttpGet(standby_port, "/healthz");
        return absl::StrContains(verdict.second, "standing by");
      },
      absl::Seconds(60)))
      << standby->Log();
  EXPECT_EQ(verdict.first, 503);
  EXPECT_EQ(verdict.second,
            "not streaming: standing by: another publisher holds the slot\n");
  EXPECT_EQ(
      Sample(HttpGet(standby_port, "/metrics").second, Series("outbox_publisher_up")),
      "0");
  standby->Signal(SIGTERM);
  EXPECT_EQ(standby->Wait(absl::Seconds(30)), 0) << standby->Log();
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0);
}

TEST_F(OperationsTest, HealthTurnsUnhealthyWhenNothingIsAcknowledgedForThirtySeconds) {
  int port = harness::FreeTcpPort();
  publisher_ = StartPublisher({"--metrics-port", absl::StrCat(port)});
  ASSERT_TRUE(
      WaitFor([&] { return HttpGet(port, "/healthz").first == 200; }, absl::Seconds(30)));
  ASSERT_EQ(mock_->Command("down all"), "ok");
  ASSERT_TRUE(sql_->Exec(kRow).ok());
  std::pair<int, std::string> verdict;
  ASSERT_TRUE(WaitFor(
      [&] {
        verdict = HttpGet(port, "/healthz");
        return verdict.first == 503;
      },
      absl::Seconds(90)))
      << verdict.second;
  // With librdkafka's own word for the cause.
  EXPECT_THAT(verdict.second,
              ::testing::StartsWith("1 message(s) in flight and none acknowledged for "
                                    "30s; librdkafka reported "));
  EXPECT_THAT(verdict.second, HasSubstr("Connection refused"));
  EXPECT_GE(std::stod(Sample(HttpGet(port, "/metrics").second,
                             Series("outbox_publisher_oldest_unacked_age_seconds"))),
            30.0);
  ASSERT_EQ(mock_->Command("up all"), "ok");
  EXPECT_TRUE(
      WaitFor([&] { return HttpGet(port, "/healthz").first == 200; }, absl::Seconds(60)));
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
}

TEST_F(OperationsTest, MetricsPortInUseExitsTwo) {
  int port = harness::FreeTcpPort();
  httplib::Server blocker;
  ASSERT_TRUE(blocker.bind_to_port("127.0.0.1", port));
  auto p = ValueOrDie(Process::Start(
      {harness::BuildPath("outbox-publisher"), "--pg", cluster_->conninfo(),
       "--brokers", mock_->bootstrap(), "--metrics-port", absl::StrCat(port)},
      absl::StrCat(cluster_->dir(), "/in-use.log")));
  EXPECT_EQ(p->Wait(absl::Seconds(30)), 2);
  EXPECT_THAT(p->Log(),
              HasSubstr(absl::StrCat("cannot serve metrics on 127.0.0.1:", port)));
}

TEST_F(OperationsTest, DroppedOutboxTableStopsWithinOneCheckInterval) {
  publisher_ = StartPublisher({"--table", "outbox", "--slot-check-interval", "300ms"});
  ASSERT_TRUE(sql_->Exec(kRow).ok());
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)));
  ASSERT_TRUE(sql_->Exec("DROP TABLE outbox").ok());
  // Nothing else reaches the publisher: no change of the dropped table is streamed.
  EXPECT_EQ(publisher_->Wait(absl::Seconds(30)), 1) << publisher_->Log();
  std::string log = publisher_->Log();
  EXPECT_THAT(log, HasSubstr("outbox table public.outbox was dropped while the "
                             "publisher ran"));
  int errors = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n'))
    errors += absl::StrContains(line, "\"level\":\"error\"");
  EXPECT_EQ(errors, 1) << log;
}

TEST_F(OperationsTest, DroppedPublicationStopsWithinOneCheckIntervalWithoutAnyRow) {
  publisher_ = StartPublisher({"--table", "outbox", "--slot-check-interval", "300ms"});
  ASSERT_TRUE(sql_->Exec("DROP PUBLICATION outbox_publisher").ok());
  // No row follows: the walsender alone would notice only at the next change.
  EXPECT_EQ(publisher_->Wait(absl::Seconds(30)), 1) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(),
              HasSubstr("the publication changed while the publisher ran: publication "
                        "\\\"outbox_publisher\\\" does not exist"));
}

TEST_F(OperationsTest, SlotThatLosesWalWhileRunningStopsWithTheFix) {
  auto small = ValueOrDie(PgCluster::Start(
      {"max_slot_wal_keep_size=1MB", "max_wal_size=32MB", "min_wal_size=32MB"}));
  auto sql = ValueOrDie(small->Connect());
  ASSERT_TRUE(sql->Exec(kSchema).ok());
  auto p =
      ValueOrDie(Process::Start({harness::BuildPath("outbox-publisher"), "--pg",
                                 small->conninfo(), "--brokers", mock_->bootstrap(),
                                 "--table", "outbox", "--slot-check-interval", "300ms"},
                                absl::StrCat(small->dir(), "/publisher.log")));
  ASSERT_TRUE(
      WaitFor([&] { return absl::StrContains(p->Log(), "\"msg\":\"streaming\""); },
              absl::Seconds(60)))
      << p->Log();
  // The broker is down: the row stays unacknowledged and holds the slot back while
  // checkpoints remove the WAL it needs.
  ASSERT_EQ(mock_->Command("down all"), "ok");
  ASSERT_TRUE(sql->Exec(kRow).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        if (!p->running()) return true;
        EXPECT_TRUE(
            sql->Exec("INSERT INTO other (v) SELECT repeat('x', 1000) FROM "
                      "generate_series(1, 5000); SELECT pg_switch_wal(); CHECKPOINT")
                .ok());
        return false;
      },
      absl::Seconds(120)))
      << p->Log();
  // A gap: exit 2 whether the slot watcher or the reconnect finds it, naming the
  // recovery option and the way by hand.
  EXPECT_EQ(p->Wait(absl::Seconds(30)), 2) << p->Log();
  EXPECT_THAT(p->Log(), HasSubstr("wal_status = lost"));
  EXPECT_THAT(p->Log(), HasSubstr("--on-slot-gap=republish"));
  EXPECT_THAT(p->Log(), HasSubstr("pg_drop_replication_slot('outbox_publisher')"));
  EXPECT_EQ(ValueOrDie(sql->Value("SELECT wal_status FROM pg_replication_slots")),
            "lost");
}

TEST_F(OperationsTest, RetainedWalAboveTheLimitWarnsOncePerCrossing) {
  publisher_ = StartPublisher({"--table", "outbox", "--slot-check-interval", "200ms",
                               "--max-retained-wal", "256kB", "--log-level", "debug"});
  // With the broker down, a row stays unacknowledged: the slot cannot move past it
  // while more WAL is written.
  ASSERT_EQ(mock_->Command("down all"), "ok");
  ASSERT_TRUE(sql_->Exec(kRow).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(sql_->Exec("INSERT INTO other (v) SELECT repeat('x', 200) FROM "
                           "generate_series(1, 2000)")
                    .ok());
  }
  auto count = [&](const std::string& text) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(publisher_->Log(), '\n'))
      n += absl::StrContains(line, text);
    return n;
  };
  auto warnings = [&] { return count("more than --max-retained-wal (262144)"); };
  auto checks = [&] { return count("\"msg\":\"slot checked\""); };
  ASSERT_TRUE(WaitFor([&] { return warnings() >= 1; }, absl::Seconds(30)))
      << publisher_->Log();
  // Several more checks while still above: no second warning.
  ASSERT_TRUE(sql_->Exec("INSERT INTO other (v) VALUES ('more')").ok());
  int seen = checks();
  ASSERT_TRUE(WaitFor([&] { return checks() >= seen + 5; }, absl::Seconds(30)));
  EXPECT_EQ(warnings(), 1) << publisher_->Log();
  EXPECT_TRUE(publisher_->running()) << "a warning, not a stop";

  // The broker returns: the row is acknowledged and the slot catches up.
  ASSERT_EQ(mock_->Command("up all"), "ok");
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(publisher_->Log(), "again, within --max-retained-wal");
      },
      absl::Seconds(60)))
      << publisher_->Log();
  publisher_->Signal(SIGTERM);
  EXPECT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
}

}  // namespace
}  // namespace publisher
