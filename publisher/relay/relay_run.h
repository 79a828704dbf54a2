// RelayRun: one run of the relay over one replication session (Relay::Run). It
// holds everything that lives only as long as that session: the stream, the sink
// and the stop flag; the decoder and the bound outbox tables; what is in flight
// and the checkpoint filter; the timers. Relay::Run creates one and drops it when
// the run ends, so a new session starts from nothing but what the relay keeps
// (RelayContext): its options, counters, dead-letter policy and AckTracker.
//
// Errors are returned, never stored: each step returns the status that ends the
// run, and Execute hands it to Finish. Nothing calls back into itself: a delivery
// that failed for good while the sink was being polled waits in `refused_` until
// the loop dead-letters it, outside the poll.
#ifndef PUBLISHER_RELAY_RELAY_RUN_H_
#define PUBLISHER_RELAY_RELAY_RUN_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/pgoutput.h"
#include "cdc/relation_cache.h"
#include "cdc/wal_stream.h"
#include "common/log.h"
#include "publisher/delivery/checkpoint.h"
#include "publisher/delivery/sink.h"
#include "publisher/mapping/mapper.h"
#include "publisher/mapping/message_events.h"
#include "publisher/relay/ack_tracker.h"
#include "publisher/relay/dead_letter_policy.h"
#include "publisher/relay/external_fault.h"
#include "publisher/relay/relay_monitor.h"
#include "publisher/relay/relay_options.h"
#include "publisher/relay/relay_stats.h"
#include "publisher/relay/silence_watch.h"

namespace publisher {

// What a run borrows from its relay: fixed for the relay's life, but the counters,
// which add up across runs, and the tracker.
struct RelayContext {
  const RelayOptions& options;
  common::Logger& log;
  const std::function<absl::Time()>& clock;
  const DeadLetterPolicy& dead_letters;
  const MessageEvents* messages;  // Null without a message_prefix.
  RelayStats& stats;
  // Outlives sessions: the LSN it confirms never goes down, and it numbers
  // transactions on from one session to the next, so a late report from an earlier
  // session matches nothing. Each run starts with Reset().
  AckTracker& tracker;
  RelayMonitor* monitor;       // May be null.
  const ExternalFault* fault;  // May be null.
};

class RelayRun {
 public:
  RelayRun(const RelayContext& relay, cdc::WalStream& stream, Sink& sink,
           const std::atomic<bool>& stop);

  // Runs the session to its end: Relay::Run's contract.
  [[nodiscard]] absl::Status Execute();

 private:
  // The transaction being read.
  struct Transaction {
    cdc::Lsn commit_lsn;
    uint32_t xid = 0;
    absl::Time commit_time;
    bool skipped = false;  // Already in Kafka (covered by the sink's checkpoint).
  };
  // The sink's answer to one record.
  struct Offered {
    absl::Status refused;  // OK: taken. Otherwise the sink refused it for good: why.
  };
  // What Finish does with deliveries still outstanding: wait for them (up to
  // drain_timeout) so the confirmation goes as far as is safe, or leave them.
  enum class Outstanding { kDrain, kLeave };

  // Before anything is read: the sink's checkpoint, on this timeline, from this
  // cluster, becomes the filter of transactions already in Kafka.
  absl::Status LoadCheckpoint();
  // Pauses reading at the in-flight limits, resumes below them; logs each change.
  void UpdatePause();

  // Reading.
  absl::Status HandleServerMessage(const cdc::ServerMessage& message);
  absl::Status HandleXLogData(const cdc::XLogData& frame);
  absl::Status OnRelation(const cdc::pgoutput::Relation& relation);
  absl::Status OnInsert(const cdc::XLogData& frame, const cdc::pgoutput::Insert& insert);
  absl::Status OnMessage(const cdc::pgoutput::Message& message);
  // Counts an outbox event (row or message) of the current transaction; true when
  // the sink's checkpoint covers the transaction, so the event is skipped.
  bool SkipEvent();
  RowSource Source(cdc::Lsn lsn) const;

