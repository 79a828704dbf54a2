// Metrics: the shared state and its Prometheus rendering.
#include "publisher/operations/metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/prometheus_text.h"

namespace publisher {
namespace {

constexpr char kPrefix[] = "outbox_publisher_";

// Appends families and samples carrying the publisher's labels.
class Exposition {
 public:
  Exposition(std::string* out, const std::string& labels) : out_(out), labels_(labels) {}

  // HELP and TYPE of a family whose samples follow.
  void Header(absl::string_view name, absl::string_view type, absl::string_view help) {
    common::AppendMetricHeader(out_, kPrefix, name, type, help);
  }
  // One sample of `name`, with the publisher's labels and `more`.
  void Sample(absl::string_view name, absl::string_view more, double value) {
    absl::StrAppend(out_, common::Series(absl::StrCat(kPrefix, name), labels_, more), " ",
                    absl::StrFormat("%.17g", value), "\n");
  }
  // A family of one sample.
  void Family(absl::string_view name, absl::string_view type, absl::string_view help,
              double value) {
    common::AppendMetricFamily(out_, kPrefix, name, type, help, value, labels_);
  }
  void Histogram(absl::string_view name, absl::string_view help,
                 const LatencyHistogram& h) {
    Header(name, "histogram", help);
    std::string bucket = absl::StrCat(name, "_bucket");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      Sample(bucket, absl::StrCat("le=\"", absl::StrFormat("%g", h.bounds()[i]), "\""),
             cumulative);
    }
    Sample(bucket, "le=\"+Inf\"", h.count());
    Sample(absl::StrCat(name, "_sum"), "", h.sum_seconds());
    Sample(absl::StrCat(name, "_count"), "", h.count());
  }

