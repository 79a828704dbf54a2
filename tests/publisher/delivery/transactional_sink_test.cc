// TransactionalSink (exactly-once) over a scripted TransactionLog: when Kafka
// transactions commit, what they carry, and that nothing is acknowledged (so
// nothing confirmed) before its commit returns; then with the relay, over
// scripted replication streams.
#include "publisher/delivery/transactional_sink.h"

#include <deque>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/operations/metrics.h"
#include "publisher/program/options.h"
#include "publisher/relay/relay.h"
#include "tests/publisher/fakes.h"
#include "tests/publisher/wal_script.h"

namespace publisher {
namespace {

using cdc::Lsn;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace wal_script;  // NOLINT: the script's vocabulary.

const absl::Time kCommitTime = absl::FromUnixSeconds(1'800'000'100);

// Records what the sink asks of the transactional producer; Kafka "holds" only
// what a commit made visible. A commit ends as soon as it starts, unless
// `hold_commits`: then it goes on until the test calls EndCommit().
class FakeTransactionLog : public TransactionLog {
 public:
  struct Committed {
    std::vector<std::string> ids;
    Checkpoint checkpoint;
  };
  std::vector<std::string> calls;    // "begin", "produce a", "commit 0/110", "abort"
  std::vector<std::string> open;     // Ids in the open transaction.
  std::vector<Committed> committed;  // Visible to read_committed consumers.
  std::deque<absl::Status> produce_results, commit_results, abort_results;
  std::function<void()> on_commit;  // Runs when a commit starts.
  bool hold_commits = false;

  absl::Status Begin() override {
    ExpectNoCommit("Begin");
    calls.push_back("begin");
    return absl::OkStatus();
  }
  absl::Status Produce(const OutboxRecord& r) override {
    ExpectNoCommit("Produce");
    absl::Status s = Next(produce_results);
    if (!s.ok()) return s;
    calls.push_back("produce " + r.id);
    open.push_back(r.id);
    return s;
  }
  void StartCommit(const Checkpoint& c, absl::Duration) override {
    ExpectNoCommit("StartCommit");
    if (on_commit) on_commit();
    committing_ = c;
    if (!hold_commits) EndCommit();
  }
  std::optional<absl::Status> CommitOutcome(absl::Duration wait) override {
    // Waiting without end: the commit ends meanwhile.
    if (committing_ && wait == absl::InfiniteDuration()) EndCommit();
    if (committing_) return std::nullopt;
    if (!outcome_) {
      ADD_FAILURE() << "CommitOutcome without a commit";
      return absl::InternalError("no commit");
    }
    absl::Status s = *outcome_;
    outcome_.reset();
    return s;
  }
  // The commit under way ends, as commit_results says.
  void EndCommit() {
    ASSERT_TRUE(committing_.has_value()) << "no commit goes on";
    absl::Status s = Next(commit_results);
    calls.push_back("commit " + committing_->end_lsn.ToString() +
                    (s.ok() ? "" : " failed"));
    if (s.ok()) committed.push_back({std::move(open), *committing_});
    open.clear();
    committing_.reset();
    outcome_ = s;
  }
  bool committing() const { return committing_.has_value(); }
  absl::Status Abort(absl::Duration) override {
    ExpectNoCommit("Abort");
    calls.push_back("abort");
    open.clear();
    return Next(abort_results);
  }
  void Poll(absl::Duration) override { ExpectNoCommit("Poll"); }

  // Every id a read_committed consumer sees, in order.
  std::vector<std::string> Visible() const {
    std::vector<std::string> ids;
    for (const Committed& c : committed)
      ids.insert(ids.end(), c.ids.begin(), c.ids.end());
    return ids;
  }

 private:
  // The producer belongs to a commit until it ends (TransactionLog).
  void ExpectNoCommit(const char* call) {
    EXPECT_FALSE(committing_.has_value()) << call << " while a commit goes on";
  }
  static absl::Status Next(std::deque<absl::Status>& q) {
    if (q.empty()) return absl::OkStatus();
    absl::Status s = q.front();
    q.pop_front();
    return s;
  }

  std::optional<Checkpoint> committing_;
  std::optional<absl::Status> outcome_;  // Of the commit that ended, until collected.
};

OutboxRecord Record(const std::string& id) {
  OutboxRecord r;
  r.id = id;
  r.topic = "t";
  r.value = "v";
  return r;
}

MessageToken Token(uint64_t transaction, size_t bytes = 10) {
  return MessageToken{transaction, bytes, kCommitTime};
}

Checkpoint Boundary(uint64_t end_lsn, uint32_t xid = 1) {
  return Checkpoint{Lsn(end_lsn), xid, kCommitTime};
}

class TransactionalSinkTest : public ::testing::Test {
 protected:
  TransactionalSinkTest() {
    options_.interval = absl::Milliseconds(100);
    options_.max_messages = 5;
    options_.max_bytes = 1000;
    Rebuild();
  }

  // A new sink (and log) with options_.
  void Rebuild() {
    auto log = std::make_unique<FakeTransactionLog>();
    log_ = log.get();
    sink_ = std::make_unique<TransactionalSink>(std::move(log), std::nullopt, options_,
                                                logger_, [this] { return clock_.Now(); });
  }

  std::vector<Delivery> Poll() {
    std::vector<Delivery> out;
    sink_->Poll(absl::ZeroDuration(), [&](Delivery d) { out.push_back(std::move(d)); });
    return out;
  }

  void Produce(const std::string& id, uint64_t transaction,
               RecordKind kind = RecordKind::kEvent) {
    ASSERT_TRUE(sink_->Produce(Record(id), Token(transaction), kind).ok());
  }

  fakes::FakeClock clock_;
  common::Logger logger_{common::LogFormat::kJson, common::LogLevel::kError};
  TransactionalSinkOptions options_;
  FakeTransactionLog* log_;
  std::unique_ptr<TransactionalSink> sink_;
};

TEST_F(TransactionalSinkTest, AcknowledgesOnlyWhenTheKafkaTransactionCommits) {
  Produce("a", 0);
  Produce("b", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  EXPECT_TRUE(Poll().empty()) << "the interval has not passed: nothing committed yet";
  EXPECT_EQ(sink_->outstanding(), 2u);
  EXPECT_TRUE(log_->committed.empty());
  clock_.Advance(absl::Milliseconds(100));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 1u) << "one report for the PostgreSQL transaction's two records";
  EXPECT_TRUE(d[0].status.ok());
  EXPECT_EQ(d[0].messages, 2u);
  EXPECT_EQ(d[0].token.bytes, 20u);
  EXPECT_EQ(d[0].token.transaction, 0u);
  EXPECT_EQ(sink_->outstanding(), 0u);
  ASSERT_EQ(log_->committed.size(), 1u);
  EXPECT_THAT(log_->committed[0].ids, ElementsAre("a", "b"));
  EXPECT_EQ(log_->committed[0].checkpoint, Boundary(0x110));
  EXPECT_EQ(sink_->committed_checkpoint(), Boundary(0x110));
  EXPECT_THAT(log_->calls,
              ElementsAre("begin", "produce a", "produce b", "commit 0/110"));
}

TEST_F(TransactionalSinkTest, NeverCommitsInsideAPostgreSQLTransaction) {
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  Produce("b", 1);  // The next PostgreSQL transaction has begun.
  clock_.Advance(absl::Seconds(5));
  EXPECT_EQ(sink_->next_deadline(), absl::InfiniteFuture());
  EXPECT_TRUE(Poll().empty());
  EXPECT_TRUE(log_->committed.empty()) << "committing now would split transaction 1";
  sink_->TransactionCommitted(Boundary(0x210, 2));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 2u);
  ASSERT_EQ(log_->committed.size(), 1u);
  EXPECT_THAT(log_->committed[0].ids, ElementsAre("a", "b"));
  EXPECT_EQ(log_->committed[0].checkpoint.end_lsn, Lsn(0x210));
}

TEST_F(TransactionalSinkTest, ManyPostgreSQLTransactionsInOneKafkaTransaction) {
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  // Quiet for a fifth of the interval would commit.
  EXPECT_EQ(sink_->next_deadline(), clock_.Now() + absl::Milliseconds(20));
  clock_.Advance(absl::Milliseconds(15));
  EXPECT_TRUE(Poll().empty());
  Produce("b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  clock_.Advance(absl::Milliseconds(15));
  sink_->TransactionCommitted(Boundary(0x310, 3));  // No outbox rows: still a boundary.
  EXPECT_TRUE(Poll().empty()) << "never quiet for 20 ms yet";
  EXPECT_EQ(sink_->next_deadline(), clock_.Now() + absl::Milliseconds(20));
  clock_.Advance(absl::Milliseconds(20));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].token.transaction, 0u);
  EXPECT_EQ(d[1].token.transaction, 1u);
  ASSERT_EQ(log_->committed.size(), 1u);
  EXPECT_EQ(log_->committed[0].checkpoint.end_lsn, Lsn(0x310));
  EXPECT_EQ(sink_->next_deadline(), absl::InfiniteFuture()) << "nothing open";
}

TEST_F(TransactionalSinkTest, ABusyStreamCommitsAtTheIntervalAQuietOneSooner) {
  options_.max_messages = 100;
  Rebuild();
  // PostgreSQL transactions 10 ms apart: never quiet for 20 ms, so the interval.
  for (int n = 0; n < 15; ++n) {
    Produce("m" + std::to_string(n), n);
    sink_->TransactionCommitted(Boundary(0x100 * (n + 1) + 0x10));
    EXPECT_TRUE(Poll().empty() || n >= 10) << n;
    clock_.Advance(absl::Milliseconds(10));
  }
  ASSERT_EQ(log_->committed.size(), 1u);
  EXPECT_EQ(log_->committed[0].ids.size(), 11u) << "m0..m10: the one at 100 ms commits";
  // Then the stream goes quiet: the rest (m11..m14, begun at 110 ms) commits 20 ms
  // after its last PostgreSQL commit, not at 210 ms.
  clock_.Advance(absl::Milliseconds(9));
  EXPECT_TRUE(Poll().empty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Poll().size(), 4u);
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_EQ(log_->committed[1].ids.size(), 4u);
}

TEST_F(TransactionalSinkTest, CommitsAtABoundaryOnceTheInFlightLimitsAreReached) {
  for (int i = 0; i < 5; ++i) Produce("m" + std::to_string(i), 0);
  EXPECT_TRUE(log_->committed.empty());
  sink_->TransactionCommitted(Boundary(0x110));  // 5 >= max_messages: at once.
  EXPECT_EQ(log_->committed.size(), 1u);
  ASSERT_EQ(Poll().size(), 1u);
  // Bytes count too.
  ASSERT_TRUE(sink_->Produce(Record("big"), Token(1, 1000), RecordKind::kEvent).ok());
  sink_->TransactionCommitted(Boundary(0x210));
  EXPECT_EQ(log_->committed.size(), 2u);
}

TEST_F(TransactionalSinkTest, ATransactionLargerThanTheLimitsIsOneKafkaTransaction) {
  for (int i = 0; i < 50; ++i) Produce("m" + std::to_string(i), 0);
  EXPECT_TRUE(Poll().empty());
  EXPECT_TRUE(log_->committed.empty());
  sink_->TransactionCommitted(Boundary(0x110));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].messages, 50u);
  ASSERT_EQ(log_->committed.size(), 1u);
  EXPECT_EQ(log_->committed[0].ids.size(), 50u);
}

