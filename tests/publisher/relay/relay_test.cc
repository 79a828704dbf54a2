// Relay logic against a scripted stream and a controllable sink: what is
// published, and above all what LSN is confirmed when.
#include "publisher/relay/relay.h"

#include "cdc/pg_time.h"
#include "cdc/pgoutput_encoder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"
#include "publisher/operations/metrics.h"
#include "publisher/program/options.h"
#include "tests/publisher/fakes.h"
#include "tests/publisher/wal_script.h"
#include "tools/harness/schema_outbox_relation.h"

namespace publisher {
namespace {

using cdc::Lsn;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace pg = cdc::pgoutput;

using namespace wal_script;  // NOLINT: the script's vocabulary.

class RelayTest : public ::testing::Test {
 protected:
  RelayTest() : stream_(clock_, stop_), sink_(clock_) {
    options_ = RelayOptionsFrom(Config{}, "app");
    options_.status_interval = absl::Seconds(1);
    options_.stats_interval = absl::Seconds(30);
    options_.min_status_gap = absl::ZeroDuration();
    options_.drain_timeout = absl::Seconds(5);
    options_.system_id = kSystem;
  }

  // This PostgreSQL cluster's system identifier (IDENTIFY_SYSTEM).
  static constexpr char kSystem[] = "7301234567890123456";

  absl::Status Run() {
    Relay relay(options_, log_, [this] { return clock_.Now(); });
    relay.set_monitor(&metrics_);
    relay.set_external_fault(&fault_);
    absl::Status s = relay.Run(stream_, sink_, stop_);
    stats_ = relay.stats();
    return s;
  }

  // One one-row transaction, ending at 0x110.
  void OneTransaction(const std::string& id) {
    stream_.Message(Begin(1, 0x100));
    stream_.Message(OutboxRelation());
    stream_.Message(Insert(id));
    stream_.Message(Commit(0x100, 0x110));
  }

  // Three one-row transactions, ending at 0x110, 0x210 and 0x310.
  void ThreeTransactions(const std::string& a, const std::string& b,
                         const std::string& c) {
    stream_.Message(Begin(1, 0x100));
    stream_.Message(OutboxRelation());
    stream_.Message(Insert(a));
    stream_.Message(Commit(0x100, 0x110));
    NextTransaction(2, 0x200, b);
    NextTransaction(3, 0x300, c);
  }

  // A one-row transaction after the outbox relation was sent, committing at
  // `commit` and ending at `commit` + 0x10.
  void NextTransaction(uint32_t xid, uint64_t commit, const std::string& id) {
    stream_.Message(Begin(xid, commit));
    stream_.Message(Insert(id));
    stream_.Message(Commit(commit, commit + 0x10));
  }

  std::vector<std::string> ProducedIds() const {
    std::vector<std::string> ids;
    for (const auto& p : sink_.produced()) ids.push_back(p.record.id);
    return ids;
  }

  fakes::FakeClock clock_;
  std::atomic<bool> stop_{false};
  fakes::FakeWalStream stream_;
  fakes::FakeSink sink_;
  common::Logger log_{common::LogFormat::kJson, common::LogLevel::kError};
  RelayOptions options_;
  RelayStats stats_;
  Metrics metrics_;
  ExternalFault fault_;
};

TEST_F(RelayTest, PublishesOnlyOutboxInsertsAndConfirmsAfterAcknowledgement) {
  stream_.Message(Begin(700, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(OtherRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Insert("7", "", kOtherOid));
  stream_.Message(W(pg::Update{
      std::nullopt, kOutboxOid, 0, {}, {T("a"), T("x"), T("k"), T("U"), T("{}")}}));
  stream_.Message(
      W(pg::Delete{std::nullopt, kOutboxOid, 'K', {T("a"), T(""), T(""), T(""), T("")}}));
  stream_.Message(W(pg::Truncate{std::nullopt, 0, {kOutboxOid}}));
  stream_.Message(W(pg::Message{std::nullopt, 1, Lsn(5), "p", "c"}));
  stream_.Message(Insert("b"));
  stream_.Message(Commit(0x100, 0x130));
  stream_.Action([&] {
    EXPECT_EQ(stream_.max_flush(), Lsn()) << "confirmed before the broker acknowledged";
    sink_.AckAll();
  });
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "b"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x130));
  EXPECT_TRUE(stream_.stopped());
  EXPECT_EQ(stats_.published, 2u);
  EXPECT_EQ(stats_.acknowledged, 2u);

  const auto& first = sink_.produced()[0].record;
  EXPECT_EQ(first.topic, "outbox.event.order");
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(first.value));
  EXPECT_EQ(e.source().xid(), 700u);
  EXPECT_EQ(e.source().commit_lsn(), 0x100u);
  EXPECT_EQ(e.source().lsn(), 0x10u);
  EXPECT_EQ(e.source().database(), "app");
}

TEST_F(RelayTest, NeverConfirmsPastAnUnacknowledgedTransaction) {
  std::vector<Lsn> sent;
  stream_.on_status = [&](Lsn flush) { sent.push_back(flush); };
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  stream_.Message(Begin(2, 0x200));
  stream_.Message(Insert("b"));
  stream_.Message(Commit(0x200, 0x210));
  stream_.Message(Begin(3, 0x300));
  stream_.Message(Commit(0x300, 0x310));  // No outbox rows.
  stream_.Message(Keepalive(0x400));
  stream_.Action([&] { sink_.Ack(1); });  // The later transaction first.
  stream_.Action([&] { clock_.Advance(absl::Seconds(2)); });
  stream_.Message(Keepalive(0x400));
  stream_.Action([&] {
    EXPECT_LT(stream_.max_flush(), Lsn(0x110))
        << "passed transaction 1's unacked message";
    sink_.Ack(0);
  });
  stream_.Action([&] { clock_.Advance(absl::Seconds(2)); });
  stream_.Message(Keepalive(0x400));  // Handled before the acknowledgement is polled.
  stream_.Message(Keepalive(0x400));
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x400));
  EXPECT_TRUE(std::is_sorted(sent.begin(), sent.end())) << "confirmed LSN went backwards";
}

