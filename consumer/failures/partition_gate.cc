// PartitionGate: one held record and its backoff per partition.
#include "consumer/failures/partition_gate.h"

#include <utility>

namespace consumer {

void PartitionGate::Hold(InboundRecord r, absl::Time now, bool counted) {
  TopicPartition tp = r.source;
  auto it = held_.find(tp);
  if (it == held_.end() || it->second.held.record.offset != r.offset) {
    // A new record, or another one after a rebalance: its own backoff.
    held_.erase(tp);
    it = held_
             .emplace(
                 tp, Entry{HeldRecord{}, common::Backoff(initial_backoff_, max_backoff_)})
             .first;
  }
  Entry& e = it->second;
  e.held.record = std::move(r);
  if (counted) ++e.held.attempts;
  e.held.due = now + e.backoff.Next();
}

const HeldRecord* PartitionGate::Due(absl::Time now) const {
  const HeldRecord* first = nullptr;
  for (const auto& [tp, e] : held_) {
    if (e.held.due <= now && (first == nullptr || e.held.due < first->due)) {
      first = &e.held;
    }
  }
  return first;
}

absl::Time PartitionGate::next_due() const {
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [tp, e] : held_) next = std::min(next, e.held.due);
  return next;
}

int PartitionGate::attempts(const TopicPartition& tp, int64_t offset) const {
  auto it = held_.find(tp);
  if (it == held_.end() || it->second.held.record.offset != offset) return 0;
  return it->second.held.attempts;
}

void PartitionGate::Forget(const std::vector<TopicPartition>& revoked) {
  for (const TopicPartition& tp : revoked) held_.erase(tp);
}

}  // namespace consumer
