// Publishing from a standby (PostgreSQL 16, 17 and 18), end to end: the publisher
// binary at its defaults against mock-kafka, its slot on a physical standby
// (hot_standby_feedback on, streaming through physical slot standby1), the writer
// on the primary, and --pg-primary for the state table.
//   - It streams from the standby: the primary holds no logical slot and runs no
//     walsender of the publisher's. A kill -9 while the broker holds the publisher
//     behind, and a restart of the standby, lose nothing (both delivery modes).
//   - The standby is lost: a new standby has no slot, which the state table on the
//     primary shows is a gap: exit 2; --on-slot-gap=republish loses nothing.
//   - The primary is lost and this standby promoted: the publisher goes on from the
//     slot, now a primary's.
//   - The primary fails over to another standby, which this standby then follows:
//     decoding crosses the timeline switch.
//   - Without hot_standby_feedback, a recovery conflict invalidates the slot: a gap,
//     named; republish closes it.
//   - Without --pg-primary, on an idle primary, the slot's creation says what it
//     waits for, and pg_log_standby_snapshot() on the primary ends the wait.
//   - A publication the standby lacks: exit 2, with the statement to run on the
//     primary; with --pg-primary the publisher creates it there.
#include <signal.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/end_to_end/failover_support.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSlotQuery[] =
    "SELECT count(*)::text FROM pg_replication_slots WHERE slot_type = 'logical'";
constexpr char kPublisherWalsenders[] =
    "SELECT count(*)::text FROM pg_stat_replication WHERE application_name = "
    "'outbox-publisher'";

