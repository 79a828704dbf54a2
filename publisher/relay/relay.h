// Relay: the publisher's one loop. It reads the replication stream, keeps the
// INSERTs into the outbox tables, maps and produces them, serves delivery reports,
// and tells PostgreSQL how far it may forget the WAL, on one thread (docs/design.md,
// "How it works").
//
//   stream --XLogData--> decode --Insert--> Mapper --record--> Sink
//      ^                    |Begin/Commit                       | delivery reports
//      +--- standby status <-- AckTracker <---------------------+
//
// Backpressure: at --max-in-flight or --max-in-flight-bytes unacknowledged, the
// relay stops reading the WAL but keeps serving deliveries and sending status
// updates, so wal_sender_timeout never fires.
//
// Permanent failures follow --on-error: halt (confirm nothing past the failed row,
// return an error) or dead-letter (publish the envelope, or the raw row if it
// cannot be mapped, to --dead-letter-topic with the error in headers; its
// acknowledgement stands in for the original's).
#ifndef PUBLISHER_RELAY_RELAY_H_
#define PUBLISHER_RELAY_RELAY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
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
#include "publisher/relay/silence_watch.h"

namespace publisher {

class Relay {
 public:
  using Clock = std::function<absl::Time()>;

  // `log` must outlive the relay.
  Relay(
      RelayOptions options, outbox::Logger& log,
      Clock clock = [] { return absl::Now(); });

  // One replication session: `stream` has just started streaming from the slot,
  // so every transaction not yet confirmed arrives again; what was in flight from
  // an earlier session is forgotten (its late reports are ignored). Runs until
  // `stop` is set, then stops reading, waits (up to drain_timeout) for every
  // acknowledgement, confirms, stops the stream and returns OK, or
  // kDeadlineExceeded if some messages stayed unacknowledged. Otherwise returns
  // the first error, having confirmed only what is safe:
  //   kUnavailable          the stream broke (reconnect and run again)
  //   kAborted              the producer session must end: it failed fatally, or
  //                         a delivery failed transiently or was reported without
  //                         proof of storage (recreate it, run again: a rewind)
  //   anything else         a halting permanent failure or a broken outbox table
  [[nodiscard]] absl::Status Run(cdc::WalStream& stream, Sink& sink,
                                 const std::atomic<bool>& stop);

  // The session's database (the name envelopes carry in source.database) and its
  // cluster's system identifier (what exactly-once checkpoints carry).
  void set_source(std::string database, std::string system_id) {
    options_.database = std::move(database);
    options_.system_id = std::move(system_id);
  }
  // The session's timeline and its history (exactly-once checkpoints).
  void set_timeline(uint32_t timeline, std::vector<cdc::TimelineSwitch> history) {
    options_.timeline = timeline;
    options_.history = std::move(history);
  }

  // Where the relay publishes its figures (every metrics_interval, and when a run
  // starts and ends); not owned, may be null. Set before Run.
  void set_monitor(RelayMonitor* monitor) { monitor_ = monitor; }

  // Checked on every turn of the loop: once it holds an error, the run ends with
  // it (the slot watcher found the slot lost or the outbox dropped). Not owned,
  // may be null. Set before Run.
  void set_external_fault(const ExternalFault* fault) { fault_ = fault; }

  const RelayStats& stats() const { return stats_; }
  const AckTracker& tracker() const { return tracker_; }

 private:
  struct Transaction {
    cdc::Lsn commit_lsn;
    uint32_t xid = 0;
    absl::Time commit_time;
    bool skipped = false;  // Already in Kafka (covered by the sink's checkpoint).
  };

  absl::Status HandleServerMessage(const cdc::ServerMessage& message);
  absl::Status HandleXLogData(const cdc::XLogData& frame);
  absl::Status OnRelation(const cdc::pgoutput::Relation& relation);
  absl::Status OnInsert(const cdc::XLogData& frame, const cdc::pgoutput::Insert& insert);
  absl::Status OnMessage(const cdc::pgoutput::Message& message);
  // Counts an outbox event (row or message) of the current transaction; true when
  // the sink's checkpoint covers the transaction, so the event is skipped.
  bool CountEvent();
  // An event of the current transaction, mapped into record_ (or not: `mapped`):
  // enqueued and produced, or handled as a permanent failure with `raw` as its
  // dead letter.
  absl::Status Publish(const absl::Status& mapped,
                       const std::function<OutboxRecord()>& raw);
  void Produce(const OutboxRecord& record, const MessageToken& token, bool dead_letter);
  void HandlePermanent(const MessageToken& token, const OutboxRecord& record,
                       const absl::Status& why, ErrorKind kind);
  void CountError(ErrorKind kind);
  void PublishMetrics(bool streaming);
  // A dead letter was refused too: halt, confirming nothing past the row.
  void DeadLetterRejected(const std::string& id, const absl::Status& why);
  void OnDelivery(Delivery delivery, absl::Time now);
  void PollSink(absl::Duration timeout);
  bool InFlightFull() const;
  // When an advanced confirmable LSN may be sent: at once when an acknowledgement
  // left nothing in flight, else once min_status_gap has passed since the last
  // update (so a stream of transactions without outbox rows is confirmed at that
  // pace, not once per commit); never when it has not advanced.
  absl::Time ConfirmationDue() const;
  absl::Status MaybeSendStatus(bool force);
  void MaybeLogStats(bool force);
  // Serves delivery reports until the sink has none outstanding or the deadline.
  void Drain(absl::Time deadline);
  // What Finish does with deliveries still outstanding: wait for them (up to
  // drain_timeout) so the confirmation goes as far as is safe, or leave them.
  enum class Outstanding { kDrain, kLeave };
  absl::Status Finish(absl::Status why, Outstanding outstanding);
  // The server said nothing for --replication-timeout: logs why, returns the
  // kUnavailable that makes the supervisor reconnect.
  absl::Status SilentServer();

  RelayOptions options_;
  cdc::WalStream* stream_ = nullptr;         // During Run only.
  Sink* sink_ = nullptr;                     // During Run only.
  const std::atomic<bool>* stop_ = nullptr;  // During Run only.
  outbox::Logger& log_;
  Clock clock_;

  cdc::pgoutput::StreamDecoder decoder_;
  cdc::RelationCache relations_;
  absl::flat_hash_map<uint32_t, BoundRelation> outbox_;  // Bound outbox relations by OID.
  std::optional<MessageEvents> messages_;                // With a message_prefix.
  AckTracker tracker_;
  CheckpointFilter checkpoints_;  // From the sink, at the start of each run.
  Transaction transaction_;
  absl::Status fatal_;  // Set by delivery handling; ends Run.
  DeadLetterPolicy dead_letters_;
  RelayStats stats_;
  // The record each row is mapped into (MapInto), reused so that mapping a row
  // allocates nothing once warm; the sink copies what it keeps.
  OutboxRecord record_;
  bool paused_ = false;
  SilenceWatch silence_;
  // When the loop must next wake from waiting on the stream: a status update, the
  // stats line or the sink's work falls due, or deliveries may wait.
  absl::Time NextWake(absl::Time now, const Sink& sink) const;

  absl::Time last_status_ = absl::InfinitePast();
  bool acknowledged_since_status_ = false;
  absl::Time next_status_ = absl::InfinitePast();
  absl::Time next_stats_ = absl::InfinitePast();
  absl::Time next_metrics_ = absl::InfinitePast();
  RelayMonitor* monitor_ = nullptr;
  const ExternalFault* fault_ = nullptr;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_H_
