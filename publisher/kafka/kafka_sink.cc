// KafkaSink: librdkafka producer configuration, produce, and the callbacks that
// librdkafka calls from rd_kafka_poll() on the relay's thread.
#include "publisher/kafka/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace publisher {
namespace {

struct InFlight {
  MessageToken token;
  RecordKind kind;
};

}  // namespace

std::vector<std::pair<std::string, std::string>> DefaultProducerProperties(
    const KafkaOptions& c) {
  const int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  // The local queue must hold everything the in-flight limits allow twice over (a
  // rewind re-produces while the previous session's messages may still be queued),
  // with room for dead letters, so backpressure comes from our limits, not QUEUE_FULL.
  int64_t messages = std::min(kMaxInt, 2 * c.max_in_flight + 10000);
  int64_t kbytes = std::min(kMaxInt, 2 * (c.max_in_flight_bytes / 1024) + 65536);
  return {
      {"bootstrap.servers", c.brokers},
      {"client.id", "outbox-publisher"},
      // Idempotence: retries never duplicate or reorder within a producer session.
      {"enable.idempotence", "true"},
      {"acks", "all"},
      // One Produce request in flight per broker connection. With more, a failed
      // request followed by a successful one for the same partition can leave a gap
      // in the log wherever the broker does not check sequence numbers (a broker
      // holding no state for this producer; mock-kafka always): the failed batch is
      // then stored after newer messages of its keys, or implicitly acknowledged
      // without being stored (docs/implicit-ack.md). Costs nothing measurable on a
      // local network; -X max.in.flight.requests.per.connection=5 for high latency.
      {"max.in.flight.requests.per.connection", "1"},
      // 0 = never expire a queued message: an outage delays, it does not lose.
      {"message.timeout.ms", "0"},
      // How long a batch waits for more messages: the lowest latency without
      // too many small requests (docs/tuning.md).
      {"linger.ms", "2"},
      // Java clients' partitioner, so the same key lands on the same partition
      // whichever client produced it.
      {"partitioner", "murmur2_random"},
      {"queue.buffering.max.messages", std::to_string(messages)},
      {"queue.buffering.max.kbytes", std::to_string(kbytes)},
      {"message.max.bytes", "1000000"},
      // A request unanswered this long fails, and the connection with it is
      // dropped and made again: a broker path that went silent without
      // closing (a NAT or firewall that dropped its state) then costs 30 s, not
      // librdkafka's 60 s. As Java clients' request.timeout.ms; the transactional
      // producer would otherwise take transaction.timeout.ms - 100 ms.
      {"socket.timeout.ms", "30000"},
  };
}

absl::Duration RequestTimeout(const KafkaOptions& options) {
  int64_t ms = 30000;
  auto read = [&](const std::vector<std::pair<std::string, std::string>>& properties) {
    for (const auto& [key, value] : properties) {
      int64_t v;
      if (key == "socket.timeout.ms" && absl::SimpleAtoi(value, &v) && v > 0) ms = v;
    }
  };
  read(DefaultProducerProperties(options));
  read(options.properties);  // -X wins, as in common::NewKafkaConf.
  return absl::Milliseconds(ms);
}

absl::StatusOr<std::unique_ptr<KafkaSink>> KafkaSink::Create(const KafkaOptions& options,
                                                             common::Logger& logger) {
  std::unique_ptr<KafkaSink> sink(new KafkaSink(logger));
  auto properties = DefaultProducerProperties(options);
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf(std::move(properties), options.properties);
  if (!conf.ok()) return conf.status();
  absl::StatusOr<common::KafkaClient> rk = common::NewKafkaClient(
      RD_KAFKA_PRODUCER, *std::move(conf),
      {.opaque = sink.get(),
       .log = &KafkaSink::OnLog,
       .error = &KafkaSink::OnError,
       .delivery = &KafkaSink::OnDeliveryReport,
       .logs_on_poll = true},  // Logs are served by our Poll.
      "the Kafka producer");
  if (!rk.ok()) return rk.status();
  sink->rk_ = *std::move(rk);
  return sink;
}