class StandbyFixture : public ::testing::Test {
 protected:
  // A primary of `version` with the outbox schema (and its publication unless
  // `publication` is false), a standby of it, and mock-kafka.
  void StartServers(int version, bool publication = true, bool feedback = true) {
    primary_ = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}, version));
    ASSERT_TRUE(primary_->Exec(kSchema).ok());
    if (publication) {
      ASSERT_TRUE(primary_
                      ->Exec("CREATE PUBLICATION outbox_publisher FOR TABLE outbox "
                             "WITH (publish = 'insert')")
                      .ok());
    }
    standby_ = StartStandby("standby1", feedback);
    mock_ = ValueOrDie(MockKafka::Start(1));
    ASSERT_EQ(mock_->Command("topic outbox.event.order 4"), "ok");
    ASSERT_EQ(mock_->Command("topic outbox.checkpoints 1"), "ok");
    consumer_ = ValueOrDie(Consumer::Start(mock_->bootstrap(), {"outbox.event.order"}));
  }

  std::unique_ptr<PgCluster> StartStandby(const std::string& physical_slot,
                                          bool feedback = true) {
    return ValueOrDie(
        PgCluster::StartStandby(*primary_, physical_slot,
                                {"TimeZone=UTC", feedback ? "hot_standby_feedback=on"
                                                          : "hot_standby_feedback=off"}));
  }

  void TearDown() override {
    if (HasFailure() && publisher_) {
      std::cerr << "--- publisher log ---\n" << publisher_->Log();
    }
  }

  std::vector<std::string> Argv(PgCluster& standby, bool with_primary,
                                const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {harness::BuildPath("outbox-publisher"),
                                     "--pg",
                                     standby.conninfo(),
                                     "--brokers",
                                     mock_->bootstrap(),
                                     "--status-interval",
                                     "500ms",
                                     "--slot-check-interval",
                                     "1s",
                                     "-X",
                                     "reconnect.backoff.max.ms=500"};
    if (with_primary) {
      argv.insert(argv.end(),
                  {"--pg-primary",
                   primary_conninfo_.empty() ? primary_->conninfo() : primary_conninfo_});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // A publisher on `standby` with a log of its own (the n-th), not yet streaming.
  std::unique_ptr<Process> Launch(PgCluster& standby, bool with_primary,
                                  const std::vector<std::string>& extra) {
    return ValueOrDie(
        Process::Start(Argv(standby, with_primary, extra),
                       absl::StrCat(primary_->dir(), "/publisher-", ++started_, ".log")));
  }

  static bool Streams(Process& p) {
    return WaitFor(
               [&] {
                 return absl::StrContains(p.Log(), "\"msg\":\"streaming\"") ||
                        !p.running();
               },
               absl::Seconds(90)) &&
           p.running();
  }

  // A publisher on the standby with --pg-primary, once it streams.
  std::unique_ptr<Process> StartPublisher(const std::vector<std::string>& extra,
                                          PgCluster* standby = nullptr) {
    auto p = Launch(standby ? *standby : *standby_, true, extra);
    EXPECT_TRUE(Streams(*p)) << p->Log();
    return p;
  }

  void HoldPublisherBehind() {
    ASSERT_EQ(mock_->Command("down all"), "ok");
    int before = writer_->committed();
    ASSERT_TRUE(
        WaitFor([&] { return writer_->committed() >= before + 100; }, absl::Seconds(60)));
  }

  void WaitForRows(int more) {
    int at = writer_->committed();
    ASSERT_TRUE(
        WaitFor([&] { return writer_->committed() >= at + more; }, absl::Seconds(90)));
  }

  // Once `standby` replayed everything `primary` wrote and its slot confirmed
  // it: the primary's rows that no record carries.
  size_t Lost(PgCluster& standby) {
    return UnpublishedRows(standby, *primary_, *consumer_);
  }
  size_t Lost(PgCluster& standby, PgCluster& primary) {
    return UnpublishedRows(standby, primary, *consumer_);
  }

  // The publisher streaming and rows reaching Kafka from a writer through
  // `writer_conninfo`, then held behind: the broker answers nothing while the
  // writer goes on.
  void PublishThenHoldBehind(const std::vector<std::string>& flags,
                             const std::string& writer_conninfo) {
    publisher_ = StartPublisher(flags);
    writer_ = std::make_unique<Writer>(writer_conninfo);
    ASSERT_GE(DistinctIds(*consumer_, 50).size(), 50u) << "nothing published";
    HoldPublisherBehind();
  }

  // A kill -9 of the publisher, which any confirmation ahead of the broker would
  // turn into lost rows, then a new one, and rows after it.
  void CrashAndRestart(const std::vector<std::string>& flags) {
    publisher_->Signal(SIGKILL);
    publisher_->Wait(absl::Seconds(30));
    publisher_ = StartPublisher(flags);
    WaitForRows(50);
  }

  std::unique_ptr<PgCluster> primary_, standby_;
  std::unique_ptr<MockKafka> mock_;
  std::unique_ptr<Consumer> consumer_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<Process> publisher_;
  std::string primary_conninfo_;  // --pg-primary when not primary_'s own.
  int started_ = 0;
};

// Both servers, the writable one first: what follows a promotion.
std::string ReadWrite(PgCluster& a, PgCluster& b) {
  return absl::StrCat("host=127.0.0.1,127.0.0.1 port=", a.port(), ",", b.port(),
                      " user=postgres dbname=postgres connect_timeout=5 "
                      "target_session_attrs=read-write");
}

struct StandbyCase {
  int version;
  bool exactly_once;
};

void PrintTo(const StandbyCase& c, std::ostream* os) {
  *os << "PostgreSQL " << c.version
      << (c.exactly_once ? ", exactly-once" : ", at-least-once");
}

std::string CaseName(const ::testing::TestParamInfo<StandbyCase>& info) {
  return absl::StrCat("pg", info.param.version,
                      info.param.exactly_once ? "_exactly_once" : "_at_least_once");
}

class StandbyPublishTest : public StandbyFixture,
                           public ::testing::WithParamInterface<StandbyCase> {
 protected:
  std::vector<std::string> Flags() const {
    return GetParam().exactly_once ? kExactlyOnce : std::vector<std::string>{};
  }
};

// The faults of a standby's life, each release once, the delivery modes alternating
// (within CI's time; scripts/test-matrix.sh runs them as they are).
class StandbyFaultTest : public StandbyPublishTest {};

TEST_P(StandbyPublishTest, StreamsFromTheStandbyAndLosesNothingToCrashesOrRestarts) {
  StartServers(GetParam().version);
  publisher_ = StartPublisher(Flags());
  writer_ = std::make_unique<Writer>(primary_->conninfo());
  ASSERT_GE(DistinctIds(*consumer_, 50).size(), 50u) << "nothing published";
  // The slot and its walsender are the standby's; the primary decodes nothing.
  EXPECT_EQ(ValueOrDie(standby_->Value(kSlotQuery)), "1");
  EXPECT_EQ(ValueOrDie(primary_->Value(kSlotQuery)), "0");
  EXPECT_EQ(ValueOrDie(standby_->Value(kPublisherWalsenders)), "1");
  EXPECT_EQ(ValueOrDie(primary_->Value(kPublisherWalsenders)), "0");
  // The record of what was published is on the primary, and its horizon moves.
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> v = primary_->Value(
            "SELECT (published_below_xid IS NOT NULL)::text FROM outbox_publisher_state "
            "WHERE slot_name = 'outbox_publisher'");
        return v.ok() && *v == "true";
      },
      absl::Seconds(60)))
      << "no published horizon recorded on the primary";
  // --check against the standby judges what keeps its slot valid.
  {
    auto check = ValueOrDie(Process::Start(
        {harness::BuildPath("outbox-publisher"), "--check", "--pg", standby_->conninfo(),
         "--pg-primary", primary_->conninfo(), "--brokers", mock_->bootstrap()},
        absl::StrCat(primary_->dir(), "/check.log")));
    EXPECT_EQ(check->Wait(absl::Seconds(60)), 0) << check->Log();
    EXPECT_THAT(check->Log(), HasSubstr("ok    standby: the server is a standby"));
    EXPECT_THAT(check->Log(), HasSubstr("ok    hot_standby_feedback: on"));
    EXPECT_THAT(check->Log(), HasSubstr("ok    primary_slot_name: standby1"));
    EXPECT_THAT(check->Log(),
                HasSubstr("ok    primary wal_level: logical (through --pg-primary)"));
    EXPECT_THAT(check->Log(), HasSubstr("ok    publication outbox_publisher"));
    EXPECT_THAT(check->Log(), HasSubstr("ok    slot outbox_publisher"));
    EXPECT_THAT(check->Log(), Not(HasSubstr("warn  ")));
  }
  // A crash while the broker holds rows back: any confirmation ahead of the broker
  // would be a lost row.
  HoldPublisherBehind();
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  ASSERT_EQ(mock_->Command("up all"), "ok");
  publisher_ = StartPublisher(Flags());
  WaitForRows(50);
  // The standby restarts under the publisher: the slot persists; it resumes.
  ASSERT_TRUE(standby_->Restart().ok());
  WaitForRows(100);
  ASSERT_TRUE(WaitFor(
      [&] {
        return publisher_->Log().find("\"msg\":\"streaming\"") !=
               publisher_->Log().rfind("\"msg\":\"streaming\"");
      },
      absl::Seconds(90)))
      << "the publisher did not stream again after the standby's restart";
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_), 0u);
  EXPECT_TRUE(publisher_->running()) << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("gap in the slot's history")));
}

