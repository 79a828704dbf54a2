// HeldRecords: what the exactly-once sink (transactional_sink.h) takes while a
// Kafka transaction commits. librdkafka accepts no record during a commit, so the
// records read meanwhile, and the PostgreSQL commits between them, wait here in
// reading order, to be produced into the next Kafka transaction once it can begin.
// Pure.
//
// Nothing held has been produced: dropping it loses nothing, since its rows are
// unacknowledged, so unconfirmed, and are read again from the slot.
#ifndef PUBLISHER_DELIVERY_HELD_RECORDS_H_
#define PUBLISHER_DELIVERY_HELD_RECORDS_H_

#include <cstddef>
#include <deque>
#include <variant>

#include "absl/time/time.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/message_token.h"
#include "publisher/delivery/outbox_record.h"

namespace publisher {

class HeldRecords {
 public:
  // A record as the relay offered it (the sink keeps a copy).
  struct Record {
    OutboxRecord record;
    MessageToken token;
    RecordKind kind = RecordKind::kEvent;
  };
  // A PostgreSQL transaction ended here, at `seen`.
  struct Boundary {
    Checkpoint checkpoint;
    absl::Time seen;
  };
  using Entry = std::variant<Record, Boundary>;

  void Hold(const OutboxRecord& record, const MessageToken& token, RecordKind kind) {
    entries_.push_back(Record{record, token, kind});
    ++messages_;
    bytes_ += token.bytes;
  }
  void HoldBoundary(const Checkpoint& checkpoint, absl::Time seen) {
    entries_.push_back(Boundary{checkpoint, seen});
  }

  bool empty() const { return entries_.empty(); }
  // The oldest entry; the queue must not be empty.
  Entry& front() { return entries_.front(); }
  void Pop() {
    if (const Record* r = std::get_if<Record>(&entries_.front())) {
      --messages_;
      bytes_ -= r->token.bytes;
    }
    entries_.pop_front();
  }
  void Clear() {
    entries_.clear();
    messages_ = bytes_ = 0;
  }

  // Records held, and what they count against the in-flight byte limit.
  size_t messages() const { return messages_; }
  size_t bytes() const { return bytes_; }

 private:
  std::deque<Entry> entries_;
  size_t messages_ = 0;
  size_t bytes_ = 0;
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_HELD_RECORDS_H_
