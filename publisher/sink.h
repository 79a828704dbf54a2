// Sink: where records go. The relay talks to this small interface only, so tests
// swap in a fake that acknowledges, delays, reorders or fails deliveries at will;
// KafkaSink (kafka_sink.h) is the librdkafka implementation.
#ifndef PUBLISHER_SINK_H_
#define PUBLISHER_SINK_H_

#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "publisher/ack_tracker.h"
#include "publisher/checkpoint.h"
#include "publisher/mapper.h"

namespace publisher {

// The fate of one produced record.
//   ok                  acknowledged by the broker (acks=all)
//   kInvalidArgument,   permanent for this record (too large, invalid, topic
//   kPermissionDenied,  missing or not authorized): retrying will not help
//   kNotFound
//   kAborted            the producer itself failed (idempotence state lost)
//   kUnavailable        transient, or reported stored without proof (no offset):
//                       maybe stored. Never produce it again in the same session
//                       (it would land behind newer messages); rewind instead
struct Delivery {
  MessageToken token;
  absl::Status status;
  bool dead_letter = false;  // It was a dead-letter copy.
  OutboxRecord record;       // Filled only when status is not ok.
};

class Sink {
 public:
  virtual ~Sink() = default;

  // Queues `record` without blocking; its Delivery comes through Poll. Fails with
  // kResourceExhausted when the local queue is full (poll, then try again), or with
  // a permanent status as above.
  [[nodiscard]] virtual absl::Status Produce(const OutboxRecord& record,
                                             const MessageToken& token,
                                             bool dead_letter) = 0;

  // Serves pending delivery reports, waiting up to `timeout` for the first.
  virtual void Poll(absl::Duration timeout,
                    const std::function<void(Delivery)>& on_delivery) = 0;

  // Records handed over and not yet reported.
  virtual size_t outstanding() const = 0;

  // Exactly-once (issue 10). The latest checkpoint committed to Kafka, read when
  // the sink was created: the relay skips the PostgreSQL transactions it covers
  // (publisher/checkpoint.h). nullopt (at-least-once) skips nothing.
  virtual std::optional<Checkpoint> committed_checkpoint() const { return std::nullopt; }

  // A PostgreSQL transaction that was not skipped committed; everything produced
  // since the last call belongs to it. A transactional sink commits Kafka
  // transactions only at these boundaries, with this checkpoint.
  virtual void TransactionCommitted(const Checkpoint& checkpoint) { (void)checkpoint; }
};

}  // namespace publisher

#endif  // PUBLISHER_SINK_H_
