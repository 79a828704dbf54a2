// Primary failover and lost slots end to end, the publisher binary at its
// defaults against mock-kafka:
//   - PostgreSQL 17 and 18: a primary, a physical standby that synchronizes the
//     failover slot, a steady writer and the publisher through a multi-host
//     conninfo with target_session_attrs=read-write. The broker holds the
//     publisher behind, the primary is killed (-9) and the standby promoted; the
//     publisher follows by itself, is killed (-9) once more on the new primary
//     (so that any confirmation ahead of the broker becomes a lost row), and every
//     row the new primary holds must reach Kafka.
//   - PostgreSQL 16: the same failover without failover slots is a gap: the
//     publisher stops with exit 2 naming it, and --on-slot-gap=republish then
//     loses nothing.
//   - Any release: a slot invalidated by max_slot_wal_keep_size while the
//     publisher was stopped: detected, reported, and recovered from the table.
// Rows committed on the old primary that never reached the standby are gone from
// the database itself; what is checked is that nothing the new primary holds is
// lost.
#include <libpq-fe.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/end_to_end/failover_support.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FailoverFixture : public ::testing::Test {
 protected:
  // A primary of `version` with the outbox schema, a standby of it streaming
  // through physical slot standby1 (on 17+ the primary waits for it:
  // synchronized_standby_slots), and mock-kafka.
  void StartServers(int version) {
    primary_ = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}, version));
    ASSERT_TRUE(primary_->Exec(kSchema).ok());
    standby_ = ValueOrDie(PgCluster::StartStandby(*primary_, "standby1", {"TimeZone=UTC"}));
    if (version >= 17) {
      ASSERT_TRUE(
          primary_->Exec("ALTER SYSTEM SET synchronized_standby_slots = 'standby1'").ok());
      ASSERT_TRUE(primary_->Exec("SELECT pg_reload_conf()").ok());
    }
    conninfo_ = absl::StrCat("host=127.0.0.1,127.0.0.1 port=", primary_->port(), ",",
                             standby_->port(),
                             " user=postgres dbname=postgres connect_timeout=5 "
                             "target_session_attrs=read-write");
    mock_ = ValueOrDie(MockKafka::Start(1));
    ASSERT_EQ(mock_->Command("topic outbox.event.order 4"), "ok");
    ASSERT_EQ(mock_->Command("topic outbox.checkpoints 1"), "ok");
    consumer_ = ValueOrDie(Consumer::Start(mock_->bootstrap(), {"outbox.event.order"}));
  }

  void TearDown() override {
    if (HasFailure() && publisher_) std::cerr << "--- publisher log ---\n" << publisher_->Log();
  }

  std::vector<std::string> Argv(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                     "--pg", conninfo_, "--brokers", mock_->bootstrap(),
                                     "--status-interval", "500ms", "-X",
                                     "reconnect.backoff.max.ms=500"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // A publisher with a log of its own (the n-th), once it streams.
  std::unique_ptr<Process> StartPublisher(const std::vector<std::string>& extra) {
    auto p = ValueOrDie(Process::Start(
        Argv(extra), absl::StrCat(primary_->dir(), "/publisher-", ++started_, ".log")));
    EXPECT_TRUE(WaitFor([&] { return absl::StrContains(p->Log(), "\"msg\":\"streaming\"") ||
                                     !p->running(); },
                        absl::Seconds(90)))
        << p->Log();
    EXPECT_TRUE(p->running()) << p->Log();
    return p;
  }

  std::set<std::string> Published(size_t n) { return DistinctIds(*consumer_, n); }

  // Holds the publisher behind for a while: the broker answers nothing, so rows
  // are read and stay unacknowledged and unconfirmed.
  void HoldPublisherBehind() {
    ASSERT_EQ(mock_->Command("down all"), "ok");
    int before = writer_->committed();
    ASSERT_TRUE(WaitFor([&] { return writer_->committed() >= before + 100; },
                        absl::Seconds(60)));
  }

  // Kills the primary and promotes the standby; the standby is the primary after.
  void FailOver() {
    ASSERT_TRUE(primary_->Kill().ok());
    absl::Time start = absl::Now();
    ASSERT_TRUE(standby_->Promote().ok());
    std::cerr << "promoted in " << absl::Now() - start << "\n";
    ASSERT_EQ(mock_->Command("up all"), "ok");
  }

  // Once the new primary's slot is confirmed to its end: the rows it holds that no
  // record carries.
  size_t Lost(PgCluster& server) { return UnpublishedRows(server, server, *consumer_); }

  std::unique_ptr<PgCluster> primary_, standby_;
  std::unique_ptr<MockKafka> mock_;
  std::unique_ptr<Consumer> consumer_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Process> publisher_;
  std::string conninfo_;
  int started_ = 0;
};

