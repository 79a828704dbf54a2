// Metrics: the numbers an operator watches, in Prometheus text exposition format
// (version 0.0.4), and the health verdict, for the metrics server's thread.
//
// The relay keeps its counters (RelayStats, publisher/relay/relay_stats.h) on its
// own thread without locks and publishes a copy here every few hundred milliseconds
// (RelaySnapshot); the supervisor counts reconnects and says what it is doing when
// not streaming; the slot watcher sets the retained WAL. Metrics takes a lock for
// each of these and for each scrape, never per row.
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
#include "common/kafka_error_cause.h"
#include "common/prometheus_text.h"
#include "publisher/delivery/transactional_sink.h"
#include "publisher/operations/health.h"
#include "publisher/relay/relay_monitor.h"
#include "publisher/relay/relay_stats.h"

namespace publisher {

// What every part reports, kept for the metrics server's thread. The relay and the
// supervisor see it as a RelayMonitor, the transactional sink as a
// KafkaTransactionCounter.
class Metrics : public RelayMonitor, public KafkaTransactionCounter {
 public:
  // `info` labels the outbox_publisher_build_info gauge (e.g. version fields);
  // `labels` every sample (the slot, and the shard when sharded), so that one
  // publisher among several is told apart whatever the scrape's job is called.
  using Labels = std::vector<std::pair<std::string, std::string>>;
  explicit Metrics(Labels info = {}, Labels labels = {})
      : info_(std::move(info)), labels_(common::RenderLabels(labels)) {}

  void PublishRelay(const RelaySnapshot& snapshot) override;
  void CountReconnect() override;
  void SetNotStreamingReason(std::string reason) override;
  void SetStandingBy(std::string problem, absl::Time at) override;
  void CountKafkaTransaction(bool committed) override;
  void SetSlotRetainedBytes(std::optional<int64_t> bytes);
  // --max-retained-wal, so an alert can compare the slot's WAL with it.
  void SetMaxRetainedWal(int64_t bytes);
  // The latest error librdkafka reported (a broker down, a request timed out):
  // /healthz names it while acknowledgements stall. A `summary` ("all brokers are
  // down", which librdkafka repeats every second) does not replace a cause reported
  // since the last acknowledgement (the connection refused, the timeout), which
  // says more. Any thread.
  void ReportKafkaError(std::string error, absl::Time at, bool summary = false);

  std::string RenderPrometheus(absl::Time now) const;
  HealthVerdict Health(absl::Time now) const;     // /healthz: active and streaming.
  HealthVerdict Readiness(absl::Time now) const;  // /readyz: active, or a ready standby.
  RelaySnapshot relay() const;

 private:
  // With mu_ held.
  HealthInputs HealthInputsLocked() const;
  HealthVerdict HealthLocked(absl::Time now) const;
  HealthVerdict ReadinessLocked(absl::Time now) const;

  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> info_;
  std::string labels_;  // Rendered.
  RelaySnapshot relay_;
  uint64_t reconnects_ = 0;
  uint64_t kafka_committed_ = 0, kafka_aborted_ = 0;
  std::string not_streaming_reason_ = "starting";
  StandbyInputs standby_;
  std::optional<int64_t> slot_retained_bytes_;
  std::optional<int64_t> max_retained_wal_;
  common::KafkaErrorCause kafka_error_;
};

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_METRICS_H_