TEST_P(StandbyFaultTest, ALostStandbyIsAGapThatRepublishCloses) {
  StartServers(GetParam().version);
  PublishThenHoldBehind(Flags(), primary_->conninfo());
  // The standby and its slot are gone; the publisher moves to a new standby.
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  standby_.reset();
  ASSERT_EQ(mock_->Command("up all"), "ok");
  std::unique_ptr<PgCluster> second = StartStandby("standby2");
  auto p = Launch(*second, true, Flags());
  ASSERT_EQ(p->Wait(absl::Seconds(90)), 2) << p->Log();
  EXPECT_THAT(p->Log(), HasSubstr("is gone, but this publisher published from it"));
  EXPECT_THAT(p->Log(), HasSubstr("--on-slot-gap=republish"));
  EXPECT_EQ(ValueOrDie(second->Value(kSlotQuery)), "0");
  std::vector<std::string> republish = Flags();
  republish.insert(republish.end(), {"--on-slot-gap", "republish"});
  publisher_ = StartPublisher(republish, second.get());
  EXPECT_THAT(publisher_->Log(), HasSubstr("re-published the gap from the outbox table"));
  WaitForRows(50);
  writer_->Stop();
  EXPECT_EQ(Lost(*second), 0u);
}

// The primary is lost and this standby promoted: its slot is now a primary's, and
// the publisher goes on from it.
TEST_P(StandbyFaultTest, APromotedStandbyKeepsPublishingFromItsSlot) {
  StartServers(GetParam().version);
  primary_conninfo_ = ReadWrite(*primary_, *standby_);
  PublishThenHoldBehind(Flags(), primary_conninfo_);
  ASSERT_TRUE(primary_->Kill().ok());
  ASSERT_TRUE(standby_->Promote().ok());
  ASSERT_EQ(mock_->Command("up all"), "ok");
  WaitForRows(100);
  // A crash on the promoted server: a confirmation ahead of the broker is a loss.
  CrashAndRestart(Flags());
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_, *standby_), 0u);
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("gap in the slot's history")));
}

