// OutboxConsumer against fakes: each record's effect once, offsets only after the
// effect committed, retries that hold back their partition only, dead letters
// that never lose a record, and faults of the database and the broker.
#include "consumer/outbox_consumer.h"

#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consumer/fakes.h"

namespace consumer {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

class OutboxConsumerTest : public ::testing::Test {
 protected:
  OutboxConsumerTest() : log_(common::LogFormat::kText, common::LogLevel::kWarn, sink_) {
    source_.db_commits = &db_.commits;
    options_.group = "g";
    options_.retry.max_attempts = 3;
    options_.retry.initial_backoff = absl::Milliseconds(100);
    options_.retry.max_backoff = absl::Seconds(1);
  }
  ~OutboxConsumerTest() override { std::fclose(sink_); }

  // The handler writes one effect per call, and fails as `failures` says for its id:
  // a list of statuses returned by its first calls.
  absl::Status Handle(const Event& e, Transaction& tx) {
    ++calls_[e.envelope.id()];
    traces_[e.envelope.id()] = e.trace.traceparent;
    auto& script = failures_[e.envelope.id()];
    if (!script.empty()) {
      absl::Status s = script.front();
      script.erase(script.begin());
      if (!s.ok()) {
        // Written, then rolled back with the failed transaction.
        EXPECT_TRUE(tx.Command(absl::StrCat("EFFECT failed ", e.envelope.id())).ok());
        return s;
      }
    }
    return tx.Command(absl::StrCat("EFFECT ", e.envelope.id()));
  }

  OutboxConsumer& Consumer() {
    if (!consumer_) {
      consumer_ = std::make_unique<OutboxConsumer>(
          source_, db_, table_, dead_letters_,
          [this](const Event& e, Transaction& tx) { return Handle(e, tx); }, options_,
          log_, [this] { return clock_.now; });
    }
    return *consumer_;
  }

  // Steps until `done` holds (or 10000 steps: the test then fails on what it checks).
  template <typename Pred>
  void StepUntil(Pred done) {
    for (int i = 0; i < 10000 && !done(); ++i) ASSERT_TRUE(Consumer().Step().ok());
  }
  void StepUntilDone(size_t records) {
    StepUntil([&] { return source_.done.size() >= records; });
  }

  std::vector<int64_t> DoneOffsets(int32_t partition = 0) const {
    std::vector<int64_t> offsets;
    for (const auto& d : source_.done) {
      if (d.tp.partition == partition) offsets.push_back(d.offset);
    }
    return offsets;
  }

  // What the consumer logged so far.
  std::string Logged() {
    std::fflush(sink_);
    std::rewind(sink_);
    std::string text;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), sink_)) > 0;) text.append(buf, n);
    return text;
  }

  std::FILE* sink_ = std::tmpfile();
  common::Logger log_;
  FakeClock clock_;
  FakeSource source_{clock_};
  FakeDatabase db_;
  FakeDeadLetters dead_letters_;
  ProcessedTable table_{"processed_messages"};
  ConsumerOptions options_;
  std::map<std::string, int> calls_;
  std::map<std::string, std::string> traces_;  // The traceparent each handler call saw.
  std::map<std::string, std::vector<absl::Status>> failures_;
  std::unique_ptr<OutboxConsumer> consumer_;
};

TEST_F(OutboxConsumerTest, AppliesEachRecordAndLetsItsOffsetGoOnlyAfterTheCommit) {
  for (int i = 0; i < 3; ++i)
    source_.Append(EnvelopeRecord("t", 0, i, absl::StrCat("e", i)));
  StepUntilDone(3);
  EXPECT_THAT(db_.effects, ElementsAre("e0", "e1", "e2"));
  ASSERT_EQ(source_.done.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(source_.done[i].offset, i);
    // The effect of record i was the (i+1)-th commit, made before its offset went.
    EXPECT_EQ(source_.done[i].commits_before, i + 1);
  }
  EXPECT_EQ(Consumer().stats().applied, 3u);
}

TEST_F(OutboxConsumerTest, SkipsAnIdAppliedBefore) {
  // A publisher rewind: the same event again, at a later offset.
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  source_.Append(EnvelopeRecord("t", 0, 1, "e1"));
  source_.Append(EnvelopeRecord("t", 0, 2, "e0"));
  StepUntilDone(3);
  EXPECT_THAT(db_.effects, ElementsAre("e0", "e1"));
  EXPECT_EQ(calls_["e0"], 1);
  EXPECT_THAT(DoneOffsets(), ElementsAre(0, 1, 2));
  EXPECT_EQ(Consumer().stats().duplicates, 1u);
}

