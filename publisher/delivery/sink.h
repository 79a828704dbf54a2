// Sink: where records go. The relay talks to this small interface only, so tests
// swap in a fake that acknowledges, delays, reorders or fails deliveries at will;
// KafkaSink (kafka_sink.h) is the librdkafka implementation.
#ifndef PUBLISHER_DELIVERY_SINK_H_
#define PUBLISHER_DELIVERY_SINK_H_

#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/message_token.h"
#include "publisher/delivery/outbox_record.h"

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
  RecordKind kind = RecordKind::kEvent;
  OutboxRecord record;  // Filled only when status is not ok.
  // How many messages of the token's transaction this report covers, token.bytes
  // being their total: a transactional sink acknowledges a whole PostgreSQL
  // transaction's messages at once when the Kafka transaction commits.
  size_t messages = 1;
};

class Sink {
 public:
  virtual ~Sink() = default;

  // Queues `record` without blocking; its Delivery comes through Poll. Fails with
  // kResourceExhausted when the local queue is full (poll, then try again), or with
  // a permanent status as above.
  [[nodiscard]] virtual absl::Status Produce(const OutboxRecord& record,
                                             const MessageToken& token,
                                             RecordKind kind) = 0;

  // Serves pending delivery reports, waiting up to `timeout` for the first.
  virtual void Poll(absl::Duration timeout,
                    const std::function<void(Delivery)>& on_delivery) = 0;

  // Records handed over and not yet reported.
  virtual size_t outstanding() const = 0;

  // Exactly-once. The latest checkpoint committed to Kafka, read when
  // the sink was created: the relay skips the PostgreSQL transactions it covers
  // (publisher/delivery/checkpoint.h). nullopt (at-least-once) skips nothing.
  virtual std::optional<Checkpoint> committed_checkpoint() const { return std::nullopt; }

  // A PostgreSQL transaction that was not skipped committed; everything produced
  // since the last call belongs to it. A transactional sink commits Kafka
  // transactions only at these boundaries, with this checkpoint.
  virtual void TransactionCommitted(const Checkpoint& checkpoint) { (void)checkpoint; }

  // Whether acknowledgements come only for whole PostgreSQL transactions (when the
  // Kafka transaction carrying them commits). Then a PostgreSQL transaction larger
  // than the in-flight limits must still be read to its end, or it would never be
  // acknowledged: reading pauses only between transactions, and the producer's
  // own bounded queue (kResourceExhausted) holds memory inside one.
  virtual bool acknowledges_whole_transactions() const { return false; }

  // When Poll next has work of its own (a Kafka transaction to commit): the relay
  // wakes by then. InfiniteFuture when nothing is due.
  virtual absl::Time next_deadline() const { return absl::InfiniteFuture(); }

  // The relay's run ends: no more records come for it. A transactional sink
  // commits what holds whole PostgreSQL transactions now, and aborts what does
  // not (those rows stay unconfirmed and are read again). Deliveries still come
  // through Poll.
  virtual void EndRun() {}

  // Set when the producer as a whole failed: kAborted means recreate it and
  // rewind to the slot; anything else means stop (a newer instance fenced this
  // one). Records produced before are never reported.
  virtual absl::Status failure() const { return absl::OkStatus(); }
};

// Creates the producer. `first` is true at start-up only, before PostgreSQL is
// touched: it checks the brokers, and may return null to have the producer made
// (Create(false)) once a session holds the slot. Every rewind makes a new one
// once the next session holds the slot; kUnavailable from Create(false) is
// retried with backoff.
class SinkFactory {
 public:
  virtual ~SinkFactory() = default;
  [[nodiscard]] virtual absl::StatusOr<std::unique_ptr<Sink>> Create(bool first) = 0;
  // While standing by (another instance streams the slot): whether the brokers
  // answer, without a producer that could fence the active instance. kUnavailable
  // when none answers. May keep a client between calls until ReleaseProbe.
  [[nodiscard]] virtual absl::Status ProbeBrokers() { return absl::OkStatus(); }
  virtual void ReleaseProbe() {}
};

}  // namespace publisher

#endif  // PUBLISHER_DELIVERY_SINK_H_