TEST_F(TransactionalSinkTest, DeadLettersAreReportedAsSuch) {
  Produce("a", 0);
  Produce("x", 0, RecordKind::kDeadLetter);
  Produce("b", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  clock_.Advance(absl::Seconds(1));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].kind, RecordKind::kEvent);
  EXPECT_EQ(d[1].kind, RecordKind::kDeadLetter);
  EXPECT_EQ(d[0].messages + d[1].messages + d[2].messages, 3u);
}

TEST_F(TransactionalSinkTest, AFailedCommitAbortsAndAsksForARewind) {
  log_->commit_results = {absl::UnavailableError("coordinator not available")};
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(Poll().empty()) << "nothing of a failed transaction is acknowledged";
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(sink_->failure().message(), HasSubstr("coordinator not available"));
  EXPECT_THAT(log_->calls,
              ElementsAre("begin", "produce a", "commit 0/110 failed", "abort"));
  EXPECT_EQ(sink_->outstanding(), 0u);
  EXPECT_FALSE(sink_->committed_checkpoint().has_value());
  EXPECT_EQ(sink_->Produce(Record("b"), Token(1), RecordKind::kEvent).code(),
            absl::StatusCode::kAborted);
  EXPECT_EQ(sink_->stats().aborted, 1u);
}