  // Publishing.
  absl::StatusOr<MessageToken> Enqueue(size_t bytes);
  // A mapped event: enqueued and offered; dead-lettered if the sink refuses it.
  absl::Status PublishEvent(const OutboxRecord& record);
  // An event that could not be mapped (`why`): its raw content, as JSON, is what
  // its dead letter holds.
  absl::Status PublishUnmappable(const absl::Status& why, std::string content_json);
  // Hands `record` to the sink, serving deliveries while its local queue is full.
  // Returns the sink's answer, or the error that ends the run.
  absl::StatusOr<Offered> Offer(const OutboxRecord& record, const MessageToken& token,
                                RecordKind kind);
  // `record` failed for good at `kind`'s stage: under --on-error=dead-letter its
  // dead letter is offered in its place; under halt, the error ends the run.
  absl::Status DeadLetter(const MessageToken& token, const OutboxRecord& record,
                          const absl::Status& why, ErrorKind kind);
  // A dead letter was refused too: the error that halts, confirming nothing past
  // the row.
  absl::Status DeadLetterRejected(const std::string& id, const absl::Status& why);
  void CountError(ErrorKind kind);

  // Deliveries.
  // Polls the sink (up to `timeout`) and dead-letters what it refused.
  absl::Status ServeDeliveries(absl::Duration timeout);
  // Polls the sink: acknowledges what was stored, queues in refused_ what failed
  // for good, and returns the first failure that ends the run.
  absl::Status PollSink(absl::Duration timeout);
  void Acknowledge(const Delivery& delivery, absl::Time now);
  absl::Status Failed(Delivery delivery);
  absl::Status DeadLetterRefused();
  bool InFlightFull() const;

  // Confirming, and telling.
  // When the loop must next wake from waiting on the stream: a status update, the
  // stats line or the sink's work falls due, or deliveries may wait.
  absl::Time NextWake(absl::Time now) const;
  // When an advanced confirmable LSN may be sent: at once when an acknowledgement
  // left nothing in flight, else once min_status_gap has passed since the last
  // update (so a stream of transactions without outbox rows is confirmed at that
  // pace, not once per commit); never when it has not advanced.
  absl::Time ConfirmationDue() const;
  absl::Status MaybeSendStatus(bool force);
  void MaybeLogStats(bool force);
  void PublishMetrics(bool streaming);

  // Ending.
  // The server said nothing for --replication-timeout: logs why, returns the
  // kUnavailable that makes the supervisor reconnect.
  absl::Status SilentServer();
  // Serves deliveries until the sink has none outstanding or the deadline; returns
  // the first failure (the rest are still acknowledged).
  absl::Status Drain(absl::Time deadline);
  absl::Status Finish(absl::Status why, Outstanding outstanding);

  // Borrowed from the relay.
  const RelayOptions& options_;
  common::Logger& log_;
  const std::function<absl::Time()>& clock_;
  const DeadLetterPolicy& dead_letters_;
  const MessageEvents* messages_;
  RelayStats& stats_;
  AckTracker& tracker_;
  RelayMonitor* monitor_;
  const ExternalFault* fault_;
  cdc::WalStream& stream_;
  Sink& sink_;
  const std::atomic<bool>& stop_;

  cdc::pgoutput::StreamDecoder decoder_;
  cdc::RelationCache relations_;
  absl::flat_hash_map<uint32_t, BoundRelation> outbox_;  // Bound outbox relations by OID.
  CheckpointFilter checkpoints_;
  Transaction transaction_;
  // The record each row is mapped into (MapInto), reused so that mapping a row
  // allocates nothing once warm; the sink copies what it keeps.
  OutboxRecord record_;
  std::deque<Delivery> refused_;  // Failed for good, waiting to be dead-lettered.
  bool paused_ = false;
  SilenceWatch silence_;
  absl::Time last_status_ = absl::InfinitePast();
  bool acknowledged_since_status_ = false;
  absl::Time next_status_ = absl::InfinitePast();
  absl::Time next_stats_ = absl::InfinitePast();
  absl::Time next_metrics_ = absl::InfinitePast();
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_RUN_H_
