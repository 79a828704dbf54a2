// Metrics: the numbers an operator watches, in Prometheus text exposition format
// (version 0.0.4), and the health verdict, for the metrics server's thread.
//
// The relay keeps its counters (RelayStats) on its own thread without locks and
// publishes a copy here every few hundred milliseconds (RelaySnapshot); the supervisor
// counts reconnects and says what it is doing when not streaming; the slot watcher sets
// the retained WAL. Metrics takes a lock for each of these and for each scrape,
// never per row.
//
// Names start with outbox_publisher_; counters end in _total (docs/design.md,
// "Compatibility").
#ifndef PUBLISHER_OPERATIONS_METRICS_H_
#define PUBLISHER_OPERATIONS_METRICS_H_

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cdc/lsn.h"
#include "publisher/operations/health.h"

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
  uint64_t rewinds = 0;                // Producer sessions ended by an unproven delivery.
  cdc::Lsn confirmed;                  // Last flush LSN sent to the server.
  uint64_t sessions = 0;               // Replication sessions run (Relay::Run calls).
  cdc::Lsn session_confirmed;          // Last flush LSN sent in the current session.
  cdc::Lsn server_wal_end;             // Highest WAL end the server reported.
  std::optional<absl::Time> last_ack;  // Of the last acknowledgement.
  LatencyHistogram commit_to_ack;      // Commit time to acknowledgement.
};

// What the relay knows, copied as a whole to Metrics.
struct RelaySnapshot {
  bool streaming = false;
  RelayStats stats;
  uint64_t in_flight_messages = 0;
  uint64_t in_flight_bytes = 0;
  std::optional<absl::Time> oldest_unacked;
  absl::Time last_heard = absl::InfinitePast();  // Last message from the server.
  absl::Duration replication_timeout;            // --replication-timeout.
};

class Metrics {
 public:
  // `info` labels the outbox_publisher_build_info gauge (e.g. version fields).
  explicit Metrics(std::vector<std::pair<std::string, std::string>> info = {})
      : info_(std::move(info)) {}

  void PublishRelay(const RelaySnapshot& snapshot);
  void CountReconnect();
  // A Kafka transaction of --delivery=exactly-once committed, or was aborted.
  void CountKafkaTransaction(bool committed);
  // Why the publisher is not streaming ("" once it streams again).
  void SetNotStreamingReason(std::string reason);
  void SetSlotRetainedBytes(std::optional<int64_t> bytes);
  // --max-retained-wal, so an alert can compare the slot's WAL with it.
  void SetMaxRetainedWal(int64_t bytes);
  // The latest error librdkafka reported (a broker down, a request timed out):
  // /healthz names it while acknowledgements stall. Any thread.
  void ReportKafkaError(std::string error, absl::Time at);

  std::string RenderPrometheus(absl::Time now) const;
  HealthVerdict Health(absl::Time now) const;
  RelaySnapshot relay() const;

 private:
  HealthVerdict HealthLocked(absl::Time now) const;  // With mu_ held.

  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> info_;
  RelaySnapshot relay_;
  uint64_t reconnects_ = 0;
  uint64_t kafka_committed_ = 0, kafka_aborted_ = 0;
  std::string not_streaming_reason_ = "starting";
  std::optional<int64_t> slot_retained_bytes_;
  std::optional<int64_t> max_retained_wal_;
  std::string kafka_error_;
  absl::Time kafka_error_at_ = absl::InfinitePast();
};

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_METRICS_H_