TEST_F(RelayTest, IdleStreamConfirmsTheKeepaliveWalEndAndAsksForKeepalives) {
  stream_.Message(Keepalive(0x500));
  stream_.Action([&] { clock_.Advance(absl::Seconds(2)); });
  stream_.Message(Keepalive(0x600));
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x600));
  bool asked = false;
  for (const auto& s : stream_.statuses()) asked |= s.reply_requested;
  EXPECT_TRUE(asked) << "an idle relay asks the server for its WAL end";
}

TEST_F(RelayTest, ASilentServerEndsTheRunSoTheSupervisorReconnects) {
  // A half-open connection. Without the timeout the relay would wait
  // forever; with it the run ends kUnavailable (reconnect) after the timeout, having
  // asked the server for a keepalive meanwhile, and confirms nothing new.
  options_.replication_timeout = absl::Seconds(60);
  OneTransaction("a");
  stream_.Silence(absl::Hours(1));
  absl::Time start = clock_.Now();
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("silent for 1m"));
  EXPECT_GE(clock_.Now() - start, absl::Seconds(60));
  EXPECT_LT(clock_.Now() - start, absl::Seconds(62));
  bool asked = false;
  for (const auto& st : stream_.statuses()) asked |= st.reply_requested;
  EXPECT_TRUE(asked) << "a quiet server is asked to speak before it is given up";
}

TEST_F(RelayTest, SilenceShorterThanTheTimeoutIsFine) {
  options_.replication_timeout = absl::Seconds(60);
  stream_.Message(Keepalive(0x500));
  stream_.Silence(absl::Seconds(50));
  stream_.Message(Keepalive(0x600));
  stream_.Silence(absl::Seconds(50));
  stream_.Message(Keepalive(0x700));
  EXPECT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x700));
}

TEST_F(RelayTest, KeepaliveInsideAnOpenTransactionIsNotConfirmed) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Keepalive(0x900));
  stream_.Action([&] {
    sink_.AckAll();
    clock_.Advance(absl::Seconds(2));
  });
  stream_.Message(Keepalive(0x900));
  stream_.Action([&] { EXPECT_EQ(stream_.max_flush(), Lsn()); });
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
}

TEST_F(RelayTest, BackpressurePausesReadingButKeepsStatusFlowing) {
  options_.max_in_flight = 2;
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Insert("b"));
  stream_.Message(Insert("c"));  // Must wait until a or b is acknowledged.
  stream_.Message(Commit(0x100, 0x110));
  std::optional<absl::Time> paused_at;
  size_t reads_at_pause = 0, statuses_at_pause = 0;
  sink_.on_poll = [&] {
    if (sink_.produced().size() < 2) return;
    if (!paused_at) {
      paused_at = clock_.Now();
      reads_at_pause = stream_.reads();
      statuses_at_pause = stream_.statuses().size();
      return;
    }
    if (clock_.Now() - *paused_at < absl::Seconds(30) || sink_.produced().size() > 2)
      return;
    EXPECT_EQ(stream_.reads(), reads_at_pause)
        << "read the WAL beyond the in-flight limit";
    EXPECT_GE(stream_.statuses().size(), statuses_at_pause + 20)
        << "status updates stopped while paused: wal_sender_timeout would fire";
    sink_.AckAll();
    sink_.auto_ack = true;
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
}

