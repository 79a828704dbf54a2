#include "publisher/relay/ack_tracker.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace publisher {
namespace {

using cdc::Lsn;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

MessageToken Enqueue(AckTracker& t, size_t bytes = 10) {
  absl::StatusOr<MessageToken> token = t.Enqueue(bytes, kT0);
  EXPECT_TRUE(token.ok()) << token.status();
  return *token;
}

TEST(AckTrackerTest, NothingIsConfirmableAtFirst) {
  AckTracker t;
  EXPECT_EQ(t.confirmable(), Lsn());
  EXPECT_TRUE(t.idle());
}

TEST(AckTrackerTest, CommittedAndAcknowledgedTransactionIsConfirmable) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken a = Enqueue(t), b = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  EXPECT_EQ(t.confirmable(), Lsn());
  t.Acknowledge(a);
  EXPECT_EQ(t.confirmable(), Lsn()) << "one message of the transaction is still out";
  t.Acknowledge(b);
  EXPECT_EQ(t.confirmable(), Lsn(100));
  EXPECT_TRUE(t.idle());
}

TEST(AckTrackerTest, AcknowledgedButUncommittedIsNotConfirmable) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  t.Acknowledge(Enqueue(t));
  EXPECT_EQ(t.confirmable(), Lsn());
  EXPECT_TRUE(t.in_transaction());
  ASSERT_TRUE(t.Commit(Lsn(50)).ok());
  EXPECT_EQ(t.confirmable(), Lsn(50));
}

TEST(AckTrackerTest, OutOfOrderAcknowledgementsWaitForTheEarlierTransaction) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken first = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  ASSERT_TRUE(t.Begin().ok());
  MessageToken second = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(200)).ok());
  t.Acknowledge(second);  // Another partition answered first.
  EXPECT_EQ(t.confirmable(), Lsn())
      << "must not pass the first, unacknowledged transaction";
  t.Acknowledge(first);
  EXPECT_EQ(t.confirmable(), Lsn(200));
}

TEST(AckTrackerTest, EmptyTransactionsFollowTheirPredecessors) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  ASSERT_TRUE(t.Commit(Lsn(10)).ok());  // e.g. only an UPDATE of the outbox
  EXPECT_EQ(t.confirmable(), Lsn(10));
  ASSERT_TRUE(t.Begin().ok());
  MessageToken m = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(20)).ok());
  ASSERT_TRUE(t.Begin().ok());
  ASSERT_TRUE(t.Commit(Lsn(30)).ok());
  EXPECT_EQ(t.confirmable(), Lsn(10)) << "the empty transaction waits for the one before";
  t.Acknowledge(m);
  EXPECT_EQ(t.confirmable(), Lsn(30));
}

TEST(AckTrackerTest, KeepaliveIsConfirmableOnlyWhenNothingIsPending) {
  AckTracker t;
  t.ObserveServerWalEnd(Lsn(500));
  EXPECT_EQ(t.confirmable(), Lsn(500)) << "idle: the WAL end is safe";

  ASSERT_TRUE(t.Begin().ok());
  MessageToken m = Enqueue(t);
  t.ObserveServerWalEnd(Lsn(900));
  EXPECT_EQ(t.confirmable(), Lsn(500))
      << "open transaction: the WAL end may be inside it";
  ASSERT_TRUE(t.Commit(Lsn(700)).ok());
  t.ObserveServerWalEnd(Lsn(900));
  EXPECT_EQ(t.confirmable(), Lsn(500)) << "unacknowledged message";
  t.Acknowledge(m);
  EXPECT_EQ(t.confirmable(), Lsn(700));
  t.ObserveServerWalEnd(Lsn(900));
  EXPECT_EQ(t.confirmable(), Lsn(900));
}

TEST(AckTrackerTest, ConfirmableNeverDecreases) {
  AckTracker t;
  t.ObserveServerWalEnd(Lsn(1000));
  ASSERT_TRUE(t.Begin().ok());
  ASSERT_TRUE(
      t.Commit(Lsn(900)).ok());  // Resent after a restart, older than the WAL end.
  EXPECT_EQ(t.confirmable(), Lsn(1000));
  t.ObserveServerWalEnd(Lsn(800));
  EXPECT_EQ(t.confirmable(), Lsn(1000));
}

TEST(AckTrackerTest, AFailedMessageBlocksUntilItsTokenIsAcknowledged) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken failed = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  ASSERT_TRUE(t.Begin().ok());
  MessageToken later = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(200)).ok());
  t.Acknowledge(later);
  t.ObserveServerWalEnd(Lsn(300));
  EXPECT_EQ(t.confirmable(), Lsn()) << "nothing passes a failed message";
  t.Acknowledge(failed);  // Its dead-letter copy was delivered.
  EXPECT_EQ(t.confirmable(), Lsn(200));
}

TEST(AckTrackerTest, DuplicateAcknowledgementsCannotReleaseOtherMessages) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken a = Enqueue(t);
  Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  t.Acknowledge(a);
  EXPECT_EQ(t.confirmable(), Lsn());
  EXPECT_EQ(t.in_flight_messages(), 1u);
}

TEST(AckTrackerTest, CountsInFlightMessagesBytesAndAge) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken a = *t.Enqueue(100, kT0);
  MessageToken b = *t.Enqueue(50, kT0 + absl::Seconds(1));
  EXPECT_EQ(t.in_flight_messages(), 2u);
  EXPECT_EQ(t.in_flight_bytes(), 150u);
  EXPECT_EQ(t.oldest_unacknowledged(), kT0);
  t.Acknowledge(a);
  EXPECT_EQ(t.in_flight_bytes(), 50u);
  t.Acknowledge(b);
  EXPECT_EQ(t.in_flight_messages(), 0u);
  EXPECT_EQ(t.in_flight_bytes(), 0u);
  EXPECT_FALSE(t.oldest_unacknowledged().has_value());
}

