// Checkpoint: the exactly-once mode's record of how far the WAL has been published
// (--delivery=exactly-once). Pure.
//
// Each Kafka transaction carries whole PostgreSQL transactions and, in the same
// Kafka transaction, one checkpoint record (outbox.v1.Checkpoint, keyed by the
// transactional id) naming the end LSN of the last PostgreSQL transaction in it. A
// consumer reading with isolation.level=read_committed sees the rows and the
// checkpoint together or neither. After a crash, a rewind or a PostgreSQL restart
// that set the slot back, the publisher reads the latest committed checkpoint and
// skips every PostgreSQL transaction it covers: no row reaches Kafka twice.
//
// The skip rule needs only the Begin message: transactions arrive in commit order,
// and for consecutive transactions T, U: T.final_lsn < T.end_lsn <= U.final_lsn.
// So T is covered by a checkpoint C (T.end_lsn <= C.end_lsn) exactly when
// T.final_lsn < C.end_lsn.
#ifndef PUBLISHER_DELIVERY_CHECKPOINT_H_
#define PUBLISHER_DELIVERY_CHECKPOINT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cdc/lsn.h"
#include "cdc/timeline.h"

namespace publisher {

struct Checkpoint {
  cdc::Lsn end_lsn;  // End LSN of the last PostgreSQL transaction published.
  uint32_t xid = 0;
  absl::Time commit_time;
  // The PostgreSQL cluster's system identifier (IDENTIFY_SYSTEM) whose WAL end_lsn
  // is in; empty in a checkpoint written before it was recorded.
  std::string system_id = {};
  // The timeline end_lsn is on; 0 in a checkpoint written before it was recorded.
  uint32_t timeline = 0;
  bool operator==(const Checkpoint&) const = default;
};

// The record value (a serialized outbox.v1.Checkpoint).
std::string EncodeCheckpoint(const Checkpoint& checkpoint,
                             absl::string_view transactional_id, absl::Time written_at);
// kDataLoss when `value` is not a checkpoint, or one of another transactional id.
[[nodiscard]] absl::StatusOr<Checkpoint> DecodeCheckpoint(
    absl::string_view value, absl::string_view transactional_id);

// One record read back from the checkpoint topic.
struct CheckpointRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;  // Empty for a tombstone.
};

// kFailedPrecondition when `latest` was written for another PostgreSQL cluster than
// the one with system identifier `system_id`: its end LSN is a position in another
// WAL, and resuming after it would skip this cluster's transactions below it (a
// --transactional-id reused for another database, or a database re-created while
// Kafka kept its checkpoint). OK when there is no checkpoint, or it names none.
[[nodiscard]] absl::Status CheckSameCluster(const std::optional<Checkpoint>& latest,
                                            absl::string_view system_id);

// `latest` as a position in the WAL of a session on `timeline`, whose history is
// `history` (cdc/timeline.h). A checkpoint written on an earlier timeline covers
// only what lies below that timeline's switch point: past it, this server's WAL
// holds other transactions (those a promoted standby committed), which must not be
// skipped. So its end_lsn is lowered to the switch point; to zero when its
// timeline is not in the history at all (nothing is skipped: duplicates, never
// loss). Unchanged when both timelines agree or the checkpoint names none.
[[nodiscard]] std::optional<Checkpoint> OnTimeline(
    const std::optional<Checkpoint>& latest, uint32_t timeline,
    const std::vector<cdc::TimelineSwitch>& history);

// The latest checkpoint of `transactional_id` among `records` (all of the topic up
// to its end, as read with isolation.level=read_committed): the last record with
// that key (one key lives in one partition, so offsets order it). nullopt when the
// key never wrote one or its last record is a tombstone (deleted: start over);
// kDataLoss when that record is not a checkpoint.
[[nodiscard]] absl::StatusOr<std::optional<Checkpoint>> LatestCheckpoint(
    const std::vector<CheckpointRecord>& records, absl::string_view transactional_id);

// Which PostgreSQL transactions the latest checkpoint already covers.
class CheckpointFilter {
 public:
  explicit CheckpointFilter(std::optional<Checkpoint> latest = std::nullopt)
      : latest_(latest) {}

  // Whether the transaction whose Begin carried `final_lsn` (its commit record's
  // LSN) is already in Kafka: skip its rows, but still confirm it.
  bool Covers(cdc::Lsn final_lsn) const {
    return latest_.has_value() && final_lsn < latest_->end_lsn;
  }

  // A Kafka transaction committed with `checkpoint`: it is the latest now. Never
  // moves back.
  void Committed(const Checkpoint& checkpoint) {
    if (!latest_ || checkpoint.end_lsn > latest_->end_lsn) latest_ = checkpoint;
  }

  const std::optional<Checkpoint>& latest() const { return latest_; }

 private:
  std::optional<Checkpoint> latest_;
};

// When to commit the open Kafka transaction. Only ever between PostgreSQL
// transactions (a PostgreSQL transaction is never split, however large): once
// --transaction-interval has passed since the Kafka transaction began, or once
// no PostgreSQL transaction has ended for a fifth of it (the WAL went quiet: the
// end of a burst, or sparse traffic, waits that long instead of the whole
// interval), or when the in-flight limits are reached. The quiet rule commits at
// most about twice as often as the interval alone would: a Poisson stream of
// rate r ends a quiet gap q at r·e^(-r·q) per second, at most 1/(e·q).
class TransactionBatchPolicy {
 public:
  explicit TransactionBatchPolicy(absl::Duration interval)
      : interval_(interval), quiet_(interval / 5) {}

  // The first record of a new Kafka transaction was produced at `now`.
  void Began(absl::Time now) { began_ = now; }
  // A PostgreSQL transaction ended at `now`.
  void Boundary(absl::Time now) { boundary_ = now; }
  // The Kafka transaction committed or aborted.
  void Ended() {
    began_.reset();
    boundary_.reset();
  }
  bool open() const { return began_.has_value(); }

  // At a PostgreSQL commit (or while idle between transactions): commit now?
  bool ShouldCommit(absl::Time now, bool in_flight_full) const {
    return began_.has_value() && (in_flight_full || now >= deadline());
  }
  // When ShouldCommit will first say yes on time alone (InfiniteFuture when closed).
  absl::Time deadline() const {
    if (!began_) return absl::InfiniteFuture();
    absl::Time due = *began_ + interval_;
    return boundary_ ? std::min(due, *boundary_ + quiet_) : due;
  }

 private:
  absl::Duration interval_;
  absl::Duration quiet_;
  std::optional<absl::Time> began_;
  std::optional<absl::Time> boundary_;  // The latest PostgreSQL commit in it.
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_CHECKPOINT_H_
