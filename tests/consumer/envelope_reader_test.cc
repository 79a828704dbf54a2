// ReadEnvelope: only outbox-publisher's records, with an id, are envelopes.
#include "consumer/envelope_reader.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consumer/fakes.h"

namespace consumer {
namespace {

using ::testing::HasSubstr;

TEST(EnvelopeReaderTest, ReadsThePublishersRecord) {
  absl::StatusOr<outbox::v1::Envelope> e =
      ReadEnvelope(EnvelopeRecord("t", 0, 5, "id-1"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->id(), "id-1");
  EXPECT_EQ(e->event_type(), "OrderPaid");
}

TEST(EnvelopeReaderTest, RefusesARecordWithNeitherOurContentTypeNorAnId) {
  InboundRecord r = EnvelopeRecord("t", 0, 5, "id-1");
  r.headers = {};
  EXPECT_THAT(ReadEnvelope(r).status().message(), HasSubstr("nor an id header"));
  r.headers = {{"content_type", "application/json"}};
  absl::Status s = ReadEnvelope(r).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("application/json"));
}

TEST(EnvelopeReaderTest, ReadsARecordOfDebeziumsOutboxRouter) {
  // Debezium at its defaults: the key, the payload as the value, the id in a header.
  InboundRecord r;
  r.key = "o-1";
  r.value = R"({"total": 10})";
  r.headers = {{"id", "4d47e190-0402-4048-bc2c-89dd54343cdc"}};
  r.timestamp_ms = 1'556'890'294'484;
  absl::StatusOr<outbox::v1::Envelope> e = ReadEnvelope(r);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->id(), "4d47e190-0402-4048-bc2c-89dd54343cdc");
  EXPECT_EQ(e->aggregate_id(), "o-1");
  EXPECT_EQ(e->payload(), R"({"total": 10})");
  EXPECT_EQ(e->created_at().seconds(), 1'556'890'294);
}

TEST(EnvelopeReaderTest, RefusesAPayloadRecordWithMalformedSourceHeaders) {
  InboundRecord r;
  r.headers = {{"id", "e"}, {"outbox_lsn", "not-an-lsn"}};
  absl::Status s = ReadEnvelope(r).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("outbox_lsn"));
  r.headers = {{"id", "e"}, {"outbox_commit_time", "yesterday"}};
  EXPECT_THAT(ReadEnvelope(r).status().message(), HasSubstr("outbox_commit_time"));
}

TEST(EnvelopeReaderTest, RefusesAJsonValueThatIsNoEnvelope) {
  InboundRecord r;
  r.headers = {{"id", "e"}, {"content_type", kJsonEnvelopeContentType}};
  r.value = R"({"id": "e", "noSuchField": 1})";
  EXPECT_THAT(ReadEnvelope(r).status().message(), HasSubstr("not an outbox.v1.Envelope"));
}

TEST(EnvelopeReaderTest, RefusesAValueThatIsNoEnvelope) {
  InboundRecord r = EnvelopeRecord("t", 0, 5, "id-1");
  r.value = "\xff\xff\xff";
  EXPECT_TRUE(absl::IsInvalidArgument(ReadEnvelope(r).status()));
}

TEST(EnvelopeReaderTest, RefusesAnEnvelopeWithoutAnId) {
  InboundRecord r = EnvelopeRecord("t", 0, 5, "");
  EXPECT_THAT(ReadEnvelope(r).status().message(), HasSubstr("no id"));
}

}  // namespace
}  // namespace consumer