TEST(AckTrackerTest, OldestPendingCommitSkipsTransactionsWithoutMessages) {
  AckTracker t;
  EXPECT_FALSE(t.oldest_pending_commit().has_value());
  // An empty transaction (another table's) committed first: it waits for nothing.
  ASSERT_TRUE(t.Begin(kT0).ok());
  ASSERT_TRUE(t.Commit(Lsn(10)).ok());
  ASSERT_TRUE(t.Begin(kT0 + absl::Seconds(5)).ok());
  MessageToken a = *t.Enqueue(10, kT0 + absl::Seconds(9));
  ASSERT_TRUE(t.Commit(Lsn(20)).ok());
  ASSERT_TRUE(t.Begin(kT0 + absl::Seconds(7)).ok());
  MessageToken b = *t.Enqueue(10, kT0 + absl::Seconds(9));
  EXPECT_EQ(t.oldest_pending_commit(), kT0 + absl::Seconds(5));
  t.Acknowledge(a);
  EXPECT_EQ(t.oldest_pending_commit(), kT0 + absl::Seconds(7)) << "the open one waits";
  t.Acknowledge(b);
  EXPECT_FALSE(t.oldest_pending_commit().has_value());
}

TEST(AckTrackerTest, ManyMessagesOfATransactionAcknowledgedTogether) {
  // A Kafka transaction's commit acknowledges whole PostgreSQL transactions at once.
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken first = *t.Enqueue(100, kT0);
  for (int i = 0; i < 4; ++i) Enqueue(t, 100);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  MessageToken four = first;
  four.bytes = 400;
  t.Acknowledge(four, 4);
  EXPECT_EQ(t.confirmable(), Lsn()) << "one of the five is still out";
  EXPECT_EQ(t.in_flight_messages(), 1u);
  EXPECT_EQ(t.in_flight_bytes(), 100u);
  // More than are pending releases only what is pending, and nothing of later ones.
  ASSERT_TRUE(t.Begin().ok());
  Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(200)).ok());
  t.Acknowledge(first, 7);
  EXPECT_EQ(t.confirmable(), Lsn(100));
  EXPECT_EQ(t.in_flight_messages(), 1u);
}

TEST(AckTrackerTest, ProtocolMisuseIsAnError) {
  AckTracker t;
  EXPECT_FALSE(t.Enqueue(1, kT0).ok());
  EXPECT_FALSE(t.Commit(Lsn(1)).ok());
  ASSERT_TRUE(t.Begin().ok());
  EXPECT_FALSE(t.Begin().ok());
}

TEST(AckTrackerTest, ResetForgetsPendingWorkAndIgnoresStaleReports) {
  AckTracker t;
  ASSERT_TRUE(t.Begin().ok());
  MessageToken stale = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());
  t.Reset();
  EXPECT_TRUE(t.idle());
  EXPECT_EQ(t.in_flight_messages(), 0u);
  ASSERT_TRUE(t.Begin().ok());
  MessageToken fresh = Enqueue(t);
  ASSERT_TRUE(t.Commit(Lsn(100)).ok());  // The same transaction, received again.
  t.Acknowledge(stale);
  EXPECT_EQ(t.confirmable(), Lsn()) << "a report from before the rewind confirms nothing";
  t.Acknowledge(fresh);
  EXPECT_EQ(t.confirmable(), Lsn(100));
}

// Random interleavings against a model: after every step, confirmable equals the
// end of the acknowledged prefix, and never reaches a transaction with a pending
// message.
TEST(AckTrackerTest, RandomInterleavingsMatchTheModel) {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 300; ++round) {
    AckTracker t;
    struct ModelTx {
      Lsn end;
      bool committed = false;
      std::vector<MessageToken> unacked;
    };
    std::vector<ModelTx> model;
    std::vector<std::pair<size_t, size_t>> outstanding;  // (tx index, token index)
    uint64_t lsn = 100;
    Lsn model_confirmed;
    for (int step = 0; step < 200; ++step) {
      int action = rng() % 4;
      bool open = !model.empty() && !model.back().committed;
      if (action == 0 && !open) {
        ASSERT_TRUE(t.Begin().ok());
        model.push_back({});
      } else if (action == 1 && open) {
        model.back().unacked.push_back(Enqueue(t));
        outstanding.push_back({model.size() - 1, model.back().unacked.size() - 1});
      } else if (action == 2 && open) {
        lsn += 1 + rng() % 50;
        ASSERT_TRUE(t.Commit(Lsn(lsn)).ok());
        model.back().end = Lsn(lsn);
        model.back().committed = true;
      } else if (action == 3 && !outstanding.empty()) {
        size_t pick = rng() % outstanding.size();
        auto [tx, idx] = outstanding[pick];
        outstanding.erase(outstanding.begin() + pick);
        t.Acknowledge(model[tx].unacked[idx]);
        model[tx].unacked[idx].transaction = ~uint64_t{0};  // mark acked
      }
      // Model: contiguous prefix of committed, fully acknowledged transactions.
      for (const ModelTx& m : model) {
        bool pending = false;
        for (const MessageToken& k : m.unacked) pending |= k.transaction != ~uint64_t{0};
        if (!m.committed || pending) {
          EXPECT_LT(t.confirmable(), m.committed ? m.end : Lsn(~uint64_t{0}));
          break;
        }
        model_confirmed = std::max(model_confirmed, m.end);
      }
      ASSERT_EQ(t.confirmable(), model_confirmed)
          << "round " << round << " step " << step;
    }
  }
}

}  // namespace
}  // namespace publisher
