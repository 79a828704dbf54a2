// Fakes for the consumer kit's unit tests: an in-memory consumer group
// (FakeSource), database (FakeDatabase) and dead-letter topic (FakeDeadLetters),
// each with faults to inject, and a clock the test moves.
#ifndef TESTS_CONSUMER_FAKES_H_
#define TESTS_CONSUMER_FAKES_H_

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "consumer/database.h"
#include "consumer/failures/dead_letters.h"
#include "consumer/record_source.h"

namespace consumer {

struct FakeClock {
  absl::Time now = absl::FromUnixSeconds(1000000);
  absl::Time operator()() const { return now; }
};

// A record written by outbox-publisher, carrying an envelope with `id`.
InboundRecord EnvelopeRecord(const std::string& topic, int32_t partition, int64_t offset,
                             const std::string& id);

// Partitions as logs; Poll serves them in turn from each one's position. A paused
// partition still serves `prefetched_after_pause` more records, as librdkafka may
// hand out records it fetched before the pause.
class FakeSource : public RecordSource {
 public:
  explicit FakeSource(FakeClock& clock) : clock_(clock) {}

  void Append(const InboundRecord& r) { logs_[KeyOf(r.source)].push_back(r); }

  absl::StatusOr<std::optional<InboundRecord>> Poll(absl::Duration timeout) override;
  absl::Status Pause(const TopicPartition& tp) override;
  absl::Status ResumeFrom(const TopicPartition& tp, int64_t offset) override;
  absl::Status Done(const TopicPartition& tp, int64_t offset) override;
  absl::StatusOr<std::vector<std::pair<TopicPartition, int64_t>>> Committed() override;

  // Revokes `tp` as a rebalance does: the listener hears first.
  void Revoke(const TopicPartition& tp);

  int prefetched_after_pause = 1;
  // Done() calls, in order, with how many commits the database had made then.
  struct DoneCall {
    TopicPartition tp;
    int64_t offset;
    int commits_before;
  };
  std::vector<DoneCall> done;
  std::vector<std::pair<TopicPartition, int64_t>> resumed;
  int pauses = 0;
  std::map<std::pair<std::string, int32_t>, int64_t> committed;  // For Committed().
  const int* db_commits = nullptr;  // FakeDatabase::commits, if set.

 private:
  using Key = std::pair<std::string, int32_t>;
  static Key KeyOf(const TopicPartition& tp) { return {tp.topic, tp.partition}; }
  FakeClock& clock_;
  std::map<Key, std::vector<InboundRecord>> logs_;
  std::map<Key, size_t> position_;
  std::map<Key, int> paused_;  // Partition -> prefetched records left.
  std::set<Key> revoked_;
  size_t turn_ = 0;
};

// Transactions over an in-memory processed-messages table and effect log. It
// understands the statements of ProcessedTable and handlers that write
// "EFFECT <text>" statements.
class FakeDatabase : public Database {
 public:
  absl::Status Begin() override;
  absl::Status Commit() override;
  void Rollback() override;
  absl::StatusOr<Rows> Query(const std::string& sql) override;
  std::string Literal(absl::string_view text) override;
  std::string Identifier(absl::string_view identifier) override;
  bool lost_connection() const override { return lost_; }

  std::set<std::string> ids;         // Committed claims.
  std::vector<std::string> effects;  // Committed effects, in commit order.
  std::vector<std::string> prunes;   // DELETE statements seen.
  int commits = 0;

  // Faults: the next `down` statements fail as a lost connection; the next
  // `lose_commits` commits are lost with the connection (nothing committed); the
  // next `ambiguous_commits` commit and then report a lost connection.
  int down = 0;
  int lose_commits = 0;
  int ambiguous_commits = 0;

 private:
  absl::Status Lost();
  bool in_transaction_ = false;
  bool lost_ = false;
  std::set<std::string> pending_ids_;
  std::vector<std::string> pending_effects_;
};

class FakeDeadLetters : public DeadLetterSink {
 public:
  absl::Status Send(const DeadLetter& d) override;

  struct Sent {
    InboundRecord record;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  std::vector<Sent> sent;
  int failures = 0;  // The next sends that fail.
};

}  // namespace consumer

#endif  // TESTS_CONSUMER_FAKES_H_