TEST_F(OutboxConsumerTest, ACommitLostWithTheConnectionLetsNoOffsetGoAndIsRetried) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  db_.lose_commits = 1;
  ASSERT_TRUE(Consumer().Step().ok());
  EXPECT_TRUE(source_.done.empty());
  EXPECT_TRUE(db_.effects.empty());
  StepUntilDone(1);
  EXPECT_THAT(db_.effects, ElementsAre("e0"));
  EXPECT_THAT(DoneOffsets(), ElementsAre(0));
  EXPECT_EQ(calls_["e0"], 2);
  EXPECT_TRUE(dead_letters_.sent.empty());
}

TEST_F(OutboxConsumerTest, ACommitThatHappenedButReportedAnErrorIsNotAppliedTwice) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  db_.ambiguous_commits = 1;
  StepUntilDone(1);
  EXPECT_THAT(db_.effects, ElementsAre("e0"));
  EXPECT_EQ(calls_["e0"], 1);  // The retry found its id.
  EXPECT_EQ(Consumer().stats().duplicates, 1u);
}

TEST_F(OutboxConsumerTest, ARetryHoldsBackItsPartitionOnlyAndKeepsItsOrder) {
  for (int i = 0; i < 3; ++i)
    source_.Append(EnvelopeRecord("t", 0, i, absl::StrCat("a", i)));
  for (int i = 0; i < 3; ++i)
    source_.Append(EnvelopeRecord("t", 1, i, absl::StrCat("b", i)));
  failures_["a0"] = {RetryableError("busy"), RetryableError("busy")};
  StepUntilDone(6);
  // Partition 1 went on while a0 waited; partition 0 kept its order.
  EXPECT_THAT(DoneOffsets(0), ElementsAre(0, 1, 2));
  EXPECT_THAT(DoneOffsets(1), ElementsAre(0, 1, 2));
  EXPECT_EQ(source_.done[0].tp.partition, 1);
  std::vector<std::string> partition0;
  for (const std::string& e : db_.effects) {
    if (e[0] == 'a') partition0.push_back(e);
  }
  EXPECT_THAT(partition0, ElementsAre("a0", "a1", "a2"));
  EXPECT_EQ(calls_["a0"], 3);
  EXPECT_EQ(calls_["a1"], 1);
  EXPECT_EQ(source_.pauses, 1);
  EXPECT_THAT(source_.resumed, ElementsAre(Pair(TopicPartition{"t", 0}, 1)));
  // a1 came through once more after the pause (fetched before it): dropped.
  EXPECT_EQ(Consumer().stats().dropped, 1u);
  EXPECT_TRUE(dead_letters_.sent.empty());
}

TEST_F(OutboxConsumerTest, ARetryWaitsForItsBackoff) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  failures_["e0"] = {RetryableError("busy")};
  absl::Time start = clock_.now;
  StepUntilDone(1);
  // The first backoff is between half and all of initial_backoff.
  EXPECT_GE(clock_.now - start, absl::Milliseconds(50));
  EXPECT_EQ(calls_["e0"], 2);
}

TEST_F(OutboxConsumerTest, RetriesRunOutIntoTheDeadLetterTopic) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  source_.Append(EnvelopeRecord("t", 0, 1, "e1"));
  failures_["e0"] = std::vector<absl::Status>(10, RetryableError("still busy"));
  StepUntilDone(2);
  EXPECT_EQ(calls_["e0"], 3);  // max_attempts.
  ASSERT_EQ(dead_letters_.sent.size(), 1u);
  EXPECT_EQ(dead_letters_.sent[0].record.offset, 0);
  EXPECT_THAT(dead_letters_.sent[0].headers,
              testing::IsSupersetOf(
                  {Pair("dlq.reason", "retries exhausted"),
                   Pair("dlq.error", "still busy"), Pair("dlq.error.code", "UNAVAILABLE"),
                   Pair("dlq.attempts", "3"), Pair("dlq.source.topic", "t"),
                   Pair("dlq.source.partition", "0"), Pair("dlq.source.offset", "0"),
                   Pair("dlq.consumer.group", "g"), Pair("id", "e0")}));
  EXPECT_THAT(db_.effects, ElementsAre("e1"));
  EXPECT_THAT(DoneOffsets(), ElementsAre(0, 1));
  EXPECT_EQ(db_.ids.count("e0"), 0u);  // A re-drive after a fix applies it.
}

