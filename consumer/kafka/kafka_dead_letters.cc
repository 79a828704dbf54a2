// KafkaDeadLetters: produce, then flush until the delivery report came.
#include "consumer/kafka/kafka_dead_letters.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"
#include "common/kafka/client.h"

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
      outbox::DeliveryReportStatus(m->err, m->offset, rd_kafka_message_status(m),
                                   rd_kafka_topic_name(m->rkt), m->partition);
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaDeadLetters>> KafkaDeadLetters::Create(
    const std::string& brokers, std::string topic,
    const std::vector<std::pair<std::string, std::string>>& properties) {
  std::unique_ptr<KafkaDeadLetters> d(new KafkaDeadLetters(std::move(topic)));
  absl::StatusOr<rd_kafka_conf_t*> made = outbox::NewKafkaConf(
      {
          {"bootstrap.servers", brokers},
          {"client.id", "outbox-consumer-dead-letters"},
          {"enable.idempotence", "true"},
          {"acks", "all"},
          {"linger.ms", "0"},
          {"message.timeout.ms", std::to_string(kMessageTimeoutMs)},
      },
      properties);
  if (!made.ok()) return made.status();
  rd_kafka_conf_t* conf = *made;
  char err[512];
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  d->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (d->rk_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create the dead-letter producer: ", err));
  }
  return d;
}

KafkaDeadLetters::~KafkaDeadLetters() {
  if (rk_ == nullptr) return;
  rd_kafka_flush(rk_, kMessageTimeoutMs);
  rd_kafka_destroy(rk_);
}

absl::Status KafkaDeadLetters::Send(const DeadLetter& d) {
  rd_kafka_headers_t* headers = rd_kafka_headers_new(16);
  for (const auto& [k, v] : DeadLetterHeaders(d)) {
    rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                        static_cast<ssize_t>(v.size()));
  }
  Report report;
  const InboundRecord& r = d.record;
  rd_kafka_resp_err_t e = rd_kafka_producev(
      rk_, RD_KAFKA_V_TOPIC(topic_.c_str()),
      RD_KAFKA_V_KEY(const_cast<char*>(r.key.data()), r.key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers),
      RD_KAFKA_V_OPAQUE(&report), RD_KAFKA_V_END);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_headers_destroy(headers);  // Owned by the message only once queued.
    return absl::UnavailableError(
        absl::StrCat("queueing a dead letter to ", topic_, ": ", rd_kafka_err2str(e)));
  }
  // The report arrives within message.timeout.ms, stored or not: `report` must
  // outlive it.
  while (!report.done) rd_kafka_poll(rk_, 100);
  if (!report.stored.ok()) {
    return absl::UnavailableError(
        absl::StrCat("a dead letter is not proven stored: ", report.stored.message()));
  }
  return absl::OkStatus();
}

}  // namespace consumer
