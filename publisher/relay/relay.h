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
//
// Each Run is one RelayRun (relay_run.h), which holds everything of that session;
// the Relay keeps only what outlives sessions: its options, its counters, its
// dead-letter policy, its AckTracker and who it reports to.
#ifndef PUBLISHER_RELAY_RELAY_H_
#define PUBLISHER_RELAY_RELAY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cdc/wal_stream.h"
#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/mapping/message_events.h"
#include "publisher/relay/ack_tracker.h"
#include "publisher/relay/dead_letter_policy.h"
#include "publisher/relay/external_fault.h"
#include "publisher/relay/relay_monitor.h"
#include "publisher/relay/relay_options.h"
#include "publisher/relay/relay_stats.h"

namespace publisher {

class Relay {
 public:
  using Clock = std::function<absl::Time()>;

  // `log` must outlive the relay.
  Relay(
      RelayOptions options, common::Logger& log,
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

 private:
  RelayOptions options_;
  common::Logger& log_;
  Clock clock_;
  DeadLetterPolicy dead_letters_;
  std::optional<MessageEvents> messages_;  // Bound at the first run, with a prefix.
  RelayStats stats_;                       // Added up across runs.
  AckTracker tracker_;                     // Across runs: see RelayContext.
  RelayMonitor* monitor_ = nullptr;
  const ExternalFault* fault_ = nullptr;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_H_
