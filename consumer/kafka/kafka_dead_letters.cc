// KafkaDeadLetters: produce, then flush until the delivery report came.
#include "consumer/kafka/kafka_dead_letters.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"
#include "common/kafka/client.h"
#include "common/status_macros.h"

namespace consumer {
namespace {

constexpr int kMessageTimeoutMs = 30000;

// Where a delivery report leaves its verdict (the message's opaque).
struct Report {
  bool done = false;
  absl::Status stored;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
  auto* report = static_cast<Report*>(m->_private);
  report->done = true;
  // As the publisher's: success without proof of storage (an implicit
  // acknowledgement) is no success.
  report->stored =
      common::DeliveryReportStatus(m->err, m->offset, rd_kafka_message_status(m),
                                   rd_kafka_topic_name(m->rkt), m->partition);
}

}  // namespace

void KafkaDeadLetters::OnLog(const rd_kafka_t* rk, int level, const char* facility,
                             const char* line) {
  common::LogLibrdkafka(*static_cast<KafkaDeadLetters*>(rd_kafka_opaque(rk))->log_, level,
                        facility, line);
}

absl::StatusOr<std::unique_ptr<KafkaDeadLetters>> KafkaDeadLetters::Create(
    const std::string& brokers, std::string topic,
    const std::vector<std::pair<std::string, std::string>>& properties,
    common::Logger* log) {
  std::unique_ptr<KafkaDeadLetters> d(new KafkaDeadLetters(std::move(topic), log));
  ASSIGN_OR_RETURN(common::KafkaConf conf, common::NewKafkaConf(
      {
          {"bootstrap.servers", brokers},
          {"client.id", "outbox-consumer-dead-letters"},
          {"enable.idempotence", "true"},
          {"acks", "all"},
          {"linger.ms", "0"},
          {"message.timeout.ms", std::to_string(kMessageTimeoutMs)},
      },
      properties));
  ASSIGN_OR_RETURN(
      d->rk_,
      common::NewKafkaClient(RD_KAFKA_PRODUCER, std::move(conf),
                             {.opaque = d.get(),
                              .log = log != nullptr ? &KafkaDeadLetters::OnLog : nullptr,
                              .delivery = &OnDelivery},
                             "the dead-letter producer"));
  return d;
}

KafkaDeadLetters::~KafkaDeadLetters() {
  if (rk_ == nullptr) return;
  rd_kafka_flush(rk_.get(), kMessageTimeoutMs);
}

absl::Status KafkaDeadLetters::Send(const DeadLetter& d) {
  common::KafkaHeaders headers(rd_kafka_headers_new(16));
  for (const auto& [k, v] : DeadLetterHeaders(d)) {
    rd_kafka_header_add(headers.get(), k.data(), static_cast<ssize_t>(k.size()), v.data(),
                        static_cast<ssize_t>(v.size()));
  }
  Report report;
  const InboundRecord& r = d.record;
  rd_kafka_resp_err_t e = rd_kafka_producev(
      rk_.get(), RD_KAFKA_V_TOPIC(topic_.c_str()),
      RD_KAFKA_V_KEY(const_cast<char*>(r.key.data()), r.key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers.get()),
      RD_KAFKA_V_OPAQUE(&report), RD_KAFKA_V_END);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(
        absl::StrCat("queueing a dead letter to ", topic_, ": ", rd_kafka_err2str(e)));
  }
  headers.release();  // The queued message owns them now.
  // The report arrives within message.timeout.ms, stored or not: `report` must
  // outlive it.
  while (!report.done) rd_kafka_poll(rk_.get(), 100);
  if (!report.stored.ok()) {
    return absl::UnavailableError(
        absl::StrCat("a dead letter is not proven stored: ", report.stored.message()));
  }
  return absl::OkStatus();
}

}  // namespace consumer
