// The relay's figures: the counters it keeps on its own thread (RelayStats, see
// Relay::stats()) and the snapshot it hands its RelayMonitor (RelaySnapshot).
#ifndef PUBLISHER_RELAY_RELAY_STATS_H_
#define PUBLISHER_RELAY_RELAY_STATS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "cdc/lsn.h"

namespace publisher {

// A cumulative histogram over fixed upper bounds, in seconds.
class LatencyHistogram {
 public:
  // Commit-to-acknowledgement bounds: 1 ms to 60 s.
  LatencyHistogram();

  void Observe(absl::Duration d);

  const std::vector<double>& bounds() const { return bounds_; }
  // counts()[i]: observations <= bounds()[i] and > bounds()[i-1]; the last entry
  // counts those above every bound.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum_seconds() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Permanent failures, by where they happened.
enum class ErrorKind { kMapping, kProduce, kDelivery, kDeadLetter };
inline constexpr int kErrorKinds = 4;
const char* ErrorKindName(ErrorKind kind);

// The relay's counters, kept on its thread (Relay::stats()).
struct RelayStats {
  uint64_t rows_seen = 0;      // Outbox INSERTs received.
  uint64_t rows_skipped = 0;   // Of those, already in Kafka (exactly-once checkpoint).
  uint64_t published = 0;      // Records handed to the sink (excluding dead letters).
  uint64_t acknowledged = 0;   // Of those, acknowledged by the broker.
  uint64_t dead_lettered = 0;  // Dead letters acknowledged.
  uint64_t errors = 0;         // Permanent failures (mapping or delivery).
  std::array<uint64_t, kErrorKinds> errors_by_kind{};  // The same, by kind.
  uint64_t transactions = 0;                           // Commits received.
  uint64_t rewinds = 0;  // Producer sessions ended to rewind to the slot (Relay::Run).
  cdc::Lsn confirmed;                  // Last flush LSN sent to the server.
  uint64_t sessions = 0;               // Replication sessions run (Relay::Run calls).
  cdc::Lsn session_confirmed;          // Last flush LSN sent in the current session.
  cdc::Lsn server_wal_end;             // Highest WAL end the server reported.
  std::optional<absl::Time> last_ack;  // Of the last acknowledgement.
  LatencyHistogram commit_to_ack;      // Commit time to acknowledgement.
};

// What the relay knows, copied as a whole to its RelayMonitor.
struct RelaySnapshot {
  bool streaming = false;
  RelayStats stats;
  uint64_t in_flight_messages = 0;
  uint64_t in_flight_bytes = 0;
  std::optional<absl::Time> oldest_unacked;
  // Commit time of the oldest transaction read whose records wait for their
  // acknowledgement (AckTracker::oldest_pending_commit).
  std::optional<absl::Time> oldest_pending_commit;
  absl::Time last_heard = absl::InfinitePast();  // Last message from the server.
  absl::Duration replication_timeout;            // --replication-timeout.
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_RELAY_STATS_H_