struct FailoverCase {
  int version;
  bool exactly_once;
};

void PrintTo(const FailoverCase& c, std::ostream* os) {
  *os << "PostgreSQL " << c.version << (c.exactly_once ? ", exactly-once" : ", at-least-once");
}

std::string CaseName(const ::testing::TestParamInfo<FailoverCase>& info) {
  return absl::StrCat("pg", info.param.version,
                      info.param.exactly_once ? "_exactly_once" : "_at_least_once");
}

class FailoverSlotTest : public FailoverFixture,
                         public ::testing::WithParamInterface<FailoverCase> {};

TEST_P(FailoverSlotTest, APromotedStandbyCarriesTheSlotAndNothingIsLost) {
  StartServers(GetParam().version);
  std::vector<std::string> flags =
      GetParam().exactly_once ? kExactlyOnce : std::vector<std::string>{};
  publisher_ = StartPublisher(flags);
  writer_ = std::make_unique<Writer>(conninfo_);
  ASSERT_GE(Published(50).size(), 50u) << "nothing published before the failover";
  // The defaults made a failover slot, and the standby holds a synchronized copy.
  EXPECT_EQ(ValueOrDie(primary_->Value(
                "SELECT failover FROM pg_replication_slots WHERE slot_name = "
                "'outbox_publisher'")),
            "t");
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> v = standby_->Value(
            "SELECT synced AND NOT temporary FROM pg_replication_slots WHERE slot_name = "
            "'outbox_publisher'");
        return v.ok() && *v == "t";
      },
      absl::Seconds(90)))
      << "the standby never synchronized the slot";
  // --check from outside agrees.
  {
    auto check = ValueOrDie(Process::Start(
        {harness::BuildPath("outbox-publisher"), "--check", "--pg", conninfo_,
         "--brokers", mock_->bootstrap()},
        absl::StrCat(primary_->dir(), "/check.log")));
    EXPECT_EQ(check->Wait(absl::Seconds(60)), 0) << check->Log();
    EXPECT_THAT(check->Log(), HasSubstr("is a failover slot"));
    EXPECT_THAT(check->Log(), HasSubstr("carries a synchronized copy"));
  }
  HoldPublisherBehind();
  FailOver();
  // The publisher follows the promotion by itself, and the new primary's writes
  // reach it.
  int promoted_at = writer_->committed();
  ASSERT_TRUE(WaitFor([&] { return writer_->committed() >= promoted_at + 100; },
                      absl::Seconds(90)));
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  // A crash on the new primary: a confirmation that ran ahead of the broker is a
  // lost row from here on.
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  publisher_ = StartPublisher(flags);
  int restarted_at = writer_->committed();
  ASSERT_TRUE(WaitFor([&] { return writer_->committed() >= restarted_at + 50; },
                      absl::Seconds(90)));
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_), 0u);
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("gap in the slot's history")));
}

INSTANTIATE_TEST_SUITE_P(Releases, FailoverSlotTest,
                         ::testing::Values(FailoverCase{17, false}, FailoverCase{17, true},
                                           FailoverCase{18, false}, FailoverCase{18, true}),
                         CaseName);

class GapTest : public FailoverFixture, public ::testing::WithParamInterface<FailoverCase> {};

TEST_P(GapTest, AFailoverWithoutFailoverSlotsStopsThenRepublishesWithoutLoss) {
  StartServers(GetParam().version);
  std::vector<std::string> flags =
      GetParam().exactly_once ? kExactlyOnce : std::vector<std::string>{};
  publisher_ = StartPublisher(flags);
  writer_ = std::make_unique<Writer>(conninfo_);
  ASSERT_GE(Published(50).size(), 50u);
  HoldPublisherBehind();
  FailOver();
  // The new primary has no slot, and the state table says there was one: exit 2,
  // naming the gap and the way out; nothing created.
  ASSERT_EQ(publisher_->Wait(absl::Seconds(90)), 2) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), HasSubstr("is gone, but this publisher published from it"));
  EXPECT_THAT(publisher_->Log(), HasSubstr("--on-slot-gap=republish"));
  EXPECT_EQ(ValueOrDie(standby_->Value("SELECT count(*) FROM pg_replication_slots")), "0");
  // The way out.
  std::vector<std::string> republish = flags;
  republish.insert(republish.end(), {"--on-slot-gap", "republish"});
  publisher_ = StartPublisher(republish);
  EXPECT_THAT(publisher_->Log(), HasSubstr("re-published the gap from the outbox table"));
  int at = writer_->committed();
  ASSERT_TRUE(WaitFor([&] { return writer_->committed() >= at + 50; }, absl::Seconds(90)));
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_), 0u);
}

