// RelayOptions: what the relay is told (--table, the column flags, --topic, the
// in-flight limits, --on-error, the intervals, --message-prefix, ...).
#ifndef PUBLISHER_RELAY_RELAY_OPTIONS_H_
#define PUBLISHER_RELAY_RELAY_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cdc/timeline.h"
#include "publisher/mapping/columns.h"
#include "publisher/mapping/value_format.h"

namespace publisher {

// --on-error: stop at a row that cannot be published, or send it to the
// dead-letter topic and go on.
enum class OnError { kHalt, kDeadLetter };

// The relay's settings. The program builds them from its Config (RelayOptionsFrom
// in publisher/program/options.h), which holds the flags' defaults.
struct RelayOptions {
  std::vector<TableName> tables;
  ColumnMapping columns;
  std::string topic;
  ValueFormat value_format = ValueFormat::kEnvelope;  // What record values hold.
  int64_t max_in_flight = 0;
  int64_t max_in_flight_bytes = 0;
  OnError on_error = OnError::kHalt;
  std::string dead_letter_topic;
  absl::Duration status_interval;
  absl::Duration stats_interval;
  // After the confirmable LSN advances while messages are still in flight, the
  // earliest next status update: a long backlog or a busy stream is confirmed
  // every 200 ms, not once per acknowledgement. With nothing left in flight the
  // update goes at once, so the end of a burst or backlog is confirmed promptly
  // (docs/tuning.md).
  absl::Duration min_status_gap = absl::Milliseconds(200);
  // While messages are in flight, the longest a delivery report waits to be served
  // when the WAL is quiet (the loop waits on the replication socket, not on
  // librdkafka): the end of a burst is confirmed this promptly.
  absl::Duration delivery_poll_gap = absl::Milliseconds(5);
  // How long a stop (or halt) waits for outstanding acknowledgements.
  absl::Duration drain_timeout = absl::Seconds(30);
  // How often the figures are copied to Metrics.
  absl::Duration metrics_interval = absl::Milliseconds(250);
  std::string database;   // For envelopes' source.database.
  std::string system_id;  // Of the PostgreSQL cluster, for exactly-once checkpoints.
  // The session's timeline and its history (cdc/timeline.h): checkpoints carry the
  // one, and one from an earlier timeline is read through the other.
  uint32_t timeline = 0;
  std::vector<cdc::TimelineSwitch> history;
  // Transactional logical decoding messages with this prefix are outbox events
  // too (--message-prefix; "" = none).
  std::string message_prefix;
  // A run ends with kUnavailable after this long without a message from the
  // server (--replication-timeout; silence_watch.h). Zero: never.
  absl::Duration replication_timeout;
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_OPTIONS_H_
