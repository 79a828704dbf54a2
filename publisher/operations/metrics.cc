// Metrics: the shared state and its Prometheus rendering.
#include "publisher/operations/metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/prometheus_text.h"

namespace publisher {
namespace {

constexpr char kPrefix[] = "outbox_publisher_";

// Appends one metric family with a single unlabelled sample.
void Family(std::string* out, absl::string_view name, absl::string_view type,
            absl::string_view help, double value) {
  outbox::AppendMetricFamily(out, kPrefix, name, type, help, value);
}

}  // namespace

void Metrics::PublishRelay(const RelaySnapshot& snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  relay_ = snapshot;
  if (snapshot.streaming) {
    not_streaming_reason_.clear();
    standby_ = {};
  }
}

void Metrics::CountReconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  ++reconnects_;
}

void Metrics::CountKafkaTransaction(bool committed) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(committed ? kafka_committed_ : kafka_aborted_);
}

void Metrics::SetNotStreamingReason(std::string reason) {
  std::lock_guard<std::mutex> lock(mu_);
  not_streaming_reason_ = std::move(reason);
  standby_ = {};
}

void Metrics::SetStandingBy(std::string problem, absl::Time at) {
  std::lock_guard<std::mutex> lock(mu_);
  not_streaming_reason_ = "standing by: another publisher holds the slot";
  standby_ = {true, std::move(problem), at};
}

void Metrics::SetMaxRetainedWal(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  max_retained_wal_ = bytes;
}

void Metrics::SetSlotRetainedBytes(std::optional<int64_t> bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  slot_retained_bytes_ = bytes;
}

RelaySnapshot Metrics::relay() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relay_;
}

HealthVerdict Metrics::Health(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return HealthLocked(now);
}

void Metrics::ReportKafkaError(std::string error, absl::Time at) {
  std::lock_guard<std::mutex> lock(mu_);
  kafka_error_ = std::move(error);
  kafka_error_at_ = at;
}

HealthVerdict Metrics::Readiness(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadinessLocked(now);
}

HealthInputs Metrics::HealthInputsLocked() const {
  return {relay_.streaming,          not_streaming_reason_, relay_.in_flight_messages,
          relay_.oldest_unacked,     relay_.stats.last_ack, relay_.last_heard,
          relay_.replication_timeout, kafka_error_,         kafka_error_at_};
}

HealthVerdict Metrics::HealthLocked(absl::Time now) const {
  return JudgeHealth(HealthInputsLocked(), now);
}

HealthVerdict Metrics::ReadinessLocked(absl::Time now) const {
  return JudgeReadiness(HealthInputsLocked(), standby_, now);
}