INSTANTIATE_TEST_SUITE_P(Releases, GapTest,
                         ::testing::Values(FailoverCase{16, false}, FailoverCase{16, true}),
                         CaseName);

// A slot invalidated while the publisher was stopped: detected by the publisher and
// by --check, and re-published from the table from the recorded horizon on, not
// from the table's first row.
TEST_F(FailoverFixture, AnInvalidatedSlotIsReportedAndRecoveredFromTheTable) {
  primary_ = ValueOrDie(PgCluster::Start(
      {"TimeZone=UTC", "max_slot_wal_keep_size=1MB", "max_wal_size=32MB", "min_wal_size=32MB"}));
  ASSERT_TRUE(primary_->Exec(kSchema).ok());
  conninfo_ = primary_->conninfo();
  mock_ = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock_->Command("topic outbox.event.order 4"), "ok");
  consumer_ = ValueOrDie(Consumer::Start(mock_->bootstrap(), {"outbox.event.order"}));
  auto sql = ValueOrDie(primary_->Connect());
  auto write = [&](int rows, int from) {
    for (int i = 0; i < rows; ++i) {
      ASSERT_TRUE(sql->Exec(absl::StrCat("INSERT INTO outbox (aggregate_type, aggregate_id, "
                                         "event_type, payload) VALUES ('order', 'o-1', 'E', "
                                         "'{\"n\": ",
                                         from + i, "}')"))
                      .ok());
    }
  };
  publisher_ = StartPublisher({"--slot-check-interval", "200ms"});
  write(100, 0);
  ASSERT_EQ(Published(100).size(), 100u);
  // The watcher records a horizon above those rows once their acknowledgements
  // are confirmed.
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> v = sql->Value(
            "SELECT published_below_xid > (SELECT max(xmin::text::bigint) FROM outbox) "
            "FROM outbox_publisher_state WHERE slot_name = 'outbox_publisher'");
        return v.ok() && *v == "t";
      },
      absl::Seconds(60)));
  publisher_->Signal(SIGTERM);
  ASSERT_EQ(publisher_->Wait(absl::Seconds(60)), 0) << publisher_->Log();
  // 50 rows while it is down, then WAL past max_slot_wal_keep_size.
  write(50, 100);
  ASSERT_TRUE(WaitFor(
      [&] {
        EXPECT_TRUE(sql->Exec("INSERT INTO other (v) SELECT repeat('x', 1000) FROM "
                              "generate_series(1, 5000); SELECT pg_switch_wal(); CHECKPOINT")
                        .ok());
        absl::StatusOr<std::string> s = sql->Value(
            "SELECT wal_status FROM pg_replication_slots WHERE slot_name = "
            "'outbox_publisher'");
        return s.ok() && *s == "lost";
      },
      absl::Seconds(120)));
  // The default: exit 2, the gap and the way out named; --check says the same.
  auto stopped = ValueOrDie(Process::Start(
      Argv({}), absl::StrCat(primary_->dir(), "/publisher-lost.log")));
  EXPECT_EQ(stopped->Wait(absl::Seconds(60)), 2) << stopped->Log();
  EXPECT_THAT(stopped->Log(), HasSubstr("wal_status = lost"));
  EXPECT_THAT(stopped->Log(), HasSubstr("--on-slot-gap=republish"));
  auto check = ValueOrDie(Process::Start(
      {harness::BuildPath("outbox-publisher"), "--check", "--pg", conninfo_,
       "--brokers", mock_->bootstrap()},
      absl::StrCat(primary_->dir(), "/check.log")));
  EXPECT_EQ(check->Wait(absl::Seconds(60)), 2) << check->Log();
  EXPECT_THAT(check->Log(), HasSubstr("--on-slot-gap=republish"));
  // The way out: the 50 rows written while it was down come back from the table,
  // and not the 100 before them (a few more may: the horizon is a lower bound).
  publisher_ = StartPublisher({"--on-slot-gap", "republish"});
  std::string log = publisher_->Log();
  size_t at = log.find("re-published the gap from the outbox table");
  ASSERT_NE(at, std::string::npos) << log;
  size_t rows_at = log.find("\"rows\":", at);
  ASSERT_NE(rows_at, std::string::npos) << log;
  int republished = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      log.substr(rows_at + 7, log.find_first_of(",}", rows_at) - rows_at - 7),
      &republished));
  EXPECT_GE(republished, 50);
  EXPECT_LT(republished, 150);
  write(20, 150);
  EXPECT_EQ(Lost(*primary_), 0u);
}

}  // namespace
}  // namespace publisher