// The end of a burst: the WAL goes quiet while its last messages are in flight.
// Their acknowledgement is served within delivery_poll_gap, not when the loop
// next wakes for other reasons (up to 100 ms later).
TEST_F(RelayTest, AnAcknowledgementOnAQuietStreamIsServedPromptly) {
  OneTransaction("a");
  stream_.Silence(absl::Seconds(1));
  absl::Time start = clock_.Now();
  absl::Time acked_at = start + absl::Milliseconds(7);  // When the broker answers.
  sink_.on_poll = [&] {
    if (clock_.Now() >= acked_at && !sink_.produced().empty()) sink_.AckAll();
  };
  std::optional<absl::Time> confirmed_at;
  stream_.on_status = [&](Lsn flush) {
    if (flush >= Lsn(0x110) && !confirmed_at) confirmed_at = clock_.Now();
  };
  ASSERT_TRUE(Run().ok());
  ASSERT_TRUE(confirmed_at.has_value());
  EXPECT_LE(*confirmed_at - acked_at, options_.delivery_poll_gap);
}

// While a message is still in flight, a confirmation that advanced waits out
// min_status_gap after the last update, and goes out the moment the gap ends.
TEST_F(RelayTest, AConfirmationHeldBackByTheStatusGapIsSentWhenItEnds) {
  options_.min_status_gap = absl::Milliseconds(150);
  OneTransaction("a");
  stream_.Action([&] { sink_.Ack(0); });
  stream_.Silence(absl::Milliseconds(10));
  NextTransaction(2, 0x200, "b");
  NextTransaction(3, 0x300, "c");
  stream_.Action([&] { sink_.Ack(1); });  // "c" stays in flight.
  stream_.Silence(absl::Seconds(1));
  std::optional<absl::Time> c_acked;
  stream_.Action([&] {
    sink_.Ack(2);
    c_acked = clock_.Now();
  });
  stream_.Silence(absl::Seconds(1));
  std::vector<std::pair<Lsn, absl::Time>> sent;
  stream_.on_status = [&](Lsn flush) {
    if (sent.empty() || flush > sent.back().first) sent.emplace_back(flush, clock_.Now());
  };
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].first, Lsn(0x110));
  EXPECT_EQ(sent[1].first, Lsn(0x210));
  EXPECT_EQ(sent[1].second - sent[0].second, options_.min_status_gap)
      << "with \"c\" in flight, \"b\"'s confirmation waits out the gap, and no longer";
  EXPECT_EQ(sent[2].first, Lsn(0x310));
  ASSERT_TRUE(c_acked.has_value());
  EXPECT_LE(sent[2].second - *c_acked, options_.delivery_poll_gap)
      << "the last acknowledgement leaves nothing in flight: confirmed at once";
}

// The end of a burst is confirmed as soon as it is acknowledged, without waiting
// out min_status_gap after the update before it.
TEST_F(RelayTest, TheEndOfABurstIsConfirmedAtOnce) {
  options_.min_status_gap = absl::Milliseconds(150);
  OneTransaction("a");
  stream_.Action([&] { sink_.AckAll(); });
  stream_.Silence(absl::Milliseconds(10));
  NextTransaction(2, 0x200, "b");
  NextTransaction(3, 0x300, "c");
  stream_.Silence(absl::Milliseconds(20));  // The broker takes its time.
  std::optional<absl::Time> acked;
  stream_.Action([&] {
    sink_.AckAll();
    acked = clock_.Now();
  });
  stream_.Silence(absl::Seconds(1));
  std::optional<absl::Time> first, last;
  stream_.on_status = [&](Lsn flush) {
    if (flush >= Lsn(0x110) && !first) first = clock_.Now();
    if (flush >= Lsn(0x310) && !last) last = clock_.Now();
  };
  ASSERT_TRUE(Run().ok());
  ASSERT_TRUE(first && last && acked);
  EXPECT_LT(*last - *first, options_.min_status_gap);
  EXPECT_LE(*last - *acked, options_.delivery_poll_gap);
}

// Transactions without outbox rows advance the confirmable LSN with nothing in
// flight; they are confirmed at min_status_gap's pace, not once per commit.
TEST_F(RelayTest, TransactionsWithoutOutboxRowsAreConfirmedAtTheGapsPace) {
  options_.min_status_gap = absl::Milliseconds(150);
  options_.status_interval = absl::Seconds(10);
  OneTransaction("a");
  stream_.Action([&] { sink_.AckAll(); });
  for (uint64_t i = 1; i <= 100; ++i) {
    stream_.Silence(absl::Milliseconds(10));
    stream_.Message(Begin(static_cast<uint32_t>(1 + i), 0x100 + i * 0x100));
    stream_.Message(Commit(0x100 + i * 0x100, 0x110 + i * 0x100));
  }
  stream_.Silence(absl::Milliseconds(10));
  std::vector<absl::Time> sent;
  stream_.on_status = [&](Lsn) { sent.push_back(clock_.Now()); };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110 + 100 * 0x100));
  ASSERT_GE(sent.size(), 3u);
  // The first follows the acknowledgement of "a" at once; the last is the one
  // sent at the stop. Every one between waits out the gap.
  for (size_t i = 2; i + 1 < sent.size(); ++i)
    EXPECT_GE(sent[i] - sent[i - 1], options_.min_status_gap) << "update " << i;
  EXPECT_LE(sent.size(), 10u) << "about one a gap over a second, not one a commit";
}

