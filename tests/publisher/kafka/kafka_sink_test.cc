// KafkaSink's pure parts: how librdkafka's error codes and delivery reports map to
// the Delivery status classes. What a report proves decides what may be confirmed.
#include "publisher/kafka/kafka_sink.h"

#include <librdkafka/rdkafka.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/program/options.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

TEST(DeliveryReportStatusTest, StoredOnlyWithAnOffsetAndPersistedStatus) {
  EXPECT_TRUE(common::DeliveryReportStatus(RD_KAFKA_RESP_ERR_NO_ERROR, 0,
                                           RD_KAFKA_MSG_STATUS_PERSISTED, "t", 3)
                  .ok());
  EXPECT_TRUE(common::DeliveryReportStatus(RD_KAFKA_RESP_ERR_NO_ERROR, 123456,
                                           RD_KAFKA_MSG_STATUS_PERSISTED, "t", 3)
                  .ok());
}

// rd_kafka_dr_implicit_ack(): success, status PERSISTED, but offset -1001.
TEST(DeliveryReportStatusTest, ImplicitAckWithoutAnOffsetIsNotProof) {
  absl::Status s =
      common::DeliveryReportStatus(RD_KAFKA_RESP_ERR_NO_ERROR, RD_KAFKA_OFFSET_INVALID,
                                   RD_KAFKA_MSG_STATUS_PERSISTED, "orders", 7);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("orders [7]"));
  EXPECT_THAT(s.message(), HasSubstr("offset -1001"));
  EXPECT_THAT(s.message(), HasSubstr("without proof of storage"));
}

TEST(DeliveryReportStatusTest, PossiblyOrNotPersistedIsNotProof) {
  for (int status :
       {RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED, RD_KAFKA_MSG_STATUS_NOT_PERSISTED}) {
    EXPECT_EQ(common::DeliveryReportStatus(RD_KAFKA_RESP_ERR_NO_ERROR, 42, status, "t", 0)
                  .code(),
              absl::StatusCode::kUnavailable)
        << status;
  }
}

TEST(DeliveryReportStatusTest, ErrorsKeepTheirClass) {
  struct Case {
    rd_kafka_resp_err_t err;
    absl::StatusCode code;
  };
  for (const Case& c :
       {Case{RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, absl::StatusCode::kInvalidArgument},
        Case{RD_KAFKA_RESP_ERR__FATAL, absl::StatusCode::kAborted},
        Case{RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, absl::StatusCode::kUnavailable},
        Case{RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, absl::StatusCode::kNotFound}}) {
    EXPECT_EQ(
        common::DeliveryReportStatus(c.err, -1, RD_KAFKA_MSG_STATUS_NOT_PERSISTED, "t", 0)
            .code(),
        c.code)
        << rd_kafka_err2name(c.err);
  }
}

TEST(IsRequestTimeoutLogTest, OnlyTheWarningThatSumsUpTimedOutRequests) {
  // "Timed out 1 in-flight, 0 retry-queued, ..." (LOG_WARNING) says a path went
  // silent; the per-request lines beside it are LOG_INFO, other facilities other news.
  EXPECT_TRUE(common::IsRequestTimeoutLog(4, "REQTMOUT"));
  EXPECT_TRUE(common::IsRequestTimeoutLog(3, "REQTMOUT"));
  EXPECT_FALSE(common::IsRequestTimeoutLog(6, "REQTMOUT"));
  EXPECT_FALSE(common::IsRequestTimeoutLog(4, "FAIL"));
  EXPECT_FALSE(common::IsRequestTimeoutLog(4, "REQTMOUTX"));
}

TEST(IsSummaryKafkaErrorTest, AllBrokersDownOnly) {
  EXPECT_TRUE(common::IsSummaryKafkaError(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN));
  EXPECT_FALSE(common::IsSummaryKafkaError(RD_KAFKA_RESP_ERR__TRANSPORT));
  EXPECT_FALSE(common::IsSummaryKafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT));
  EXPECT_FALSE(common::IsSummaryKafkaError(RD_KAFKA_RESP_ERR__AUTHENTICATION));
}

TEST(DefaultProducerPropertiesTest, IdempotentAllAcksOneRequestInFlightNoTimeout) {
  Config config;
  config.brokers = "b:9092";
  auto p = DefaultProducerProperties(KafkaOptionsFrom(config));
  using KV = std::pair<std::string, std::string>;
  EXPECT_THAT(p, ::testing::Contains(KV{"bootstrap.servers", "b:9092"}));
  EXPECT_THAT(p, ::testing::Contains(KV{"enable.idempotence", "true"}));
  EXPECT_THAT(p, ::testing::Contains(KV{"acks", "all"}));
  EXPECT_THAT(p, ::testing::Contains(KV{"message.timeout.ms", "0"}));
  EXPECT_THAT(p, ::testing::Contains(KV{"max.in.flight.requests.per.connection", "1"}));
}

TEST(RequestTimeoutTest, OursUnlessTheUserSetsIt) {
  Config config;
  EXPECT_EQ(RequestTimeout(KafkaOptionsFrom(config)), absl::Seconds(30));
  config.kafka_properties = {{"socket.timeout.ms", "45000"}};
  EXPECT_EQ(RequestTimeout(KafkaOptionsFrom(config)), absl::Seconds(45));
  config.kafka_properties.push_back({"socket.timeout.ms", "10000"});
  EXPECT_EQ(RequestTimeout(KafkaOptionsFrom(config)), absl::Seconds(10))
      << "the last -X wins";
}

}  // namespace
}  // namespace publisher