 private:
  std::string* out_;
  const std::string& labels_;
};

// What the relay has done, as counters.
void RenderCounters(Exposition& e, const RelayStats& r, uint64_t reconnects,
                    uint64_t kafka_committed, uint64_t kafka_aborted) {
  e.Family("rows_seen_total", "counter",
           "outbox INSERTs received from the WAL (again after a rewind)", r.rows_seen);
  e.Family("rows_skipped_total", "counter",
           "outbox INSERTs skipped as already in Kafka (exactly-once checkpoint)",
           r.rows_skipped);
  e.Family("published_total", "counter", "records handed to the Kafka producer",
           r.published);
  e.Family("acknowledged_total", "counter", "records the broker acknowledged",
           r.acknowledged);
  e.Family("dead_lettered_total", "counter",
           "records sent to the dead-letter topic and acknowledged", r.dead_lettered);
  e.Family("transactions_total", "counter", "PostgreSQL commits received",
           r.transactions);
  e.Family("rewinds_total", "counter",
           "producer sessions ended to rewind to the slot (unproven deliveries)",
           r.rewinds);
  e.Family("reconnects_total", "counter",
           "replication sessions restarted after a lost connection", reconnects);
  e.Header("kafka_transactions_total", "counter",
           "Kafka transactions of --delivery=exactly-once by outcome");
  e.Sample("kafka_transactions_total", "outcome=\"committed\"", kafka_committed);
  e.Sample("kafka_transactions_total", "outcome=\"aborted\"", kafka_aborted);
  e.Header("errors_total", "counter", "permanent failures by kind");
  for (int k = 0; k < kErrorKinds; ++k) {
    e.Sample("errors_total",
             absl::StrCat("kind=\"", ErrorKindName(static_cast<ErrorKind>(k)), "\""),
             r.errors_by_kind[k]);
  }
}

// Where the relay stands: what waits for the broker, the LSNs and the lag.
void RenderProgress(Exposition& e, const RelaySnapshot& snap, absl::Time now) {
  const RelayStats& r = snap.stats;
  // Seconds since `since`; 0 when there is no such time.
  auto age = [&](std::optional<absl::Time> since) {
    return since ? std::max(0.0, absl::ToDoubleSeconds(now - *since)) : 0.0;
  };
  e.Family("in_flight_messages", "gauge", "records produced and not yet acknowledged",
           snap.in_flight_messages);
  e.Family("in_flight_bytes", "gauge", "bytes produced and not yet acknowledged",
           snap.in_flight_bytes);
  e.Family("confirmed_lsn", "gauge", "last LSN confirmed to PostgreSQL (flush)",
           r.confirmed.value());
  e.Family("server_wal_end_lsn", "gauge", "highest WAL end the server reported",
           r.server_wal_end.value());
  uint64_t lag =
      r.server_wal_end > r.confirmed ? r.server_wal_end.value() - r.confirmed.value() : 0;
  e.Family("lag_bytes", "gauge", "server WAL end minus the confirmed LSN", lag);
  e.Family("lag_seconds", "gauge",
           "now minus the commit time of the oldest PostgreSQL transaction read whose "
           "records wait for the broker's acknowledgement; 0 when none waits, so it "
           "does not grow while nothing is pending",
           age(snap.oldest_pending_commit));
  e.Family("oldest_unacked_age_seconds", "gauge",
           "age of the oldest record waiting for its acknowledgement (0 when none)",
           age(snap.oldest_unacked));
  e.Family("replication_silence_seconds", "gauge",
           "seconds since the PostgreSQL server last sent anything on the replication "
           "connection (0 when not streaming); the connection is dropped at "
           "--replication-timeout",
           snap.streaming ? age(snap.last_heard) : 0.0);
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

void Metrics::ReportKafkaError(std::string error, absl::Time at, bool summary) {
  std::lock_guard<std::mutex> lock(mu_);
  kafka_error_.Report(std::move(error), at, summary,
                      relay_.stats.last_ack.value_or(absl::InfinitePast()));
}

HealthVerdict Metrics::Readiness(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadinessLocked(now);
}

HealthInputs Metrics::HealthInputsLocked() const {
  return {relay_.streaming,           not_streaming_reason_, relay_.in_flight_messages,
          relay_.oldest_unacked,      relay_.stats.last_ack, relay_.last_heard,
          relay_.replication_timeout, kafka_error_.error(),  kafka_error_.at()};
}

HealthVerdict Metrics::HealthLocked(absl::Time now) const {
  return JudgeHealth(HealthInputsLocked(), now);
}

HealthVerdict Metrics::ReadinessLocked(absl::Time now) const {
  return JudgeReadiness(HealthInputsLocked(), standby_, now);
}

std::string Metrics::RenderPrometheus(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Exposition e(&out, labels_);
  e.Header("build_info", "gauge", "versions of the publisher and its libraries");
  e.Sample("build_info", common::RenderLabels(info_), 1);
  e.Family("streaming", "gauge", "1 while a replication session streams",
           relay_.streaming);
  e.Family("up", "gauge", "1 while /healthz would answer 200", HealthLocked(now).ok);
  e.Family("active", "gauge",
           "1 while this instance holds the slot and streams (the active one of a pair)",
           relay_.streaming);
  e.Family("standing_by", "gauge",
           "1 while another instance streams the slot and this one stands by",
           standby_.standing_by && !relay_.streaming);
  e.Family("ready", "gauge", "1 while /readyz would answer 200", ReadinessLocked(now).ok);
  RenderCounters(e, relay_.stats, reconnects_, kafka_committed_, kafka_aborted_);
  RenderProgress(e, relay_, now);
  if (slot_retained_bytes_) {
    e.Family("slot_retained_wal_bytes", "gauge",
             "WAL the replication slot keeps on the server's disk",
             *slot_retained_bytes_);
  }
  if (max_retained_wal_) {
    e.Family("max_retained_wal_bytes", "gauge",
             "--max-retained-wal: the slot retaining more is warned about",
             *max_retained_wal_);
  }
  e.Histogram("commit_to_ack_seconds",
              "from the PostgreSQL commit to the broker's acknowledgement",
              relay_.stats.commit_to_ack);
  return out;
}

}  // namespace publisher