KafkaSink::~KafkaSink() {
  if (rk_ == nullptr) return;
  // Whatever is still queued is unconfirmed and will be re-read from the slot.
  rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  std::function<void(Delivery)> ignore = [](Delivery) {};
  on_delivery_ = &ignore;
  rd_kafka_poll(rk_.get(), 0);
  on_delivery_ = nullptr;
}

absl::Status KafkaSink::CheckReachable(absl::Duration timeout) {
  // Start-up only needs an answer, not every topic of a large cluster.
  return ReadMetadata(timeout, /*all_topics=*/false).status();
}

absl::StatusOr<KafkaSink::ClusterMetadata> KafkaSink::ReadMetadata(absl::Duration timeout,
                                                                   bool all_topics) {
  const struct rd_kafka_metadata* raw = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk_.get(), all_topics ? 1 : 0, nullptr, &raw,
                        static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  common::KafkaMetadata md(raw);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_poll(rk_.get(), 0);  // Serves the queued error callbacks (OnError).
    return absl::UnavailableError(absl::StrCat(
        "no Kafka broker answered within ", absl::FormatDuration(timeout), ": ",
        rd_kafka_err2str(err),
        last_error_.error().empty()
            ? ""
            : absl::StrCat(" (the client's latest error: ", last_error_.error(), ")")));
  }
  ClusterMetadata out;
  out.brokers = md->broker_cnt;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR)
      out.topics.emplace_back(md->topics[i].topic);
  }
  return out;
}

absl::Status ProduceRecord(rd_kafka_t* rk, TopicHandles& topics, const OutboxRecord& r,
                           void* opaque) {
  rd_kafka_topic_t* rkt = topics.Get(rk, r.topic);
  if (rkt == nullptr) {
    return common::KafkaErrorStatus(rd_kafka_last_error(),
                                    absl::StrCat("producing to ", r.topic));
  }
  common::KafkaHeaders headers(rd_kafka_headers_new(r.headers.size()));
  for (const auto& [name, value] : r.headers) {
    rd_kafka_header_add(headers.get(), name.data(), static_cast<ssize_t>(name.size()),
                        value.data(), static_cast<ssize_t>(value.size()));
  }
  rd_kafka_resp_err_t err = rd_kafka_producev(
      rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(r.key.data(), r.key.size()),
      RD_KAFKA_V_VALUE(r.value_null ? nullptr : const_cast<char*>(r.value.data()),
                       r.value_null ? 0 : r.value.size()),
      RD_KAFKA_V_HEADERS(headers.get()), RD_KAFKA_V_TIMESTAMP(r.timestamp_ms),
      RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    headers.release();  // The queued message owns them now.
    return absl::OkStatus();
  }
  if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
    return absl::ResourceExhaustedError("librdkafka's local queue is full");
  }
  return common::KafkaErrorStatus(err, absl::StrCat("producing to ", r.topic));
}

absl::Status KafkaSink::Produce(const OutboxRecord& r, const MessageToken& token,
                                RecordKind kind) {
  auto* in_flight = new InFlight{token, kind};
  absl::Status s = ProduceRecord(rk_.get(), topics_, r, in_flight);
  if (!s.ok()) delete in_flight;
  return s;
}