TEST_F(RelayTest, BytesLimitPausesToo) {
  options_.max_in_flight_bytes = 1;  // Any one message fills it.
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Insert("b"));
  stream_.Message(Commit(0x100, 0x110));
  sink_.on_poll = [&] {
    EXPECT_LE(sink_.produced().size(),
              1u + sink_.produced().size() - sink_.outstanding());
    sink_.AckAll();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "b"));
}

TEST_F(RelayTest, HaltOnPermanentFailureConfirmsOnlyWhatCameBefore) {
  ThreeTransactions("ok", "too-big", "after");
  stream_.Action([&] {
    sink_.Ack(0);
    sink_.Fail(1, absl::InvalidArgumentError("MSG_SIZE_TOO_LARGE"));
    sink_.Ack(2);
  });
  stream_.Message(Keepalive(0x400));
  stream_.Message(Keepalive(0x400));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("too-big"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_TRUE(stream_.stopped());
  EXPECT_EQ(stats_.errors, 1u);
}

// A transient failure, or a success without proof of storage (librdkafka's
// implicit ack: DeliveryReportStatus), must neither be produced again behind newer
// messages nor let a later acknowledgement confirm past it: the producer session
// ends (kAborted) so the supervisor rewinds to the slot.
TEST_F(RelayTest, UnprovenDeliveryEndsTheProducerSessionWithoutConfirmingPastIt) {
  std::vector<Lsn> sent;
  stream_.on_status = [&](Lsn flush) { sent.push_back(flush); };
  ThreeTransactions("first", "maybe-stored", "later");
  stream_.Action([&] {
    sink_.Ack(0);
    sink_.Ack(2);  // The later batch of the partition succeeded.
    sink_.Fail(1, absl::UnavailableError("reported success without proof of storage"));
  });
  stream_.Message(Keepalive(0x400));
  stream_.Message(Keepalive(0x400));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_THAT(s.message(), HasSubstr("maybe-stored"));
  EXPECT_THAT(s.message(), HasSubstr("rewind"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  for (Lsn l : sent) EXPECT_LT(l, Lsn(0x210)) << "confirmed past the unproven row";
  EXPECT_THAT(ProducedIds(), ElementsAre("first", "maybe-stored", "later"))
      << "the failed row was produced again in the same session";
  EXPECT_TRUE(stream_.stopped());
  EXPECT_EQ(stats_.rewinds, 1u);
}

// Exactly-once: a Kafka transaction that failed reports its records aborted; the
// session ends the same way, and it counts as a rewind too
// (outbox_publisher_rewinds_total: the soak found it uncounted).
TEST_F(RelayTest, AFailedKafkaTransactionEndsTheSessionAndCountsAsARewind) {
  ThreeTransactions("first", "in-the-failed-transaction", "later");
  stream_.Action([&] {
    sink_.Ack(0);
    sink_.Fail(1, absl::AbortedError("the Kafka transaction failed"));
  });
  stream_.Message(Keepalive(0x400));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_LT(stream_.max_flush(), Lsn(0x210)) << "confirmed past the failed transaction";
  EXPECT_EQ(stats_.rewinds, 1u);
}

TEST_F(RelayTest, TransientDeliveryFailureOfADeadLetterAlsoRewinds) {
  options_.on_error = OnError::kDeadLetter;
  options_.dead_letter_topic = "dlq";
  OneTransaction("bad");
  stream_.Action([&] { sink_.Fail(0, absl::PermissionDeniedError("DENIED")); });
  stream_.Message(Keepalive(0x100));
  stream_.Action([&] {
    ASSERT_EQ(sink_.produced().size(), 2u);
    sink_.Fail(1, absl::UnavailableError("REQUEST_TIMED_OUT"));
  });
  stream_.Message(Keepalive(0x200));
  stream_.Message(Keepalive(0x200));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_EQ(stream_.max_flush(), Lsn());
  EXPECT_EQ(sink_.produced().size(), 2u);
}

TEST_F(RelayTest, DeadLetterCarriesTheErrorAndReleasesTheLsnOnlyWhenAcknowledged) {
  options_.on_error = OnError::kDeadLetter;
  options_.dead_letter_topic = "dlq";
  OneTransaction("bad");
  stream_.Action(
      [&] { sink_.Fail(0, absl::PermissionDeniedError("TOPIC_AUTHORIZATION_FAILED")); });
  stream_.Message(Keepalive(0x100));  // Gives the relay a turn to poll.
  stream_.Action([&] {
    ASSERT_EQ(sink_.produced().size(), 2u);
    EXPECT_EQ(stream_.max_flush(), Lsn()) << "confirmed before the dead letter landed";
    sink_.Ack(1);
  });
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sink_.produced().size(), 2u);
  const auto& letter = sink_.produced()[1];
  EXPECT_EQ(letter.kind, RecordKind::kDeadLetter);
  EXPECT_EQ(letter.record.topic, "dlq");
  EXPECT_EQ(letter.record.value, sink_.produced()[0].record.value);
  EXPECT_THAT(letter.record.headers,
              ::testing::Contains(std::pair<std::string, std::string>(
                  "error", "TOPIC_AUTHORIZATION_FAILED")));
  EXPECT_THAT(letter.record.headers,
              ::testing::Contains(std::pair<std::string, std::string>(
                  "original_topic", "outbox.event.order")));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_EQ(stats_.dead_lettered, 1u);
}

TEST_F(RelayTest, UnmappableRowHaltsByDefault) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(UnmappableInsert());
  stream_.Message(Commit(0x100, 0x110));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("aggregate_id"));
  EXPECT_EQ(stream_.max_flush(), Lsn());
  EXPECT_TRUE(sink_.produced().empty());
}