namespace publisher {
namespace {

// --create=false, with the publication and the slot made by hand and no state
// table: the publisher streams as before the table existed, and says what it
// cannot notice meanwhile.
// PostgreSQL 17+: a primary restarted while its walsender holds changes back for
// a standby named in synchronized_standby_slots that is not streaming. The
// walsender, told to stop, ends the stream with an ERROR (22023) instead of a
// clean end; the soak met it, and the publisher stopped with exit 1 instead of
// following the primary. Now it is ridden out like any shutdown: the publisher
// connects again, and once the standby is no longer waited for, the rows arrive.
TEST_F(FailoverFixture, ARestartWhileTheFailoverSlotWaitsForAnAbsentStandbyIsRiddenOut) {
  StartServers(17);
  publisher_ = StartPublisher({});
  ASSERT_TRUE(primary_
                  ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'before', 'E', '{}')")
                  .ok());
  ASSERT_EQ(Published(1).size(), 1u);
  // The standby goes away; its slot stays named, so the walsender waits for it.
  ASSERT_TRUE(standby_->Kill().ok());
  ASSERT_TRUE(primary_
                  ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'held', 'E', '{}')")
                  .ok());
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(publisher_->Log(), "does not have active_pid"); },
      absl::Seconds(60)))
      << "the walsender never waited for the standby";
  // Its warnings are the publisher's own log lines, JSON as every other.
  EXPECT_THAT(publisher_->Log(), HasSubstr("\"msg\":\"server notice\""));
  for (absl::string_view line :
       absl::StrSplit(publisher_->Log(), '\n', absl::SkipEmpty()))
    EXPECT_TRUE(absl::StartsWith(line, "{")) << "not a JSON log line: " << line;
  ASSERT_TRUE(primary_->Restart("fast").ok());
  // The walsender ended the stream with the failover-slot wait's error (a clean
  // end would prove nothing here), and the publisher connected again.
  auto ended_by_the_wait = [](absl::string_view line) {
    return absl::StrContains(line, "server ended the replication stream") &&
           absl::StrContains(line, "synchronized_standby_slots");
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<std::string> lines = absl::StrSplit(publisher_->Log(), '\n');
        auto ended = std::find_if(lines.begin(), lines.end(), ended_by_the_wait);
        return ended != lines.end() &&
               std::any_of(ended, lines.end(), [](const std::string& l) {
                 return absl::StrContains(l, "\"msg\":\"streaming\"");
               });
      },
      absl::Seconds(90)))
      << publisher_->Log();
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("stopped on an error")));
  // The standby is no longer waited for: the held row, and a new one, arrive.
  ASSERT_TRUE(primary_->Exec("ALTER SYSTEM RESET synchronized_standby_slots").ok());
  ASSERT_TRUE(primary_->Exec("SELECT pg_reload_conf()").ok());
  ASSERT_TRUE(primary_
                  ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'after', 'E', '{}')")
                  .ok());
  EXPECT_EQ(Published(3).size(), 3u);
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
}

TEST_F(FailoverFixture, WithoutAStateTableItStreamsAndWarns) {
  primary_ = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}));
  ASSERT_TRUE(primary_->Exec(kSchema).ok());
  ASSERT_TRUE(primary_
                  ->Exec("CREATE PUBLICATION outbox_publisher FOR TABLE outbox WITH "
                         "(publish = 'insert')")
                  .ok());
  ASSERT_TRUE(primary_
                  ->Exec("SELECT pg_create_logical_replication_slot('outbox_publisher', "
                         "'pgoutput')")
                  .ok());
  conninfo_ = primary_->conninfo();
  mock_ = ValueOrDie(MockKafka::Start(1));
  ASSERT_EQ(mock_->Command("topic outbox.event.order 4"), "ok");
  consumer_ = ValueOrDie(Consumer::Start(mock_->bootstrap(), {"outbox.event.order"}));
  publisher_ = StartPublisher({"--create", "false", "--table", "outbox"});
  EXPECT_THAT(publisher_->Log(), HasSubstr("no state table"));
  EXPECT_THAT(publisher_->Log(), HasSubstr("--create=false: create it"));
  ASSERT_TRUE(primary_
                  ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'o-1', 'E', '{}')")
                  .ok());
  EXPECT_EQ(Lost(*primary_), 0u);
  EXPECT_EQ(ValueOrDie(primary_->Value(
                "SELECT count(*) FROM pg_class WHERE relname = 'outbox_publisher_state'")),
            "0");
}

}  // namespace
}  // namespace publisher