// A commit that could not deliver in time (a silent path to a broker) is not
// aborted: the abort would wait on the same silent paths. The new producer's
// init aborts the transaction.
TEST_F(TransactionalSinkTest, ACommitThatTimedOutIsLeftForTheNextProducerToAbort) {
  log_->commit_results = {absl::DeadlineExceededError("a request to a broker timed out")};
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kAborted) << "recreate and rewind";
  EXPECT_THAT(sink_->failure().message(), HasSubstr("timed out"));
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a", "commit 0/110 failed"));
  EXPECT_FALSE(sink_->committed_checkpoint().has_value());
  EXPECT_EQ(sink_->stats().aborted, 1u);
}

TEST_F(TransactionalSinkTest, CommitsAndAbortsAreCountedInMetrics) {
  Metrics metrics;
  sink_->set_transaction_counter(&metrics);
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  sink_->EndRun();  // Commits.
  Produce("b", 1);
  sink_->EndRun();  // Inside a transaction: aborts.
  std::string text = metrics.RenderPrometheus(clock_.Now());
  EXPECT_THAT(text, HasSubstr("kafka_transactions_total{outcome=\"committed\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kafka_transactions_total{outcome=\"aborted\"} 1\n"));
}

TEST_F(TransactionalSinkTest, AFencedProducerStops) {
  log_->commit_results = {absl::AbortedError("fenced by a newer instance")};
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kFailedPrecondition)
      << "not a rewind: another instance owns the transactional id";
  EXPECT_THAT(sink_->failure().message(), HasSubstr("fenced"));
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a", "commit 0/110 failed"));
}