TEST_F(RelayTest, UnmappableRowGoesToTheDeadLetterTopicAsJson) {
  options_.on_error = OnError::kDeadLetter;
  sink_.auto_ack = true;
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(UnmappableInsert());
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sink_.produced().size(), 1u);
  const auto& letter = sink_.produced()[0].record;
  EXPECT_EQ(letter.topic, "outbox.dead-letter");
  EXPECT_EQ(
      letter.value,
      R"({"id":"x","aggregate_type":"order","aggregate_id":null,"event_type":"E","payload":"{}"})");
  EXPECT_THAT(letter.headers, ::testing::Contains(std::pair<std::string, std::string>(
                                  "error_stage", "mapping")));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  // Counted by kind, for /metrics.
  RelaySnapshot m = metrics_.relay();
  EXPECT_EQ(m.stats.errors_by_kind[static_cast<int>(ErrorKind::kMapping)], 1u);
  EXPECT_EQ(m.stats.errors_by_kind[static_cast<int>(ErrorKind::kDelivery)], 0u);
  EXPECT_EQ(m.stats.dead_lettered, 1u);
  EXPECT_EQ(stats_.errors, 1u);
}

TEST_F(RelayTest, MissingColumnStopsWithAFailedPrecondition) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(W(pg::Relation{std::nullopt,
                                 kOutboxOid,
                                 "public",
                                 "outbox",
                                 'd',
                                 {{1, "id", 2950, -1}, {0, "payload", 3802, -1}}}));
  stream_.Message(Insert("a"));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("has no column \"aggregate_id\""));
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

TEST_F(RelayTest, SchemaChangeRebindsTheOutboxTable) {
  sink_.auto_ack = true;
  options_.topic = "{table}.{region}";
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation({"region"}));
  stream_.Message(W(pg::Insert{
      std::nullopt, kOutboxOid, {T("a"), T("o"), T("k"), T("E"), T("{}"), T("eu")}}));
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sink_.produced().size(), 1u);
  EXPECT_EQ(sink_.produced()[0].record.topic, "outbox.eu");
}

TEST_F(RelayTest, StreamErrorEndsTheRunWithoutConfirmingPendingWork) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  stream_.Action([&] { stream_.FailNextRead(absl::UnavailableError("server closed")); });
  stream_.Message(Keepalive(0x200));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

TEST_F(RelayTest, StopDrainsAcknowledgementsThenConfirms) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  // The script ends: stop is requested with the message still unacknowledged.
  sink_.on_poll = [&] {
    if (stop_) sink_.AckAll();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_TRUE(stream_.stopped());
}

TEST_F(RelayTest, StopWithAnUnreachableBrokerReportsUnacknowledgedWork) {
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("1 message(s) still unacknowledged"));
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