// The primary fails over to another standby, and this one follows the new
// primary: the slot's decoding crosses the timeline switch.
TEST_P(StandbyFaultTest, TheStandbyFollowsAPrimaryFailoverAndDecodingGoesOn) {
  StartServers(GetParam().version);
  std::unique_ptr<PgCluster> other = StartStandby("standby2");
  primary_conninfo_ = ReadWrite(*primary_, *other);
  PublishThenHoldBehind(Flags(), primary_conninfo_);
  ASSERT_TRUE(primary_->Kill().ok());
  ASSERT_TRUE(other->Promote().ok());
  // The publisher's standby now streams from the new primary, through a physical
  // slot there.
  ASSERT_TRUE(
      other->Exec("SELECT pg_create_physical_replication_slot('standby1', true)").ok());
  ASSERT_TRUE(
      standby_
          ->Exec(absl::StrCat("ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 "
                              "port=",
                              other->port(), " user=postgres dbname=postgres'"))
          .ok());
  ASSERT_TRUE(standby_->Exec("SELECT pg_reload_conf()").ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> tli = standby_->Value(
            "SELECT received_tli::text FROM pg_stat_wal_receiver WHERE status = "
            "'streaming'");
        return tli.ok() && *tli == "2";
      },
      absl::Seconds(90)))
      << "the standby did not follow the new primary";
  ASSERT_EQ(mock_->Command("up all"), "ok");
  WaitForRows(100);
  CrashAndRestart(Flags());
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_, *other), 0u);
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("gap in the slot's history")));
}