TEST_F(OutboxConsumerTest, APermanentErrorIsDeadLetteredAtOnce) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  failures_["e0"] = {PermanentError("no such order")};
  StepUntilDone(1);
  EXPECT_EQ(calls_["e0"], 1);
  ASSERT_EQ(dead_letters_.sent.size(), 1u);
  EXPECT_THAT(dead_letters_.sent[0].headers,
              testing::IsSupersetOf({Pair("dlq.reason", "permanent error"),
                                     Pair("dlq.error", "no such order"),
                                     Pair("dlq.attempts", "1")}));
  EXPECT_TRUE(db_.effects.empty());  // Its writes were rolled back.
  EXPECT_EQ(source_.pauses, 0);
}

TEST_F(OutboxConsumerTest, TheWritersTraceContextReachesTheHandlerAndTheDeadLetterLog) {
  const std::string traceparent =
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  InboundRecord traced = EnvelopeRecord("t", 0, 0, "e0");
  traced.headers.push_back({"traceparent", traceparent});
  source_.Append(traced);
  source_.Append(EnvelopeRecord("t", 0, 1, "e1"));
  failures_["e0"] = {PermanentError("no such order")};
  StepUntilDone(2);
  EXPECT_EQ(traces_["e0"], traceparent);
  EXPECT_EQ(traces_["e1"], "");
  std::string log = Logged();
  EXPECT_THAT(log, testing::HasSubstr("record sent to the dead-letter topic"));
  EXPECT_THAT(log, testing::HasSubstr(traceparent));
}

TEST_F(OutboxConsumerTest, AnOffsetWaitsUntilItsDeadLetterIsStored) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  failures_["e0"] = {PermanentError("bad"), PermanentError("bad")};
  dead_letters_.failures = 1;
  ASSERT_TRUE(Consumer().Step().ok());
  EXPECT_TRUE(source_.done.empty());
  EXPECT_TRUE(dead_letters_.sent.empty());
  StepUntilDone(1);
  EXPECT_EQ(dead_letters_.sent.size(), 1u);
  EXPECT_THAT(DoneOffsets(), ElementsAre(0));
}

TEST_F(OutboxConsumerTest, ARecordThatIsNoEnvelopeIsDeadLetteredWithoutTheHandler) {
  InboundRecord r = EnvelopeRecord("t", 0, 0, "e0");
  r.headers = {{"content_type", "application/json"}};
  source_.Append(r);
  StepUntilDone(1);
  EXPECT_TRUE(calls_.empty());
  ASSERT_EQ(dead_letters_.sent.size(), 1u);
  EXPECT_THAT(dead_letters_.sent[0].headers,
              testing::IsSupersetOf({Pair("dlq.reason", "not an outbox envelope"),
                                     Pair("dlq.attempts", "0")}));
}

TEST_F(OutboxConsumerTest, ADatabaseThatIsDownCostsNoAttempts) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  db_.down = 10;  // More failures than max_attempts.
  StepUntilDone(1);
  EXPECT_THAT(db_.effects, ElementsAre("e0"));
  EXPECT_TRUE(dead_letters_.sent.empty());
  EXPECT_GE(Consumer().stats().retries, 10u);
}

TEST_F(OutboxConsumerTest, ARevokedPartitionsHeldRecordIsLeftToItsNextOwner) {
  source_.Append(EnvelopeRecord("t", 0, 0, "e0"));
  source_.Append(EnvelopeRecord("t", 1, 0, "f0"));
  failures_["e0"] = {RetryableError("busy"), RetryableError("busy")};
  StepUntil([&] { return calls_["e0"] == 1 && calls_["f0"] == 1; });
  source_.Revoke({"t", 0});
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(Consumer().Step().ok());
  EXPECT_EQ(calls_["e0"], 1);  // Not retried here any more.
  EXPECT_THAT(DoneOffsets(0), ElementsAre());
  EXPECT_THAT(db_.effects, ElementsAre("f0"));
}

TEST_F(OutboxConsumerTest, PrunesOnlyBelowEachPartitionsCommittedOffset) {
  options_.prune_interval = absl::Minutes(5);
  options_.retention = absl::Hours(48);
  source_.committed[{"t", 0}] = 7;
  source_.committed[{"t", 1}] = -1;  // Nothing committed: nothing to prune.
  ASSERT_TRUE(Consumer().Step().ok());
  EXPECT_TRUE(db_.prunes.empty());  // Not due yet.
  clock_.now += absl::Minutes(5);
  ASSERT_TRUE(Consumer().Step().ok());
  ASSERT_EQ(db_.prunes.size(), 1u);
  EXPECT_THAT(db_.prunes[0], testing::HasSubstr("kafka_partition = 0"));
  EXPECT_THAT(db_.prunes[0], testing::HasSubstr("kafka_offset < 7"));
  EXPECT_THAT(db_.prunes[0], testing::HasSubstr("make_interval(secs => 172800)"));
}

}  // namespace
}  // namespace consumer