TEST_F(RelayTest, FullLocalQueueKeepsStatusFlowingAndHonoursStop) {
  sink_.reject_topic = "outbox.event.order";
  sink_.reject_status = absl::ResourceExhaustedError("local queue full");
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  int polls = 0;
  sink_.on_poll = [&] {
    if (++polls == 100) stop_ = true;  // 10 s of fake time stuck on a full queue.
  };
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_GE(stream_.statuses().size(), 8u)
      << "status updates stopped while the queue was full";
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

TEST_F(RelayTest, AFailureFoundWhileTheQueueIsFullIsDeadLetteredAfterTheWaitingRecord) {
  options_.on_error = OnError::kDeadLetter;
  options_.dead_letter_topic = "dlq";
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  stream_.Message(Begin(2, 0x200));
  stream_.Action([&] {  // "b" meets a full local queue.
    sink_.reject_topic = "outbox.event.order";
    sink_.reject_status = absl::ResourceExhaustedError("local queue full");
  });
  stream_.Message(Insert("b"));
  stream_.Message(Commit(0x200, 0x210));
  stream_.Action([&] { sink_.auto_ack = true; });
  int waiting = 0;
  sink_.on_poll = [&] {
    if (sink_.reject_topic.empty()) return;
    // While "b" waits for room, "a" turns out refused for good.
    if (++waiting == 1) sink_.Fail(0, absl::PermissionDeniedError("DENIED"));
    if (waiting == 3) sink_.reject_topic.clear();
  };
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sink_.produced().size(), 3u);
  // The dead letter is produced by the loop once "b" is in, not from inside b's wait.
  EXPECT_EQ(sink_.produced()[1].record.id, "b");
  EXPECT_EQ(sink_.produced()[2].kind, RecordKind::kDeadLetter);
  EXPECT_EQ(sink_.produced()[2].record.topic, "dlq");
  EXPECT_EQ(sink_.produced()[2].record.value, sink_.produced()[0].record.value);
  EXPECT_EQ(stream_.max_flush(), Lsn(0x210));
  EXPECT_EQ(stats_.dead_lettered, 1u);
  EXPECT_EQ(stats_.acknowledged, 1u);
}

TEST_F(RelayTest, AStreamThatBreaksWhileTheQueueIsFullEndsTheRun) {
  sink_.reject_topic = "outbox.event.order";
  sink_.reject_status = absl::ResourceExhaustedError("local queue full");
  OneTransaction("a");
  stream_.on_status = [&](cdc::Lsn) {
    stream_.FailNextSendStatus(absl::UnavailableError("connection lost"));
  };
  int polls = 0;
  sink_.on_poll = [&] {
    if (++polls == 1000) stop_ = true;  // Were the broken stream ignored.
  };
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("connection lost"));
  EXPECT_EQ(stream_.max_flush(), Lsn());
}

TEST_F(RelayTest, ANewSessionIgnoresLateReportsFromTheLastOne) {
  Relay relay(options_, log_, [this] { return clock_.Now(); });
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  stream_.Action(
      [&] { stream_.FailNextRead(absl::UnavailableError("connection lost")); });
  stream_.Message(Keepalive(0x110));
  ASSERT_EQ(relay.Run(stream_, sink_, stop_).code(), absl::StatusCode::kUnavailable);
  ASSERT_EQ(sink_.produced().size(), 1u);

  // Reconnected: the server sends the unconfirmed transaction again.
  std::atomic<bool> stop{false};
  fakes::FakeWalStream second(clock_, stop);
  second.Message(Begin(1, 0x100));
  second.Message(OutboxRelation());
  second.Message(Insert("a"));
  second.Message(Commit(0x100, 0x110));
  second.Action([&] { sink_.Ack(0); });  // The first session's copy lands late.
  second.Message(Keepalive(0x110));
  second.Message(Keepalive(0x110));
  second.Action([&] {
    EXPECT_EQ(second.max_flush(), Lsn())
        << "a stale report confirmed the new session's row";
    sink_.Ack(1);
  });
  second.Message(Keepalive(0x110));
  ASSERT_TRUE(relay.Run(second, sink_, stop).ok());
  EXPECT_EQ(second.max_flush(), Lsn(0x110));
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "a"));
}

