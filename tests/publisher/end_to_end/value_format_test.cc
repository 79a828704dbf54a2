// --value-format through the binary, in every format: what a consumer reads is the
// event (the envelope, in protobuf or JSON, or the payload with the envelope's facts
// in headers), the writer's trace context arrives as Kafka headers of the same
// names, and a headers-column entry with a reserved name is a mapping error that
// --on-error=dead-letter sends to the dead-letter topic, confirming past it only
// once its dead letter is stored.
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "outbox/v1/envelope.pb.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class ValueFormatTest : public PublisherTest,
                        public ::testing::WithParamInterface<std::string> {};

TEST_P(ValueFormatTest, EventsTraceContextAndReservedHeadersInThisFormat) {
  const std::string format = GetParam();
  ASSERT_EQ(mock_->Command("topic outbox.dead-letter 1"), "ok");
  publisher_ = StartPublisher(
      {"--table", "outbox", "--value-format", format, "--on-error", "dead-letter"});
  ASSERT_TRUE(
      sql_
          ->Exec(absl::StrCat(
              "INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, "
              "payload, headers) VALUES "
              "('0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01', 'order', 'o-1', 'OrderPaid', "
              "'{\"total\": 10}', '{\"traceparent\": \"",
              kTraceparent,
              "\", \"tracestate\": \"congo=t61rcWkgMzE\"}'), "
              "('1b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e02', 'order', 'o-2', 'OrderPaid', "
              "'{}', '{\"id\": \"forged\"}')"))
          .ok());
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)))
      << publisher_->Log();

  std::unique_ptr<Consumer> consumer = StartConsumer();
  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 1; }, absl::Seconds(30)));
  std::vector<ConsumedRecord> records = consumer->Records();
  ASSERT_EQ(records.size(), 1u) << "the row with a reserved header was published";
  const ConsumedRecord& r = records[0];
  EXPECT_EQ(r.key, "o-1");
  EXPECT_EQ(Header(r, "id"), "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01");
  EXPECT_EQ(Header(r, "traceparent"), kTraceparent);
  EXPECT_EQ(Header(r, "tracestate"), "congo=t61rcWkgMzE");
  outbox::v1::Envelope e;
  if (format == "envelope") {
    EXPECT_EQ(Header(r, "content_type"),
              "application/x-protobuf; messageType=outbox.v1.Envelope");
    ASSERT_TRUE(e.ParseFromString(r.value));
    EXPECT_EQ(e.payload(), R"({"total": 10})");
  } else if (format == "json") {
    EXPECT_EQ(Header(r, "content_type"),
              "application/json; messageType=outbox.v1.Envelope");
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.value, &e).ok()) << r.value;
    EXPECT_EQ(e.payload(), R"({"total": 10})");
  } else {
    EXPECT_EQ(r.value, R"({"total": 10})");
    EXPECT_EQ(Header(r, "content_type"), "application/json");
    EXPECT_EQ(Header(r, "outbox_aggregate_type"), "order");
    EXPECT_NE(Header(r, "outbox_commit_lsn"), "<absent>");
  }
  if (format != "payload") {
    EXPECT_EQ(e.id(), "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01");
    EXPECT_EQ(e.headers().at("traceparent"), kTraceparent);
  }

  auto dlq = ValueOrDie(Consumer::Start(brokers_, {"outbox.dead-letter"}));
  ASSERT_TRUE(WaitFor([&] { return dlq->Count() >= 1; }, absl::Seconds(30)));
  ConsumedRecord letter = dlq->Records()[0];
  EXPECT_THAT(Header(letter, "error"), HasSubstr("names header \"id\""));
  EXPECT_THAT(letter.value, HasSubstr("1b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e02"));
}

INSTANTIATE_TEST_SUITE_P(Formats, ValueFormatTest,
                         ::testing::Values("envelope", "payload", "json"));

}  // namespace
}  // namespace publisher
