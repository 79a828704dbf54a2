// The consumer kit reads every --value-format the publisher writes back into the
// same envelope: records mapped by the publisher's own mapper, read by the kit.
#include "consumer/envelope_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "publisher/mapping/mapper.h"
#include "tools/harness/schema_outbox_relation.h"

namespace consumer {
namespace {

using cdc::pgoutput::Value;
using publisher::ValueFormat;

Value T(std::string s) { return {Value::Kind::kText, std::move(s)}; }

InboundRecord Published(ValueFormat format, uint32_t payload_type, Value payload) {
  absl::StatusOr<publisher::BoundRelation> bound = publisher::BoundRelation::Bind(
      harness::SchemaOutboxRelation(payload_type),
      publisher::ColumnMapping{}, "outbox.event.{aggregate_type}", format);
  EXPECT_TRUE(bound.ok()) << bound.status();
  cdc::pgoutput::Tuple row = {T("0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
                              T("order"),
                              T("o-1"),
                              T("OrderPaid"),
                              std::move(payload),
                              T(R"({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-)"
                                R"(00f067aa0ba902b7-01", "tenant": "acme"})"),
                              T("2026-01-02 03:04:05.123+00")};
  publisher::RowSource source{cdc::Lsn(0x1'0000'1000), cdc::Lsn(0x1'0000'1100), 742,
                              absl::FromUnixMicros(1'767'225'600'123'456), "app"};
  absl::StatusOr<publisher::OutboxRecord> r = bound->Map(row, source);
  EXPECT_TRUE(r.ok()) << r.status();
  InboundRecord in;
  in.source = {r->topic, 0};
  in.key = r->key;
  in.value = r->value;
  in.headers = r->headers;
  in.timestamp_ms = r->timestamp_ms;
  return in;
}

TEST(ValueFormatsTest, EveryFormatReadsBackAsTheSameEnvelope) {
  struct Payload {
    uint32_t type;
    std::string text;
  };
  for (const Payload& p : {Payload{3802, R"({"total": 10})"}, Payload{25, "plain text"},
                           Payload{17, "\\x00ff0a41"}}) {
    absl::StatusOr<outbox::v1::Envelope> binary =
        ReadEnvelope(Published(ValueFormat::kEnvelope, p.type, T(p.text)));
    ASSERT_TRUE(binary.ok()) << binary.status();
    for (ValueFormat format : {ValueFormat::kPayload, ValueFormat::kJson}) {
      absl::StatusOr<outbox::v1::Envelope> read =
          ReadEnvelope(Published(format, p.type, T(p.text)));
      ASSERT_TRUE(read.ok()) << read.status();
      // Payload records carry no database, schema or table (they are fixed per
      // publisher), and created_at to the millisecond (the record's timestamp).
      outbox::v1::Envelope expected = *binary;
      if (format == ValueFormat::kPayload) {
        expected.mutable_source()->clear_database();
        expected.mutable_source()->clear_schema();
        expected.mutable_source()->clear_table();
        expected.mutable_created_at()->set_nanos(123'000'000);
      }
      EXPECT_EQ(read->DebugString(), expected.DebugString())
          << publisher::ValueFormatName(format) << ", payload type " << p.type;
    }
  }
}

}  // namespace
}  // namespace consumer