TEST_F(RelayTest, PublishesItsFiguresToMetricsWhileStreamingAndWhenItEnds) {
  options_.metrics_interval = absl::ZeroDuration();
  stream_.Message(W(pg::Begin{Lsn(0x100), cdc::ToPgTimestamp(clock_.Now()), 1}));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("a"));
  stream_.Message(Commit(0x100, 0x110));
  stream_.Action([&] {
    RelaySnapshot m = metrics_.relay();
    EXPECT_TRUE(m.streaming);
    EXPECT_EQ(m.stats.rows_seen, 1u);
    EXPECT_EQ(m.stats.published, 1u);
    EXPECT_EQ(m.in_flight_messages, 1u);
    EXPECT_EQ(m.stats.acknowledged, 0u);
    EXPECT_TRUE(metrics_.Health(clock_.Now()).ok);
    clock_.Advance(absl::Milliseconds(40));
    sink_.AckAll();
  });
  // Two turns of the loop: the reports are served, then published.
  stream_.Message(Keepalive(0x50));
  stream_.Message(Keepalive(0x50));
  stream_.Action([&] {
    RelaySnapshot m = metrics_.relay();
    EXPECT_EQ(m.stats.acknowledged, 1u);
    EXPECT_EQ(m.in_flight_messages, 0u);
    EXPECT_EQ(m.stats.commit_to_ack.count(), 1u);
    EXPECT_NEAR(m.stats.commit_to_ack.sum_seconds(), 0.040, 0.001);
    EXPECT_EQ(m.stats.last_ack, clock_.Now());
  });
  ASSERT_TRUE(Run().ok());
  RelaySnapshot end = metrics_.relay();
  EXPECT_FALSE(end.streaming);
  EXPECT_EQ(end.stats.confirmed, Lsn(0x110));
  EXPECT_FALSE(metrics_.Health(clock_.Now()).ok);
}

TEST_F(RelayTest, TransactionsTheSinksCheckpointCoversAreSkippedButConfirmed) {
  // The sink's Kafka checkpoint says the transaction ending at 0x210 is in Kafka:
  // the first two of three transactions (0x110, 0x210) are skipped, the third
  // (committing at 0x300, above the checkpoint) is produced.
  const absl::Time kCommit = absl::FromUnixSeconds(1'800'000'100);
  sink_.checkpoint = Checkpoint{Lsn(0x210), 2, kCommit, kSystem};
  sink_.auto_ack = true;
  ThreeTransactions("a", "b", "c");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("c"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x310)) << "skipped transactions hold nothing back";
  EXPECT_EQ(stats_.rows_seen, 3u);
  EXPECT_EQ(stats_.rows_skipped, 2u);
  // Only the produced transaction is a boundary for the sink.
  ASSERT_EQ(sink_.boundaries.size(), 1u);
  EXPECT_EQ(sink_.boundaries[0].end_lsn, Lsn(0x310));
  EXPECT_EQ(sink_.boundaries[0].xid, 3u);
  EXPECT_EQ(sink_.boundaries[0].system_id, kSystem) << "what the next start checks";
}

TEST_F(RelayTest, ACheckpointOfAnotherClusterStopsTheRunBeforeAnythingIsRead) {
  // The transactional id's checkpoint is of another cluster's WAL (a reused
  // --transactional-id, or a database re-created while Kafka kept its topics):
  // taking it would skip every transaction here below 0x900, all three of them.
  sink_.checkpoint = Checkpoint{Lsn(0x900), 9, absl::UnixEpoch(), "7300000000000000001"};
  sink_.auto_ack = true;
  ThreeTransactions("a", "b", "c");
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("7300000000000000001"));
  EXPECT_THAT(s.message(), HasSubstr(kSystem));
  EXPECT_THAT(ProducedIds(), ElementsAre());
  EXPECT_EQ(stream_.max_flush(), Lsn()) << "nothing may be confirmed as published";
  EXPECT_EQ(stats_.rows_skipped, 0u);
}

TEST_F(RelayTest, ACheckpointWithoutASystemIdentifierIsResumedFrom) {
  // Written before checkpoints named their cluster: trusted as before.
  sink_.checkpoint = Checkpoint{Lsn(0x210), 2, absl::UnixEpoch()};
  sink_.auto_ack = true;
  ThreeTransactions("a", "b", "c");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("c"));
}

TEST_F(RelayTest, ACheckpointOfAnEarlierTimelineSkipsOnlyBelowItsSwitchPoint) {
  // Written on timeline 1 up to 0x310, past where this server's timeline 2 branched
  // off (0x150): the transactions at 0x200 and 0x300 here are the promoted
  // standby's own, never published. Only the first (0x110) is covered.
  sink_.checkpoint = Checkpoint{Lsn(0x310), 3, absl::UnixEpoch(), kSystem, 1};
  sink_.auto_ack = true;
  options_.timeline = 2;
  options_.history = {{1, Lsn(0x150)}};
  ThreeTransactions("a", "b", "c");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("b", "c"));
  ASSERT_EQ(sink_.boundaries.size(), 2u);
  EXPECT_EQ(sink_.boundaries[0].timeline, 2u) << "checkpoints name this timeline";
}

TEST_F(RelayTest, ATransactionCommittingAtTheCheckpointsEndIsNotSkipped) {
  sink_.checkpoint =
      Checkpoint{Lsn(0x100), 0, absl::UnixEpoch()};  // Ends where T1 commits.
  sink_.auto_ack = true;
  ThreeTransactions("a", "b", "c");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "b", "c"));
  ASSERT_EQ(sink_.boundaries.size(), 3u);
  EXPECT_EQ(sink_.boundaries[0].end_lsn, Lsn(0x110));
}