void KafkaSink::Poll(absl::Duration timeout,
                     const std::function<void(Delivery)>& on_delivery) {
  on_delivery_ = &on_delivery;
  rd_kafka_poll(rk_.get(), static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  on_delivery_ = nullptr;
}

size_t KafkaSink::outstanding() const {
  return static_cast<size_t>(rd_kafka_outq_len(rk_.get()));
}

void KafkaSink::OnDeliveryReport(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  std::unique_ptr<InFlight> in_flight(static_cast<InFlight*>(m->_private));
  Delivery d;
  d.token = in_flight->token;
  d.kind = in_flight->kind;
  d.status = common::DeliveryReportStatus(m->err, m->offset, rd_kafka_message_status(m),
                                          rd_kafka_topic_name(m->rkt), m->partition);
  if (!d.status.ok()) {
    // Keep what a dead letter needs: the original record.
    d.record.topic = rd_kafka_topic_name(m->rkt);
    if (m->key) d.record.key.assign(static_cast<const char*>(m->key), m->key_len);
    if (m->payload) d.record.value.assign(static_cast<const char*>(m->payload), m->len);
    rd_kafka_timestamp_type_t type;
    d.record.timestamp_ms = rd_kafka_message_timestamp(m, &type);
    d.record.headers = common::MessageHeaders(m);
    for (const auto& [name, value] : d.record.headers) {
      if (name == "id") d.record.id = value;
    }
  }
  if (self->on_delivery_ != nullptr) (*self->on_delivery_)(std::move(d));
}

void KafkaSink::OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  auto* self = static_cast<KafkaSink*>(rd_kafka_opaque(rk));
  if (std::optional<std::string> cause =
          ReportLibrdkafkaLog(level, fac, buf, self->logger_, self->metrics_)) {
    self->last_error_.Report(*std::move(cause), absl::Now(), /*summary=*/false);
  }
}

std::optional<std::string> ReportLibrdkafkaLog(int level, const char* facility,
                                               const char* line, common::Logger& log,
                                               Metrics* metrics) {
  common::LogLibrdkafka(log, level, facility, line);
  if (!common::IsRequestTimeoutLog(level, facility)) return std::nullopt;
  std::string cause = absl::StrCat("_TIMED_OUT: ", line);
  if (metrics != nullptr) metrics->ReportKafkaError(cause, absl::Now());
  return cause;
}

void ReportLibrdkafkaError(rd_kafka_t* rk, int err, const char* reason,
                           common::Logger& log, Metrics* metrics) {
  auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    char fatal[512];
    rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
    log.Error("Kafka producer failed fatally",
              {{"error", std::string(rd_kafka_err2name(orig))},
               {"reason", std::string(fatal)}});
    return;
  }
  // Transport errors (broker down, all brokers down, requests timed out, ...) are
  // retried by librdkafka forever; they are logged, and /healthz names the latest
  // while acknowledgements stall, so an operator sees the stall and its cause.
  log.Warn("Kafka client error", {{"error", std::string(rd_kafka_err2name(code))},
                                  {"reason", std::string(reason)}});
  if (metrics != nullptr) {
    metrics->ReportKafkaError(absl::StrCat(rd_kafka_err2name(code), ": ", reason),
                              absl::Now(), common::IsSummaryKafkaError(code));
  }
}

void KafkaSink::OnError(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto* self = static_cast<KafkaSink*>(opaque);
  self->last_error_.Report(
      absl::StrCat(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), ": ", reason),
      absl::Now(), common::IsSummaryKafkaError(err));
  ReportLibrdkafkaError(rk, err, reason, self->logger_, self->metrics_);
}

namespace {
constexpr absl::Duration kProbeTimeout = absl::Seconds(5);
}  // namespace

absl::StatusOr<std::unique_ptr<Sink>> KafkaSinkFactory::Create(bool first) {
  absl::StatusOr<std::unique_ptr<KafkaSink>> sink = KafkaSink::Create(options_, log_);
  if (!sink.ok()) return sink.status();
  (*sink)->set_metrics(metrics_);
  if (first) {
    absl::Status s = (*sink)->CheckReachable(absl::Seconds(15));
    if (!s.ok()) {
      return absl::UnavailableError(absl::StrCat("cannot reach the Kafka brokers ",
                                                 options_.brokers,
                                                 " (check --brokers and "
                                                 "that the cluster is up): ",
                                                 s.message()));
    }
  }
  return std::unique_ptr<Sink>(std::move(*sink));
}

absl::Status KafkaSinkFactory::ProbeBrokers() {
  if (probe_ == nullptr) {
    absl::StatusOr<std::unique_ptr<KafkaSink>> sink = KafkaSink::Create(options_, log_);
    if (!sink.ok()) return sink.status();
    probe_ = std::move(*sink);
  }
  // Shorter than the standby's whole cycle allows (health.h, kStandbyStale).
  return probe_->CheckReachable(kProbeTimeout);
}

}  // namespace publisher
