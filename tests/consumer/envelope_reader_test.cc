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

TEST(EnvelopeReaderTest, RefusesARecordWithoutOurContentType) {
  InboundRecord r = EnvelopeRecord("t", 0, 5, "id-1");
  r.headers = {{"id", "id-1"}};
  EXPECT_THAT(ReadEnvelope(r).status().message(), HasSubstr("no content_type header"));
  r.headers = {{"content_type", "application/json"}};
  absl::Status s = ReadEnvelope(r).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("application/json"));
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