// Without hot_standby_feedback the primary's VACUUM removes catalog rows the
// standby's slot still needs: PostgreSQL invalidates the slot (a recovery
// conflict), which is a gap named with its cause; republish closes it.
TEST_P(StandbyFaultTest, ARecoveryConflictInvalidatesTheSlotAndIsAGap) {
  StartServers(GetParam().version, /*publication=*/true, /*feedback=*/false);
  PublishThenHoldBehind(Flags(), primary_->conninfo());
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  ASSERT_EQ(mock_->Command("up all"), "ok");
  // Catalog rows die and are vacuumed away on the primary, which knows nothing of
  // the standby's slot; replaying that invalidates it.
  const std::string invalidated =
      GetParam().version >= 17
          ? "SELECT (invalidation_reason IS NOT NULL)::text FROM pg_replication_slots"
          : "SELECT conflicting::text FROM pg_replication_slots";
  ASSERT_TRUE(WaitFor(
      [&] {
        // One statement each: VACUUM runs outside a transaction block.
        for (const char* sql : {"CREATE TABLE conflict (x int)", "DROP TABLE conflict",
                                "VACUUM pg_class", "SELECT pg_log_standby_snapshot()"}) {
          if (!primary_->Exec(sql).ok()) return false;
        }
        absl::StatusOr<std::string> v = standby_->Value(invalidated);
        return v.ok() && *v == "true";
      },
      absl::Seconds(60)))
      << "the slot was not invalidated";
  auto p = Launch(*standby_, true, Flags());
  ASSERT_EQ(p->Wait(absl::Seconds(90)), 2) << p->Log();
  EXPECT_THAT(p->Log(), HasSubstr("was invalidated ("));
  EXPECT_THAT(p->Log(), HasSubstr("hot_standby_feedback"));
  std::vector<std::string> republish = Flags();
  republish.insert(republish.end(), {"--on-slot-gap", "republish"});
  publisher_ = StartPublisher(republish);
  EXPECT_THAT(publisher_->Log(), HasSubstr("re-published the gap from the outbox table"));
  WaitForRows(50);
  writer_->Stop();
  EXPECT_EQ(Lost(*standby_), 0u);
}

INSTANTIATE_TEST_SUITE_P(Releases, StandbyPublishTest,
                         ::testing::Values(StandbyCase{16, false}, StandbyCase{16, true},
                                           StandbyCase{17, false}, StandbyCase{17, true},
                                           StandbyCase{18, false}, StandbyCase{18, true}),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(Releases, StandbyFaultTest,
                         ::testing::Values(StandbyCase{16, false}, StandbyCase{17, true},
                                           StandbyCase{18, false}),
                         CaseName);

TEST_F(StandbyFixture, SlotCreationSaysWhatItWaitsForAndAStandbySnapshotEndsIt) {
  StartServers(16);
  // No writer, no --pg-primary: the primary logs its running transactions only
  // while it writes, so the creation waits, and says so.
  publisher_ = Launch(*standby_, false, {});
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(publisher_->Log(), "pg_log_standby_snapshot()"); },
      absl::Seconds(60)))
      << publisher_->Log();
  EXPECT_THAT(publisher_->Log(), Not(HasSubstr("\"msg\":\"streaming\"")));
  EXPECT_THAT(publisher_->Log(), HasSubstr("without --pg-primary: no state table"));
  ASSERT_TRUE(primary_->Exec("SELECT pg_log_standby_snapshot()").ok());
  EXPECT_TRUE(Streams(*publisher_)) << publisher_->Log();
  ASSERT_TRUE(primary_
                  ->Exec("INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) VALUES ('order', 'o-1', 'Placed', '{}')")
                  .ok());
  EXPECT_EQ(DistinctIds(*consumer_, 1).size(), 1u);
}

TEST_F(StandbyFixture, APublicationIsFoundOnTheStandbyOrCreatedOnThePrimary) {
  StartServers(16, /*publication=*/false);
  auto p = Launch(*standby_, false, {});
  ASSERT_EQ(p->Wait(absl::Seconds(60)), 2) << p->Log();
  EXPECT_THAT(p->Log(), HasSubstr("a standby cannot create one: run on the primary "
                                  "CREATE PUBLICATION"));
  EXPECT_EQ(ValueOrDie(standby_->Value(kSlotQuery)), "0");
  // With the primary at hand, the publisher creates it there.
  publisher_ = StartPublisher({});
  writer_ = std::make_unique<Writer>(primary_->conninfo());
  EXPECT_EQ(ValueOrDie(primary_->Value(
                "SELECT count(*)::text FROM pg_publication WHERE pubname = "
                "'outbox_publisher'")),
            "1");
  ASSERT_GE(DistinctIds(*consumer_, 20).size(), 20u);
}

}  // namespace
}  // namespace publisher