std::string Metrics::RenderPrometheus(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const RelaySnapshot& snap = relay_;
  const RelayStats& r = relay_.stats;
  std::string out;
  std::string labels;
  for (const auto& [k, v] : info_) {
    absl::StrAppend(&labels, labels.empty() ? "" : ",", k, "=\"",
                    outbox::EscapeLabelValue(v), "\"");
  }
  absl::StrAppend(&out, "# HELP ", kPrefix,
                  "build_info versions of the publisher and "
                  "its libraries\n# TYPE ",
                  kPrefix, "build_info gauge\n", kPrefix, "build_info{", labels, "} 1\n");
  Family(&out, "streaming", "gauge", "1 while a replication session streams",
         snap.streaming);
  Family(&out, "up", "gauge", "1 while /healthz would answer 200", HealthLocked(now).ok);
  Family(&out, "active", "gauge",
         "1 while this instance holds the slot and streams (the active one of a pair)",
         snap.streaming);
  Family(&out, "standing_by", "gauge",
         "1 while another instance streams the slot and this one stands by",
         standby_.standing_by && !snap.streaming);
  Family(&out, "ready", "gauge", "1 while /readyz would answer 200",
         ReadinessLocked(now).ok);
  Family(&out, "rows_seen_total", "counter",
         "outbox INSERTs received from the WAL (again after a rewind)", r.rows_seen);
  Family(&out, "rows_skipped_total", "counter",
         "outbox INSERTs skipped as already in Kafka (exactly-once checkpoint)",
         r.rows_skipped);
  Family(&out, "published_total", "counter", "records handed to the Kafka producer",
         r.published);
  Family(&out, "acknowledged_total", "counter", "records the broker acknowledged",
         r.acknowledged);
  Family(&out, "dead_lettered_total", "counter",
         "records sent to the dead-letter topic and acknowledged", r.dead_lettered);
  Family(&out, "transactions_total", "counter", "PostgreSQL commits received",
         r.transactions);
  Family(&out, "rewinds_total", "counter",
         "producer sessions ended to rewind to the slot (unproven deliveries)",
         r.rewinds);
  Family(&out, "reconnects_total", "counter",
         "replication sessions restarted after a lost connection", reconnects_);
  absl::StrAppend(
      &out, "# HELP ", kPrefix,
      "kafka_transactions_total Kafka transactions of --delivery=exactly-once "
      "by outcome\n# TYPE ",
      kPrefix, "kafka_transactions_total counter\n", kPrefix,
      "kafka_transactions_total{outcome=\"committed\"} ", kafka_committed_, "\n", kPrefix,
      "kafka_transactions_total{outcome=\"aborted\"} ", kafka_aborted_, "\n");
  absl::StrAppend(&out, "# HELP ", kPrefix, "errors_total permanent failures by kind\n",
                  "# TYPE ", kPrefix, "errors_total counter\n");
  for (int k = 0; k < kErrorKinds; ++k) {
    absl::StrAppend(&out, kPrefix, "errors_total{kind=\"",
                    ErrorKindName(static_cast<ErrorKind>(k)), "\"} ", r.errors_by_kind[k],
                    "\n");
  }
  Family(&out, "in_flight_messages", "gauge", "records produced and not yet acknowledged",
         snap.in_flight_messages);
  Family(&out, "in_flight_bytes", "gauge", "bytes produced and not yet acknowledged",
         snap.in_flight_bytes);
  Family(&out, "confirmed_lsn", "gauge", "last LSN confirmed to PostgreSQL (flush)",
         r.confirmed.value());
  Family(&out, "server_wal_end_lsn", "gauge", "highest WAL end the server reported",
         r.server_wal_end.value());
  uint64_t lag =
      r.server_wal_end > r.confirmed ? r.server_wal_end.value() - r.confirmed.value() : 0;
  Family(&out, "lag_bytes", "gauge", "server WAL end minus the confirmed LSN", lag);
  Family(&out, "oldest_unacked_age_seconds", "gauge",
         "age of the oldest record waiting for its acknowledgement (0 when none)",
         snap.oldest_unacked
             ? std::max(0.0, absl::ToDoubleSeconds(now - *snap.oldest_unacked))
             : 0.0);
  Family(
      &out, "replication_silence_seconds", "gauge",
      "seconds since the PostgreSQL server last sent anything on the replication "
      "connection (0 when not streaming); the connection is dropped at "
      "--replication-timeout",
      snap.streaming ? std::max(0.0, absl::ToDoubleSeconds(now - snap.last_heard)) : 0.0);
  if (slot_retained_bytes_) {
    Family(&out, "slot_retained_wal_bytes", "gauge",
           "WAL the replication slot keeps on the server's disk", *slot_retained_bytes_);
  }
  if (max_retained_wal_) {
    Family(&out, "max_retained_wal_bytes", "gauge",
           "--max-retained-wal: the slot retaining more is warned about",
           *max_retained_wal_);
  }
  const LatencyHistogram& h = r.commit_to_ack;
  absl::StrAppend(&out, "# HELP ", kPrefix,
                  "commit_to_ack_seconds from the PostgreSQL commit to the broker's "
                  "acknowledgement\n# TYPE ",
                  kPrefix, "commit_to_ack_seconds histogram\n");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    absl::StrAppend(&out, kPrefix, "commit_to_ack_seconds_bucket{le=\"",
                    absl::StrFormat("%g", h.bounds()[i]), "\"} ", cumulative, "\n");
  }
  absl::StrAppend(&out, kPrefix, "commit_to_ack_seconds_bucket{le=\"+Inf\"} ", h.count(),
                  "\n", kPrefix, "commit_to_ack_seconds_sum ",
                  absl::StrFormat("%.17g", h.sum_seconds()), "\n", kPrefix,
                  "commit_to_ack_seconds_count ", h.count(), "\n");
  return out;
}

}  // namespace publisher
