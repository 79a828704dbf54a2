// PartitionGate: the records held back for a retry, at most one per partition.
// Pure.
//
// Per-partition order means a record may be handled only after every earlier
// record of its partition is done (applied or dead-lettered). So while a record
// waits for its retry, its partition is paused, and records of it that were
// already fetched are not handled: they are dropped, and read again once the held
// record is done (the partition resumes from the offset after it). Other
// partitions go on.
#ifndef CONSUMER_FAILURES_PARTITION_GATE_H_
#define CONSUMER_FAILURES_PARTITION_GATE_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "consumer/inbound_record.h"

namespace consumer {

struct HeldRecord {
  InboundRecord record;
  int attempts = 0;  // Failed handler calls so far.
  absl::Time due;    // When to try again.
};

class PartitionGate {
 public:
  // Each held record waits a backoff from `initial_backoff`, doubling up to
  // `max_backoff` (publisher::Backoff).
  PartitionGate(absl::Duration initial_backoff, absl::Duration max_backoff)
      : initial_backoff_(initial_backoff), max_backoff_(max_backoff) {}

  // Whether the record's partition holds an earlier record (drop `r` then).
  bool Holds(const TopicPartition& tp) const { return held_.contains(tp); }

  // Holds `r` after another failure: due after its next backoff. `counted`: the
  // failure counts as an attempt (not when the database, not the record, failed).
  void Hold(InboundRecord r, absl::Time now, bool counted);

  // The held record due soonest, if it is due at `now` (it stays held until
  // Release); nullptr otherwise.
  const HeldRecord* Due(absl::Time now) const;
  // When the next held record is due (InfiniteFuture when none is held).
  absl::Time next_due() const;
  // Failed attempts of the record at `offset` of `tp` (0 when not held).
  int attempts(const TopicPartition& tp, int64_t offset) const;

  void Release(const TopicPartition& tp) { held_.erase(tp); }
  // The partitions were revoked: whoever gets them reads these records again.
  void Forget(const std::vector<TopicPartition>& revoked);
  size_t size() const { return held_.size(); }

 private:
  struct Entry {
    HeldRecord held;
    common::Backoff backoff;
  };
  absl::Duration initial_backoff_, max_backoff_;
  absl::flat_hash_map<TopicPartition, Entry> held_;
};

}  // namespace consumer

#endif  // CONSUMER_FAILURES_PARTITION_GATE_H_