TEST_F(TransactionalSinkTest, AFenceFoundWhileAbortingStopsToo) {
  log_->produce_results = {absl::OkStatus(), absl::InternalError("fatal")};
  log_->abort_results = {absl::AbortedError("fenced")};
  Produce("a", 0);
  EXPECT_FALSE(sink_->Produce(Record("b"), Token(0), RecordKind::kEvent).ok());
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(TransactionalSinkTest, ARefusedRecordLeavesTheTransactionWhole) {
  log_->produce_results = {absl::InvalidArgumentError("MSG_SIZE_TOO_LARGE"),
                           absl::ResourceExhaustedError("queue full")};
  EXPECT_EQ(sink_->Produce(Record("huge"), Token(0), RecordKind::kEvent).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sink_->Produce(Record("a"), Token(0), RecordKind::kEvent).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(sink_->failure().ok());
  Produce("a", 0);
  Produce("letter", 0, RecordKind::kDeadLetter);
  sink_->TransactionCommitted(Boundary(0x110));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Poll().size(), 2u);
  EXPECT_THAT(log_->Visible(), ElementsAre("a", "letter"));
}

TEST_F(TransactionalSinkTest, EndingBetweenTransactionsCommitsAtOnce) {
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  sink_->EndRun();
  EXPECT_EQ(log_->committed.size(), 1u) << "without waiting for the interval";
  EXPECT_EQ(sink_->outstanding(), 1u) << "the report is still to be served";
  EXPECT_EQ(Poll().size(), 1u);
}

TEST_F(TransactionalSinkTest, EndingInsideATransactionAbortsAllOfIt) {
  Produce("a", 0);
  sink_->TransactionCommitted(Boundary(0x110));
  Produce("b", 1);
  sink_->EndRun();
  EXPECT_TRUE(log_->committed.empty()) << "b's transaction would be split";
  EXPECT_EQ(log_->calls.back(), "abort");
  EXPECT_TRUE(sink_->failure().ok()) << "the producer is fine: the next run reuses it";
  EXPECT_EQ(sink_->outstanding(), 0u);
  EXPECT_TRUE(Poll().empty());
  // The next run starts from the same checkpoint (none) and works.
  Produce("a", 2);
  sink_->TransactionCommitted(Boundary(0x110));
  sink_->EndRun();
  EXPECT_THAT(log_->Visible(), ElementsAre("a"));
}

// --- While a commit goes on ---------------------------------------------------

// A commit that goes on: transaction 0 ("a") is committing.
class CommitUnderWayTest : public TransactionalSinkTest {
 protected:
  void SetUp() override {
    log_->hold_commits = true;
    Produce("a", 0);
    sink_->TransactionCommitted(Boundary(0x110));
    clock_.Advance(absl::Milliseconds(100));
    ASSERT_TRUE(Poll().empty());
    ASSERT_TRUE(log_->committing());
  }
};

TEST_F(CommitUnderWayTest, ReadingGoesOnAndWhatIsReadIsHeld) {
  Produce("b", 1);
  Produce("c", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  Produce("d", 2);  // Transaction 2 half read.
  EXPECT_TRUE(Poll().empty()) << "nothing is acknowledged before the commit ends";
  EXPECT_EQ(sink_->outstanding(), 4u);
  EXPECT_EQ(sink_->next_deadline(), clock_.Now() + kCommitPollGap);
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a"))
      << "the producer is the commit's";
  log_->EndCommit();
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].token.transaction, 0u);
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a", "commit 0/110", "begin",
                                       "produce b", "produce c", "produce d"));
  EXPECT_EQ(sink_->committed_checkpoint(), Boundary(0x110));
  sink_->TransactionCommitted(Boundary(0x310, 3));
  sink_->EndRun();
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_THAT(log_->committed[1].ids, ElementsAre("b", "c", "d"));
  EXPECT_EQ(log_->committed[1].checkpoint.end_lsn, Lsn(0x310));
  d = Poll();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].messages, 2u);
  EXPECT_EQ(d[1].messages, 1u);
  EXPECT_EQ(sink_->outstanding(), 0u);
}