TEST_F(RelayTest, WithoutACheckpointNothingIsSkippedAndEveryCommitIsABoundary) {
  sink_.auto_ack = true;
  ThreeTransactions("a", "b", "c");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(stats_.rows_skipped, 0u);
  EXPECT_EQ(sink_.boundaries.size(), 3u);
}

TEST_F(RelayTest, ExternalFaultEndsTheRunConfirmingOnlyWhatWasAcknowledged) {
  ThreeTransactions("a", "b", "c");
  stream_.Action([&] {
    sink_.Ack(0);
    sink_.Ack(2);  // "b" stays unacknowledged: nothing past 0x110 may be confirmed.
    fault_.Raise(absl::FailedPreconditionError("the outbox table was dropped"));
  });
  stream_.Message(Keepalive(0x50));  // The next turn of the loop sees the fault.
  absl::Status s = Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("dropped"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_TRUE(stream_.stopped());
}

}  // namespace
}  // namespace publisher

namespace publisher {
namespace {

// Outbox events without a table (--message-prefix): transactional messages with
// the prefix, interleaved with table rows in commit order.
class MessageRelayTest : public RelayTest {
 protected:
  MessageRelayTest() { options_.message_prefix = "outbox"; }

  static std::string Event(const std::string& id, uint8_t flags = 1,
                           const std::string& prefix = "outbox") {
    return W(pg::Message{
        std::nullopt, flags, Lsn(0x150), prefix,
        absl::StrCat(R"({"id":")", id,
                     R"(","aggregate_type":"order","aggregate_id":"k","event_type":"E",)"
                     R"("payload":{"n":1}})")});
  }
};

TEST_F(MessageRelayTest, TransactionalMessagesWithThePrefixAreEventsInCommitOrder) {
  sink_.auto_ack = true;
  stream_.Message(Begin(1, 0x100));
  stream_.Message(OutboxRelation());
  stream_.Message(Insert("row-1"));
  stream_.Message(Event("msg-1"));
  stream_.Message(Event("other", 1, "audit"));  // Another prefix: not ours.
  stream_.Message(Insert("row-2"));
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("row-1", "msg-1", "row-2"));
  outbox::v1::Envelope e;
  ASSERT_TRUE(e.ParseFromString(sink_.produced()[1].record.value));
  EXPECT_EQ(e.source().table(), "");
  EXPECT_EQ(e.source().lsn(), 0x150u);
  EXPECT_EQ(e.source().commit_lsn(), 0x100u);
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
  EXPECT_EQ(stats_.rows_seen, 3u);
}

TEST_F(MessageRelayTest, ANonTransactionalMessageIsIgnored) {
  sink_.auto_ack = true;
  stream_.Message(Event("outside", /*flags=*/0));  // Outside any transaction.
  OneTransaction("a");
  ASSERT_TRUE(Run().ok());
  EXPECT_THAT(ProducedIds(), ElementsAre("a"));
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));
}

TEST_F(MessageRelayTest, WithoutAPrefixMessagesPublishNothing) {
  options_.message_prefix = "";
  sink_.auto_ack = true;
  stream_.Message(Begin(1, 0x100));
  stream_.Message(Event("msg-1"));
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  EXPECT_TRUE(ProducedIds().empty());
}

TEST_F(MessageRelayTest, AMessageThatCannotBeMappedFollowsOnError) {
  options_.on_error = OnError::kDeadLetter;
  sink_.auto_ack = true;
  stream_.Message(Begin(1, 0x100));
  stream_.Message(W(pg::Message{std::nullopt, 1, Lsn(0x150), "outbox", "not json"}));
  stream_.Message(Commit(0x100, 0x110));
  ASSERT_TRUE(Run().ok());
  ASSERT_EQ(sink_.produced().size(), 1u);
  EXPECT_EQ(sink_.produced()[0].record.topic, "outbox.dead-letter");
  EXPECT_EQ(sink_.produced()[0].record.value, R"("not json")");
  EXPECT_EQ(stream_.max_flush(), Lsn(0x110));

  // Halting confirms nothing past it.
  options_.on_error = OnError::kHalt;
  fakes::FakeWalStream halted(clock_, stop_);
  stop_ = false;
  halted.Message(Begin(1, 0x100));
  halted.Message(W(pg::Message{std::nullopt, 1, Lsn(0x150), "outbox", "[]"}));
  halted.Message(Commit(0x100, 0x110));
  Relay relay(options_, log_, [this] { return clock_.Now(); });
  absl::Status s = relay.Run(halted, sink_, stop_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("not a JSON object"));
  EXPECT_EQ(halted.max_flush(), Lsn());
}

}  // namespace
}  // namespace publisher
