// ProcessedTable and PgDatabase on a real PostgreSQL: the claim, its rollback, two
// consumers racing on one id, a COMMIT that rolled back, and pruning that keeps
// what may still be read again.
#include "consumer/processed_table.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "consumer/apply_once.h"
#include "consumer/postgres/pg_database.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consumer/fakes.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"
#include "tools/harness/processes.h"

namespace consumer {
namespace {

using harness::PgCluster;
using test_util::ValueOrDie;

class ProcessedTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = ValueOrDie(PgCluster::Start());
    db_ = ValueOrDie(PgDatabase::Connect(cluster_->conninfo()));
    ASSERT_TRUE(db_->Command("CREATE SCHEMA app").ok());
    ASSERT_TRUE(table_.Create(*db_).ok());
    ASSERT_TRUE(table_.Create(*db_).ok());  // Idempotent.
    ASSERT_TRUE(db_->Command("CREATE TABLE app.effects (id text)").ok());
  }

  int64_t Count(const std::string& sql) {
    return std::stoll(*ValueOrDie(db_->Query(sql)).at(0).at(0));
  }

  static absl::Status Effect(const Event& e, Transaction& tx) {
    return tx.Command(absl::StrCat("INSERT INTO app.effects VALUES (",
                                   tx.Literal(e.envelope.id()), ")"));
  }

  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<PgDatabase> db_;
  ProcessedTable table_{"app.processed"};
};

TEST_F(ProcessedTableTest, AppliesAnIdOnceAndRollsBackAFailedEffectWithItsClaim) {
  InboundRecord r = EnvelopeRecord("t", 2, 40, "id-'1");  // A quote, to be escaped.
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(r.value));
  EXPECT_EQ(ValueOrDie(ApplyOnce(*db_, table_, Event{e, r}, &Effect)),
            ApplyResult::kApplied);
  EXPECT_EQ(ValueOrDie(ApplyOnce(*db_, table_, Event{e, r}, &Effect)),
            ApplyResult::kDuplicate);
  EXPECT_EQ(Count("SELECT count(*) FROM app.effects"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM app.processed WHERE topic = 't' AND "
                  "kafka_partition = 2 AND kafka_offset = 40"),
            1);

  InboundRecord r2 = EnvelopeRecord("t", 2, 41, "id-2");
  outbox::v1::Envelope e2;
  ASSERT_TRUE(e2.ParseFromString(r2.value));
  absl::StatusOr<ApplyResult> failed =
      ApplyOnce(*db_, table_, Event{e2, r2}, [](const Event& ev, Transaction& tx) {
        EXPECT_TRUE(Effect(ev, tx).ok());
        return RetryableError("the handler gave up");
      });
  EXPECT_TRUE(absl::IsUnavailable(failed.status()));
  EXPECT_FALSE(db_->lost_connection());
  EXPECT_EQ(Count("SELECT count(*) FROM app.processed WHERE id = 'id-2'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM app.effects"), 1);
}

TEST_F(ProcessedTableTest, AHandlerThatIgnoresAFailedStatementIsNotApplied) {
  InboundRecord r = EnvelopeRecord("t", 0, 0, "id-1");
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(r.value));
  absl::StatusOr<ApplyResult> result =
      ApplyOnce(*db_, table_, Event{e, r}, [](const Event&, Transaction& tx) {
        tx.Command("SELECT 1/0").IgnoreError();  // The bug: an error ignored.
        return absl::OkStatus();
      });
  EXPECT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), testing::HasSubstr("rolled back at COMMIT"));
  EXPECT_EQ(Count("SELECT count(*) FROM app.processed"), 0);
}

TEST_F(ProcessedTableTest, TwoConsumersRacingOnOneIdApplyItOnce) {
  // A rebalance can hand a partition over while its old owner still applies a
  // record: the second claim waits for the first transaction, then finds the id.
  auto other = ValueOrDie(PgDatabase::Connect(cluster_->conninfo()));
  InboundRecord r = EnvelopeRecord("t", 0, 0, "id-1");
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(r.value));
  std::atomic<bool> first_claimed{false}, second_started{false};
  absl::StatusOr<ApplyResult> second;
  std::thread racer;
  absl::StatusOr<ApplyResult> first =
      ApplyOnce(*db_, table_, Event{e, r}, [&](const Event& ev, Transaction& tx) {
        first_claimed = true;
        racer = std::thread([&] {
          second_started = true;
          second = ApplyOnce(*other, table_, Event{e, r}, &Effect);
        });
        // The racer's claim blocks on this transaction's row lock until it commits.
        EXPECT_TRUE(harness::WaitFor(
            [&] { return Count("SELECT count(*) FROM pg_locks WHERE NOT granted") > 0; },
            absl::Seconds(30)));
        return Effect(ev, tx);
      });
  racer.join();
  EXPECT_EQ(ValueOrDie(first), ApplyResult::kApplied);
  EXPECT_EQ(ValueOrDie(second), ApplyResult::kDuplicate);
  EXPECT_EQ(Count("SELECT count(*) FROM app.effects"), 1);
}

TEST_F(ProcessedTableTest, PrunesOnlyOldIdsBelowTheCommittedOffset) {
  // Offsets 0..9 of partition 0 and 0..4 of partition 1, processed 10 days ago;
  // offset 10 of partition 0 processed now.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        table_.Claim(*db_, absl::StrCat("a", i), EnvelopeRecord("t", 0, i, "")).ok());
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        table_.Claim(*db_, absl::StrCat("b", i), EnvelopeRecord("t", 1, i, "")).ok());
  }
  ASSERT_TRUE(
      db_->Command("UPDATE app.processed SET processed_at = now() - interval '10 days'")
          .ok());
  ASSERT_TRUE(table_.Claim(*db_, "a10", EnvelopeRecord("t", 0, 10, "")).ok());

  // Committed offset 6: offsets 6.. may be read again after a crash, however old.
  EXPECT_EQ(ValueOrDie(table_.Prune(*db_, {"t", 0}, 6, absl::Hours(24 * 7))), 6);
  EXPECT_EQ(Count("SELECT count(*) FROM app.processed WHERE topic = 't' AND "
                  "kafka_partition = 0"),
            5);
  // A retention longer than their age keeps them.
  EXPECT_EQ(ValueOrDie(table_.Prune(*db_, {"t", 1}, 5, absl::Hours(24 * 30))), 0);
  // Past the committed offset of partition 0 and the retention: only the old ones.
  EXPECT_EQ(ValueOrDie(table_.Prune(*db_, {"t", 0}, 11, absl::Hours(24))), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM app.processed WHERE kafka_partition = 0"), 1);
}

TEST_F(ProcessedTableTest, ALostConnectionIsReportedAndMadeAgain) {
  ASSERT_TRUE(db_->Begin().ok());
  std::string pid = *ValueOrDie(db_->Query("SELECT pg_backend_pid()")).at(0).at(0);
  ASSERT_TRUE(
      cluster_->Exec(absl::StrCat("SELECT pg_terminate_backend(", pid, ")")).ok());
  absl::Status s = db_->Query("SELECT 1").status();
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_TRUE(db_->lost_connection());
  db_->Rollback();
  ASSERT_TRUE(db_->Begin().ok());
  EXPECT_FALSE(db_->lost_connection());
  EXPECT_TRUE(db_->Commit().ok());
}

}  // namespace
}  // namespace consumer