TEST_F(CommitUnderWayTest, WhatWasHeldIsCommittedOnlyAtItsTransactionsEnds) {
  Produce("b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  Produce("c", 2);  // Transaction 2 half read.
  // Long enough that the next Kafka transaction is due as soon as it may commit.
  clock_.Advance(absl::Seconds(1));
  log_->EndCommit();
  Poll();
  EXPECT_THAT(log_->open, ElementsAre("b", "c"));
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(Poll().empty());
  EXPECT_FALSE(log_->committing()) << "committing now would split transaction 2";
  sink_->TransactionCommitted(Boundary(0x310, 3));
  ASSERT_TRUE(log_->committing());
  log_->EndCommit();
  EXPECT_EQ(Poll().size(), 2u);
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_THAT(log_->committed[1].ids, ElementsAre("b", "c"));
  EXPECT_EQ(log_->committed[1].checkpoint.end_lsn, Lsn(0x310));
}

// The ends of held transactions are old news: the stream was busy meanwhile, so
// they must not each look like a quiet stream and commit on their own.
TEST_F(CommitUnderWayTest, HeldTransactionsShareTheNextKafkaTransaction) {
  options_.max_messages = 100;
  for (int n = 1; n <= 3; ++n) {
    Produce("m" + std::to_string(n), n);
    sink_->TransactionCommitted(Boundary(0x100 * n + 0x110, n + 1));
    clock_.Advance(absl::Milliseconds(30));
  }
  log_->EndCommit();
  Poll();
  ASSERT_EQ(log_->committed.size(), 1u);
  ASSERT_TRUE(log_->committing()) << "the stream has been quiet for 30 ms: due now";
  log_->EndCommit();
  Poll();
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_THAT(log_->committed[1].ids, ElementsAre("m1", "m2", "m3"));
  EXPECT_EQ(log_->committed[1].checkpoint.end_lsn, Lsn(0x410));
}

TEST_F(CommitUnderWayTest, HeldTransactionsCommitAtTheLimits) {
  // max_messages is 5: the next Kafka transaction commits at the first end that
  // reaches it, though the stream is busy.
  Produce("m1a", 1);
  Produce("m1b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  Produce("m2a", 2);
  Produce("m2b", 2);
  Produce("m2c", 2);
  sink_->TransactionCommitted(Boundary(0x310, 3));
  EXPECT_EQ(sink_->Produce(Record("y"), Token(3), RecordKind::kEvent).code(),
            absl::StatusCode::kResourceExhausted);
  log_->EndCommit();
  Poll();
  ASSERT_TRUE(log_->committing());
  Produce("y", 3);
  log_->EndCommit();
  Poll();
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_THAT(log_->committed[1].ids, ElementsAre("m1a", "m1b", "m2a", "m2b", "m2c"));
  EXPECT_EQ(log_->committed[1].checkpoint.end_lsn, Lsn(0x310));
  EXPECT_THAT(log_->open, ElementsAre("y"));
}

TEST_F(CommitUnderWayTest, HoldingStopsAtTheInFlightLimits) {
  // max_messages is 5.
  for (int i = 0; i < 5; ++i) Produce("b" + std::to_string(i), 1);
  EXPECT_EQ(sink_->Produce(Record("b5"), Token(1), RecordKind::kEvent).code(),
            absl::StatusCode::kResourceExhausted);
  log_->EndCommit();
  Poll();
  EXPECT_TRUE(sink_->Produce(Record("b5"), Token(1), RecordKind::kEvent).ok())
      << "room once what was held is produced";
  EXPECT_EQ(log_->open.size(), 6u);
}

TEST_F(CommitUnderWayTest, HeldBytesCountToo) {
  ASSERT_TRUE(sink_->Produce(Record("big"), Token(1, 1000), RecordKind::kEvent).ok());
  EXPECT_EQ(sink_->Produce(Record("b"), Token(1), RecordKind::kEvent).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(CommitUnderWayTest, AFullQueueWhileProducingWhatWasHeldResumesAtTheNextPoll) {
  Produce("b", 1);
  Produce("c", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  log_->produce_results = {absl::OkStatus(), absl::ResourceExhaustedError("queue full")};
  log_->EndCommit();
  Poll();
  EXPECT_THAT(log_->open, ElementsAre("b"));
  EXPECT_EQ(sink_->next_deadline(), clock_.Now() + kCommitPollGap)
      << "held records wait for room";
  Produce("d", 2);  // Behind c, still held.
  Poll();
  EXPECT_THAT(log_->open, ElementsAre("b", "c", "d"));
  sink_->TransactionCommitted(Boundary(0x310, 3));
  sink_->EndRun();
  EXPECT_THAT(log_->Visible(), ElementsAre("a", "b", "c", "d"));
}

TEST_F(CommitUnderWayTest, AFailedCommitDropsWhatWasHeldAndConfirmsNothing) {
  Produce("b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  Produce("c", 2);
  log_->commit_results = {absl::UnavailableError("coordinator not available")};
  log_->EndCommit();
  EXPECT_TRUE(Poll().empty()) << "nothing of a failed transaction is acknowledged";
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kAborted) << "recreate and rewind";
  EXPECT_THAT(sink_->failure().message(), HasSubstr("2 read meanwhile, never produced"));
  EXPECT_THAT(log_->calls,
              ElementsAre("begin", "produce a", "commit 0/110 failed", "abort"));
  EXPECT_TRUE(log_->Visible().empty());
  EXPECT_EQ(sink_->outstanding(), 0u);
  EXPECT_FALSE(sink_->committed_checkpoint().has_value());
  EXPECT_EQ(sink_->Produce(Record("d"), Token(2), RecordKind::kEvent).code(),
            absl::StatusCode::kAborted);
  sink_->TransactionCommitted(Boundary(0x310, 3));
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(log_->calls.size(), 4u) << "a failed sink produces nothing more";
}

TEST_F(CommitUnderWayTest, ACommitThatTimesOutDropsWhatWasHeldWithoutAborting) {
  Produce("b", 1);
  log_->commit_results = {absl::DeadlineExceededError("a request to a broker timed out")};
  log_->EndCommit();
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a", "commit 0/110 failed"));
  EXPECT_EQ(sink_->outstanding(), 0u);
}

TEST_F(CommitUnderWayTest, AFencedCommitDropsWhatWasHeldAndStops) {
  Produce("b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  log_->commit_results = {absl::AbortedError("fenced by a newer instance")};
  log_->EndCommit();
  EXPECT_TRUE(Poll().empty());
  EXPECT_EQ(sink_->failure().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(sink_->outstanding(), 0u);
  EXPECT_TRUE(log_->Visible().empty());
}

TEST_F(CommitUnderWayTest, AHeldRecordRefusedForGoodWaitsForItsDeadLetter) {
  Produce("b", 1);
  Produce("huge", 1);
  Produce("c", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  log_->produce_results = {absl::OkStatus(),
                           absl::InvalidArgumentError("MSG_SIZE_TOO_LARGE")};
  log_->EndCommit();
  clock_.Advance(absl::Seconds(1));
  std::vector<Delivery> d = Poll();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(d[0].status.ok()) << "transaction 0's commit";
  EXPECT_EQ(d[1].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(d[1].record.id, "huge") << "the relay dead-letters it";
  EXPECT_EQ(d[1].token.transaction, 1u);
  EXPECT_THAT(log_->open, ElementsAre("b")) << "c waits behind the letter";
  Produce("e", 2);  // Read meanwhile: held, though the limits are near.
  EXPECT_TRUE(Poll().empty());
  EXPECT_FALSE(log_->committing()) << "no commit before the letter is in";
  Produce("huge's letter", 1, RecordKind::kDeadLetter);
  EXPECT_THAT(log_->open, ElementsAre("b", "huge's letter")) << "in huge's place";
  Poll();  // c, transaction 1's end, e.
  EXPECT_THAT(log_->open, ElementsAre("b", "huge's letter", "c", "e"));
  sink_->TransactionCommitted(Boundary(0x310, 3));
  sink_->EndRun();
  EXPECT_THAT(log_->Visible(), ElementsAre("a", "b", "huge's letter", "c", "e"));
  ASSERT_EQ(log_->committed.size(), 2u);
  EXPECT_EQ(log_->committed[1].checkpoint.end_lsn, Lsn(0x310));
}

TEST_F(CommitUnderWayTest, EndingWaitsForTheCommitAndDropsWhatWasHeld) {
  Produce("b", 1);
  sink_->TransactionCommitted(Boundary(0x210, 2));
  Produce("c", 2);
  sink_->EndRun();
  EXPECT_THAT(log_->Visible(), ElementsAre("a"));
  EXPECT_FALSE(log_->committing());
  EXPECT_EQ(sink_->outstanding(), 1u) << "a's report; b and c are read again";
  EXPECT_EQ(Poll().size(), 1u);
  EXPECT_EQ(sink_->outstanding(), 0u);
  EXPECT_TRUE(sink_->failure().ok()) << "the next run reuses the producer";
  EXPECT_THAT(log_->calls, ElementsAre("begin", "produce a", "commit 0/110"));
}

// --- With the relay ----------------------------------------------------------

class ExactlyOnceRelayTest : public ::testing::Test {
 protected:
  ExactlyOnceRelayTest() : stream_(clock_, stop_) {
    options_ = RelayOptionsFrom(Config{}, "app");
    options_.status_interval = absl::Seconds(1);
    options_.min_status_gap = absl::ZeroDuration();
    options_.drain_timeout = absl::Seconds(5);
    sink_options_.interval = absl::Milliseconds(100);
  }

  // A sink over `log`, starting from `checkpoint`.
  std::unique_ptr<TransactionalSink> NewSink(std::optional<Checkpoint> checkpoint) {
    auto log = std::make_unique<FakeTransactionLog>();
    log_ = log.get();
    return std::make_unique<TransactionalSink>(std::move(log), checkpoint, sink_options_,
                                               logger_, [this] { return clock_.Now(); });
  }

  absl::Status Run(Sink& sink) {
    Relay relay(options_, logger_, [this] { return clock_.Now(); });
    stop_ = false;
    absl::Status s = relay.Run(stream_, sink, stop_);
    stats_ = relay.stats();
    return s;
  }

  // Transaction `n` (1-based): `rows` rows, Begin at n*0x100, ending at n*0x100+0x10.
  void Transaction(int n, int rows) {
    stream_.Message(Begin(n, n * 0x100));
    if (n == 1) stream_.Message(OutboxRelation());
    for (int i = 0; i < rows; ++i) stream_.Message(Insert(absl::StrCat(n, ".", i)));
    stream_.Message(Commit(n * 0x100, n * 0x100 + 0x10));
  }

  // Every flush the relay sends must be covered by a committed checkpoint.
  void CheckEveryFlush() {
    stream_.on_status = [this](Lsn flush) {
      Lsn committed;
      for (const auto& c : log_->committed)
        committed = std::max(committed, c.checkpoint.end_lsn);
      EXPECT_LE(flush, std::max(committed, floor_))
          << "confirmed " << flush.ToString() << " before Kafka committed it";
    };
  }

  fakes::FakeClock clock_;
  std::atomic<bool> stop_{false};
  fakes::FakeWalStream stream_;
  common::Logger logger_{common::LogFormat::kJson, common::LogLevel::kError};
  RelayOptions options_;
  TransactionalSinkOptions sink_options_;
  RelayStats stats_;
  FakeTransactionLog* log_ = nullptr;
  Lsn floor_;  // A checkpoint committed before the run.
};

TEST_F(ExactlyOnceRelayTest, TheSlotIsConfirmedOnlyAfterTheKafkaCommit) {
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  for (int n = 1; n <= 20; ++n) {
    Transaction(n, 2);
    stream_.Action([this] { clock_.Advance(absl::Milliseconds(15)); });
  }
  ASSERT_TRUE(Run(*sink).ok());
  EXPECT_GT(log_->committed.size(), 2u) << "the interval spreads them over commits";
  EXPECT_LT(log_->committed.size(), 20u) << "several PostgreSQL transactions per commit";
  EXPECT_EQ(log_->Visible().size(), 40u);
  EXPECT_EQ(stream_.max_flush(), Lsn(20 * 0x100 + 0x10));
  EXPECT_EQ(stats_.acknowledged, 40u);
}

TEST_F(ExactlyOnceRelayTest, ATransactionBeyondTheInFlightLimitsIsReadToItsEnd) {
  options_.max_in_flight = 10;
  sink_options_.max_messages = 10;
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  Transaction(1, 3);
  Transaction(2, 100);  // Ten times the limit: pausing inside it would never end.
  Transaction(3, 1);
  ASSERT_TRUE(Run(*sink).ok());
  EXPECT_EQ(log_->Visible().size(), 104u);
  for (const auto& c : log_->committed) {
    // Every commit ends at a transaction's end.
    EXPECT_EQ(c.checkpoint.end_lsn.value() % 0x100, 0x10u);
  }
  EXPECT_EQ(stream_.max_flush(), Lsn(0x310));
}

TEST_F(ExactlyOnceRelayTest, StoppingInsideATransactionConfirmsOnlyTheCommittedOnes) {
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  Transaction(1, 2);
  stream_.Action([this] { clock_.Advance(absl::Milliseconds(150)); });
  stream_.Message(Keepalive(0x110));  // A turn of the loop: the interval commits 1.
  stream_.Message(Begin(2, 0x200));
  stream_.Message(Insert("2.0"));
  stream_.Action([this] { stop_ = true; });  // SIGTERM, transaction 2 half read.
  stream_.Message(Insert("2.1"));
  ASSERT_TRUE(Run(*sink).ok()) << "a clean stop: transaction 2 is simply read again";
  EXPECT_THAT(log_->Visible(), ElementsAre("1.0", "1.1"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_EQ(log_->calls.back(), "abort");
}

TEST_F(ExactlyOnceRelayTest, StoppingInsideATransactionAbortsTheWholeOnesBeforeItToo) {
  // Transaction 1 is whole but shares the open Kafka transaction with part of 2:
  // committing would split 2, so both are aborted, and nothing is confirmed.
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  Transaction(1, 2);
  stream_.Message(Begin(2, 0x200));
  stream_.Message(Insert("2.0"));
  stream_.Action([this] { stop_ = true; });
  ASSERT_TRUE(Run(*sink).ok());
  EXPECT_TRUE(log_->Visible().empty());
  EXPECT_EQ(stream_.max_flush(), Lsn());
  EXPECT_EQ(log_->calls.back(), "abort");
}

TEST_F(ExactlyOnceRelayTest, ARewindSkipsWhatTheCheckpointCoversAndRepublishesTheRest) {
  // Run 1: transactions 1 and 2 commit to Kafka; 3's commit fails.
  auto first = NewSink(std::nullopt);
  FakeTransactionLog* first_log = log_;
  CheckEveryFlush();
  Transaction(1, 1);
  Transaction(2, 1);
  stream_.Action([&] { first->EndRun(); });  // Commits 1 and 2 now.
  stream_.Action(
      [&] { first_log->commit_results = {absl::UnavailableError("broker gone")}; });
  Transaction(3, 1);
  stream_.Action([this] { clock_.Advance(absl::Seconds(1)); });
  stream_.Message(Keepalive(0x320));
  absl::Status s = Run(*first);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(first_log->Visible(), ElementsAre("1.0", "2.0"));
  EXPECT_LE(stream_.max_flush(), Lsn(0x210));
  std::optional<Checkpoint> checkpoint = first_log->committed.back().checkpoint;
  EXPECT_EQ(checkpoint->end_lsn, Lsn(0x210));

  // Run 2: PostgreSQL 15 set the slot back to the start; the new producer read the
  // checkpoint back. Transactions 1 and 2 are skipped, 3 and 4 published once.
  auto second = NewSink(checkpoint);
  floor_ = checkpoint->end_lsn;
  CheckEveryFlush();
  for (int n = 1; n <= 4; ++n) Transaction(n, 1);
  ASSERT_TRUE(Run(*second).ok());
  EXPECT_THAT(log_->Visible(), ElementsAre("3.0", "4.0"));
  EXPECT_EQ(stats_.rows_skipped, 2u);
  EXPECT_EQ(stream_.max_flush(), Lsn(0x410));
}

TEST_F(ExactlyOnceRelayTest, ReadingGoesOnWhileAKafkaTransactionCommits) {
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  log_->hold_commits = true;
  Transaction(1, 2);
  stream_.Action([this] { clock_.Advance(absl::Milliseconds(150)); });
  stream_.Message(Keepalive(0x110));  // A turn of the loop: 1's commit starts.
  stream_.Action([this] { EXPECT_TRUE(log_->committing()); });
  Transaction(2, 2);
  Transaction(3, 1);
  stream_.Action([this] {
    ASSERT_TRUE(log_->committing()) << "2 and 3 were read while 1 committed";
    EXPECT_THAT(log_->Visible(), ElementsAre());
    log_->EndCommit();
  });
  Transaction(4, 1);
  ASSERT_TRUE(Run(*sink).ok());
  EXPECT_THAT(log_->Visible(), ElementsAre("1.0", "1.1", "2.0", "2.1", "3.0", "4.0"));
  EXPECT_EQ(log_->committed.front().checkpoint.end_lsn, Lsn(0x110));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x410));
  EXPECT_EQ(stats_.acknowledged, 6u);
}

TEST_F(ExactlyOnceRelayTest, ACommitThatFailsWhileLaterTransactionsAreHeldLosesNone) {
  // Run 1: 1 commits; 2's commit fails while 3 and 4 are held.
  auto first = NewSink(std::nullopt);
  FakeTransactionLog* first_log = log_;
  CheckEveryFlush();
  first_log->hold_commits = true;
  Transaction(1, 1);
  stream_.Action([this] { clock_.Advance(absl::Milliseconds(150)); });
  stream_.Message(Keepalive(0x110));
  stream_.Action([&] { first_log->EndCommit(); });
  Transaction(2, 2);
  stream_.Action([this] { clock_.Advance(absl::Milliseconds(150)); });
  stream_.Message(Keepalive(0x210));  // 2's commit starts.
  Transaction(3, 1);
  stream_.Message(Begin(4, 0x400));
  stream_.Message(Insert("4.0"));  // 4 half read.
  stream_.Action([&] {
    first_log->commit_results = {absl::UnavailableError("coordinator not available")};
    first_log->EndCommit();
  });
  stream_.Message(Keepalive(0x400));
  absl::Status s = Run(*first);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(first_log->Visible(), ElementsAre("1.0"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110)) << "nothing past the committed checkpoint";
  for (const std::string& call : first_log->calls)
    EXPECT_THAT(call, ::testing::Not(HasSubstr("produce 3"))) << "3 was never produced";

  // Run 2, from the checkpoint: 2, 3 and 4 once each.
  auto second = NewSink(first_log->committed.back().checkpoint);
  floor_ = Lsn(0x110);
  CheckEveryFlush();
  for (int n = 1; n <= 4; ++n) Transaction(n, n == 2 ? 2 : 1);
  ASSERT_TRUE(Run(*second).ok());
  EXPECT_THAT(log_->Visible(), ElementsAre("2.0", "2.1", "3.0", "4.0"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x410));
}

// Transaction 1 commits while 2 (three rows) is read and held; producing it, the
// producer refuses its second row for good.
class RefusedWhileHeldTest : public ExactlyOnceRelayTest {
 protected:
  void Script() {
    log_->hold_commits = true;
    Transaction(1, 1);
    stream_.Action([this] { clock_.Advance(absl::Milliseconds(150)); });
    stream_.Message(Keepalive(0x110));  // 1's commit starts.
    Transaction(2, 3);
    stream_.Action([this] {
      log_->produce_results = {absl::OkStatus(),
                               absl::InvalidArgumentError("MSG_SIZE_TOO_LARGE")};
      log_->EndCommit();
    });
    Transaction(3, 1);
  }
};

TEST_F(RefusedWhileHeldTest, ItsDeadLetterTakesItsPlace) {
  options_.on_error = OnError::kDeadLetter;
  options_.dead_letter_topic = "dlq";
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  Script();
  ASSERT_TRUE(Run(*sink).ok());
  EXPECT_THAT(log_->Visible(), ElementsAre("1.0", "2.0", "2.1", "2.2", "3.0"))
      << "2.1 is its dead letter";
  EXPECT_EQ(stats_.dead_lettered, 1u);
  EXPECT_EQ(stats_.acknowledged, 4u);
  EXPECT_EQ(stream_.max_flush(), Lsn(0x310));
}

TEST_F(RefusedWhileHeldTest, UnderHaltNothingFromItsTransactionOnIsConfirmed) {
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  Script();
  absl::Status s = Run(*sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("row 2.1"));
  EXPECT_THAT(log_->Visible(), ElementsAre("1.0"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
}

TEST_F(ExactlyOnceRelayTest, AFencedProducerEndsTheRunWithoutConfirmingItsRows) {
  auto sink = NewSink(std::nullopt);
  CheckEveryFlush();
  log_->commit_results = {absl::AbortedError("fenced")};
  Transaction(1, 1);
  stream_.Action([this] { clock_.Advance(absl::Seconds(1)); });
  stream_.Message(Keepalive(0x120));
  absl::Status s = Run(*sink);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

}  // namespace
}  // namespace publisher
