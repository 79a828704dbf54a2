#include "publisher/mapping/mapper.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"
#include "publisher/mapping/pg_text.h"
#include "tools/harness/schema_outbox_relation.h"

namespace publisher {
namespace {

using cdc::pgoutput::Relation;
using cdc::pgoutput::Tuple;
using cdc::pgoutput::Value;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using std::string_literals::operator""s;

Relation Outbox(uint32_t payload_type = 3802) {
  return harness::SchemaOutboxRelation(payload_type);
}

Value T(std::string s) { return {Value::Kind::kText, std::move(s)}; }
const Value kNull{Value::Kind::kNull, ""};

Tuple Row(Value payload = T(R"({"total": 10})"), Value headers = T(R"({"trace": "abc"})"),
          Value created = T("2026-01-02 03:04:05.123456+00")) {
  return {T("0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
          T("order"),
          T("o-1"),
          T("OrderCreated"),
          payload,
          headers,
          created};
}

RowSource Source() {
  return {cdc::Lsn(0x1000), cdc::Lsn(0x1100), 742, absl::FromUnixSeconds(1'767'225'600),
          "app"};
}

BoundRelation Bind(const Relation& r = Outbox(),
                   const std::string& topic = "outbox.event.{aggregate_type}",
                   ValueFormat format = ValueFormat::kEnvelope) {
  absl::StatusOr<BoundRelation> b =
      BoundRelation::Bind(r, ColumnMapping{}, topic, format);
  EXPECT_TRUE(b.ok()) << b.status();
  return *b;
}

outbox::v1::Envelope Decode(const OutboxRecord& r) {
  outbox::v1::Envelope e;
  EXPECT_TRUE(e.ParseFromString(r.value));
  return e;
}

TEST(MapperTest, MapsAnOutboxRowToTheSpecRecord) {
  absl::StatusOr<OutboxRecord> r = Bind().Map(Row(), Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.order");
  EXPECT_EQ(r->key, "o-1");
  EXPECT_EQ(r->id, "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01");
  EXPECT_THAT(r->headers,
              ElementsAre(Pair("id", "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
                          Pair("event_type", "OrderCreated"),
                          Pair("content_type",
                               "application/x-protobuf; messageType=outbox.v1.Envelope"),
                          Pair("trace", "abc")));
  const int64_t created_ms = 1'767'323'045'123;  // 2026-01-02T03:04:05.123456Z
  EXPECT_EQ(r->timestamp_ms, created_ms);

  outbox::v1::Envelope e = Decode(*r);
  EXPECT_EQ(e.id(), "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01");
  EXPECT_EQ(e.aggregate_type(), "order");
  EXPECT_EQ(e.aggregate_id(), "o-1");
  EXPECT_EQ(e.event_type(), "OrderCreated");
  EXPECT_EQ(e.payload(), R"({"total": 10})");
  EXPECT_EQ(e.content_type(), "application/json");
  EXPECT_THAT(e.headers(), ::testing::UnorderedElementsAre(Pair("trace", "abc")));
  EXPECT_EQ(e.created_at().seconds(), created_ms / 1000);
  EXPECT_EQ(e.created_at().nanos(), 123456000);
  EXPECT_EQ(e.source().lsn(), 0x1000u);
  EXPECT_EQ(e.source().commit_lsn(), 0x1100u);
  EXPECT_EQ(e.source().xid(), 742u);
  EXPECT_EQ(e.source().commit_time().seconds(), 1'767'225'600);
  EXPECT_EQ(e.source().database(), "app");
  EXPECT_EQ(e.source().schema(), "public");
  EXPECT_EQ(e.source().table(), "outbox");
}

TEST(MapperTest, PayloadTypes) {
  auto text = Bind(Outbox(25)).Map(Row(T("héllo ✓ 日本")), Source());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(Decode(*text).payload(), "héllo ✓ 日本");
  EXPECT_EQ(Decode(*text).content_type(), "text/plain");

  auto bytes = Bind(Outbox(17)).Map(Row(T("\\x00ff0a41")), Source());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(Decode(*bytes).payload(), "\x00\xff\x0a\x41"s);
  EXPECT_EQ(Decode(*bytes).content_type(), "application/octet-stream");

  auto json = Bind(Outbox(114)).Map(Row(T("[1, 2]")), Source());
  EXPECT_EQ(Decode(*json).content_type(), "application/json");

  auto null_payload = Bind().Map(Row(kNull), Source());
  ASSERT_TRUE(null_payload.ok());
  EXPECT_EQ(Decode(*null_payload).payload(), "");
}

BoundRelation BindAs(ValueFormat format, uint32_t payload_type = 3802) {
  return Bind(Outbox(payload_type), "outbox.event.{aggregate_type}", format);
}

constexpr ValueFormat kEveryFormat[] = {ValueFormat::kEnvelope, ValueFormat::kPayload,
                                        ValueFormat::kJson};

TEST(MapperTest, PayloadFormatCarriesThePayloadAloneWithTheEnvelopeInHeaders) {
  absl::StatusOr<OutboxRecord> r = BindAs(ValueFormat::kPayload).Map(Row(), Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, R"({"total": 10})");
  EXPECT_EQ(r->key, "o-1");
  EXPECT_EQ(r->topic, "outbox.event.order");
  EXPECT_EQ(r->timestamp_ms, 1'767'323'045'123);
  EXPECT_THAT(
      r->headers,
      ElementsAre(Pair("id", "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
                  Pair("event_type", "OrderCreated"),
                  Pair("content_type", "application/json"),
                  Pair("outbox_aggregate_type", "order"), Pair("outbox_lsn", "0/1000"),
                  Pair("outbox_commit_lsn", "0/1100"), Pair("outbox_xid", "742"),
                  Pair("outbox_commit_time", "2026-01-01T00:00:00.000000Z"),
                  Pair("trace", "abc")));

  auto text = BindAs(ValueFormat::kPayload, 25).Map(Row(T("héllo")), Source());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->value, "héllo");
  EXPECT_THAT(text->headers, ::testing::Contains(Pair("content_type", "text/plain")));
  // A NULL payload is a null value, as Debezium writes it; the envelope formats
  // carry an empty payload instead.
  auto null_payload = BindAs(ValueFormat::kPayload).Map(Row(kNull), Source());
  ASSERT_TRUE(null_payload.ok()) << null_payload.status();
  EXPECT_TRUE(null_payload->value_null);
  EXPECT_FALSE(r->value_null);
  EXPECT_FALSE(Bind().Map(Row(kNull), Source())->value_null);
  auto bytes = BindAs(ValueFormat::kPayload, 17).Map(Row(T("\\x00ff0a41")), Source());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->value, "\x00\xff\x0a\x41"s);
  EXPECT_THAT(bytes->headers,
              ::testing::Contains(Pair("content_type", "application/octet-stream")));
}

TEST(MapperTest, JsonFormatIsTheEnvelopeInProtobufsJsonMapping) {
  absl::StatusOr<OutboxRecord> binary = Bind().Map(Row(), Source());
  absl::StatusOr<OutboxRecord> json = BindAs(ValueFormat::kJson).Map(Row(), Source());
  ASSERT_TRUE(binary.ok() && json.ok()) << json.status();
  outbox::v1::Envelope from_json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json->value, &from_json).ok())
      << json->value;
  EXPECT_EQ(from_json.SerializeAsString(), Decode(*binary).SerializeAsString())
      << json->value;
  EXPECT_THAT(json->value, HasSubstr(R"("aggregateType":"order")"));
  EXPECT_THAT(
      json->headers,
      ElementsAre(Pair("id", "0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01"),
                  Pair("event_type", "OrderCreated"),
                  Pair("content_type", kJsonEnvelopeContentType), Pair("trace", "abc")));
}

TEST(MapperTest, AHeadersColumnEntryWithAReservedNameIsAPermanentErrorInEveryFormat) {
  for (ValueFormat format : kEveryFormat) {
    for (const char* name : {"id", "event_type", "content_type", "outbox_lsn"}) {
      absl::StatusOr<OutboxRecord> r = BindAs(format).Map(
          Row(T(R"({"total": 10})"), T(absl::StrFormat(R"({"%s": "x"})", name))),
          Source());
      ASSERT_FALSE(r.ok()) << ValueFormatName(format) << " " << name;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(r.status().message(), HasSubstr(absl::StrCat("\"", name, "\"")));
      EXPECT_THAT(r.status().message(), HasSubstr("column headers"));
    }
  }
}

TEST(MapperTest, TraceContextFromTheHeadersColumnBecomesKafkaHeadersInEveryFormat) {
  const std::string traceparent =
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  for (ValueFormat format : kEveryFormat) {
    absl::StatusOr<OutboxRecord> r = BindAs(format).Map(
        Row(T(R"({"total": 10})"),
            T(absl::StrFormat(
                R"({"traceparent": "%s", "tracestate": "congo=t61rcWkgMzE"})",
                traceparent))),
        Source());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(r->headers, ::testing::Contains(Pair("traceparent", traceparent)))
        << ValueFormatName(format);
    EXPECT_THAT(r->headers, ::testing::Contains(Pair("tracestate", "congo=t61rcWkgMzE")))
        << ValueFormatName(format);
  }
}

TEST(MapperTest, HeaderValuesOfEveryJsonType) {
  auto r = Bind().Map(
      Row(T("{}"),
          T(R"({"s": "x", "n": 1.5, "b": true, "o": {"k": [1]}, "gone": null, "u": "✓"})")),
      Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(
      Decode(*r).headers(),
      ::testing::UnorderedElementsAre(Pair("s", "x"), Pair("n", "1.5"), Pair("b", "true"),
                                      Pair("o", R"({"k":[1]})"), Pair("u", "✓")));
  EXPECT_EQ(r->headers.size(), 3u + 5u);
}

TEST(MapperTest, AbsentOptionalColumnsUseCommitTime) {
  Relation r = Outbox();
  r.columns.resize(5);  // No headers, no created_at.
  Tuple full = Row();
  auto record = Bind(r).Map(Tuple(full.begin(), full.begin() + 5), Source());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->timestamp_ms, 1'767'225'600'000);
  EXPECT_EQ(Decode(*record).created_at().seconds(), 1'767'225'600);
  EXPECT_EQ(record->headers.size(), 3u);
  auto null_ts = Bind().Map(Row(T("{}"), kNull, kNull), Source());
  EXPECT_EQ(null_ts->timestamp_ms, 1'767'225'600'000);
}

TEST(MapperTest, MapIntoAReusedRecordKeepsNothingOfThePreviousRow) {
  BoundRelation b = Bind(Outbox(), "{schema}.{table}.{event_type}-{aggregate_id}");
  OutboxRecord record;
  Tuple first = Row(T(R"({"total": 10})"), T(R"({"a": "1", "b": "2"})"));
  ASSERT_TRUE(b.MapInto(first, Source(), &record).ok());
  Tuple second = Row(T("{}"), kNull);
  second[0] = T("id-2");
  second[2] = T("o-2");
  second[3] = T("E");
  ASSERT_TRUE(b.MapInto(second, Source(), &record).ok());
  // Exactly what a fresh record gets.
  OutboxRecord fresh = *b.Map(second, Source());
  EXPECT_EQ(record.topic, "public.outbox.E-o-2");
  EXPECT_EQ(record.topic, fresh.topic);
  EXPECT_EQ(record.key, fresh.key);
  EXPECT_EQ(record.id, "id-2");
  EXPECT_EQ(record.value, fresh.value);
  EXPECT_EQ(record.headers, fresh.headers);
  EXPECT_THAT(record.headers, ElementsAre(Pair("id", "id-2"), Pair("event_type", "E"),
                                          Pair("content_type", kEnvelopeContentType)));
  EXPECT_EQ(record.timestamp_ms, fresh.timestamp_ms);
  EXPECT_EQ(Decode(record).headers_size(), 0);
}

TEST(MapperTest, TopicTemplates) {
  auto r =
      Bind(Outbox(), "{schema}.{table}.{event_type}-{aggregate_id}").Map(Row(), Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "public.outbox.OrderCreated-o-1");
  EXPECT_EQ(Bind(Outbox(), "fixed").Map(Row(), Source())->topic, "fixed");
}

TEST(MapperTest, RowErrorsArePermanentAndNameTheColumn) {
  BoundRelation b = Bind();
  struct Case {
    Tuple row;
    std::string message;
  };
  Tuple null_id = Row();
  null_id[0] = kNull;
  Tuple null_key = Row();
  null_key[2] = kNull;
  Tuple null_topic = Row();
  null_topic[1] = kNull;
  Tuple bad_topic = Row();
  bad_topic[1] = T("no spaces allowed");
  std::vector<Case> cases = {
      {null_id, "column id of public.outbox is NULL"},
      {null_key, "column aggregate_id of public.outbox is NULL"},
      {null_topic, "column aggregate_type is NULL but names the topic"},
      {bad_topic, "is not a valid Kafka topic name"},
      {Row(T("{}"), T("[1,2]")), "must hold a JSON object"},
      {Row(T("{}"), T("{not json")), "must hold a JSON object"},
      {Row(T("{}"), T("{}"), T("yesterday")), "unrecognised timestamp"},
      {Tuple{T("x")}, "row has 1 columns"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<OutboxRecord> r = b.Map(c.row, Source());
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.message));
  }
  auto bad_bytea = Bind(Outbox(17)).Map(Row(T("not hex")), Source());
  EXPECT_THAT(bad_bytea.status().message(), HasSubstr("bytea_output = 'hex'"));
}

TEST(MapperTest, BindErrorsNameTheColumnAndTheFlag) {
  Relation no_key = Outbox();
  no_key.columns.erase(no_key.columns.begin() + 2);
  auto b = BoundRelation::Bind(no_key, ColumnMapping{}, "t");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      b.status().message(),
      HasSubstr("table public.outbox has no column \"aggregate_id\" (--key-column)"));

  EXPECT_THAT(BoundRelation::Bind(Outbox(23), ColumnMapping{}, "t").status().message(),
              HasSubstr("use json, jsonb, text or bytea"));
  EXPECT_THAT(
      BoundRelation::Bind(Outbox(), ColumnMapping{}, "x.{nope}").status().message(),
      HasSubstr("no column \"nope\" (--topic)"));
  Relation text_headers = Outbox();
  text_headers.columns[5].type_oid = 25;
  EXPECT_THAT(BoundRelation::Bind(text_headers, ColumnMapping{}, "t").status().message(),
              HasSubstr("must be jsonb"));
}

TEST(MapperTest, ParsesPostgresTimestamps) {
  auto at = [](const char* s) { return absl::ToUnixMicros(*ParsePgTimestamp(s)); };
  EXPECT_EQ(at("2026-01-02 03:04:05+00"), 1'767'323'045'000'000);
  EXPECT_EQ(at("2026-01-02 03:04:05.5+00"), 1'767'323'045'500'000);
  EXPECT_EQ(at("2026-01-02 05:34:05+02:30"), 1'767'323'045'000'000);
  EXPECT_EQ(at("2026-01-01 22:04:05-05"), 1'767'323'045'000'000);
  EXPECT_EQ(at("2026-01-02 03:04:05"), 1'767'323'045'000'000);  // timestamp: UTC
  EXPECT_FALSE(ParsePgTimestamp("infinity").ok());
  EXPECT_FALSE(ParsePgTimestamp("2026-01-02 03:04:05+0").ok());
}

// The per-row fast path (ISO DateStyle) agrees with civil time arithmetic at the
// edges, and whatever it does not recognise still goes to the general parser.
TEST(MapperTest, ParsesTimestampEdgesLikeCivilTime) {
  auto at = [](const char* s) {
    absl::StatusOr<absl::Time> t = ParsePgTimestamp(s);
    EXPECT_TRUE(t.ok()) << s << ": " << t.status();
    return t.ok() ? absl::ToUnixMicros(*t) : 0;
  };
  auto civil = [](int y, int mo, int d, int h, int mi, int s) {
    return absl::ToUnixMicros(
        absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
  };
  EXPECT_EQ(at("2024-02-29 23:59:59.999999+00"), civil(2024, 2, 29, 23, 59, 59) + 999999);
  EXPECT_EQ(at("1970-01-01 00:00:00+00"), 0);
  EXPECT_EQ(at("1969-12-31 23:59:59.5+00"), -500000);
  EXPECT_EQ(at("2026-06-30 12:00:00.000001+05:30:15"), civil(2026, 6, 30, 6, 29, 45) + 1);
  EXPECT_EQ(at("0001-01-01 00:00:00+00"), civil(1, 1, 1, 0, 0, 0));
  EXPECT_EQ(at("2026-01-02 03:04:05.123+00"), civil(2026, 1, 2, 3, 4, 5) + 123000);
  // Not the fast path's shape; the general parser takes them as before.
  EXPECT_EQ(at("2026-01-02 03:04:05.1234567+00"), civil(2026, 1, 2, 3, 4, 5) + 123456);
  EXPECT_EQ(at("12026-01-02 03:04:05+00"), civil(12026, 1, 2, 3, 4, 5));
  for (const char* bad : {"2026-13-01 00:00:00+00", "2026-01-02T03:04:05+00",
                          "2026-01-02 03:04:05.+00", "2026-01-02 03:04", "-infinity"}) {
    EXPECT_FALSE(ParsePgTimestamp(bad).ok()) << bad;
  }
}

// The fast path's own calendar arithmetic against absl's civil time, day by day
// over four centuries (leap years of every kind) and at every hour of one day.
TEST(MapperTest, FastTimestampsAgreeWithCivilTimeEveryDay) {
  absl::CivilDay day(1900, 1, 1);
  size_t checked = 0;
  for (; day < absl::CivilDay(2300, 1, 1); ++day) {
    std::string text = absl::StrFormat("%04d-%02d-%02d 13:07:59.000042+00", day.year(),
                                       day.month(), day.day());
    absl::StatusOr<absl::Time> t = ParsePgTimestamp(text);
    ASSERT_TRUE(t.ok()) << text;
    ASSERT_EQ(*t, absl::FromCivil(
                      absl::CivilSecond(day.year(), day.month(), day.day(), 13, 7, 59),
                      absl::UTCTimeZone()) +
                      absl::Microseconds(42))
        << text;
    ++checked;
  }
  EXPECT_EQ(checked, 146097u);  // 400 years.
  for (int h = 0; h < 24; ++h) {
    std::string text = absl::StrFormat("2000-02-29 %02d:30:00-01:15", h);
    EXPECT_EQ(
        *ParsePgTimestamp(text),
        absl::FromCivil(absl::CivilSecond(2000, 2, 29, h, 30, 0), absl::UTCTimeZone()) +
            absl::Minutes(75))
        << text;
  }
}

TEST(MapperTest, TopicNameRules) {
  EXPECT_TRUE(IsValidTopicName("outbox.event.order_v1-x"));
  EXPECT_FALSE(IsValidTopicName(""));
  EXPECT_FALSE(IsValidTopicName(".."));
  EXPECT_FALSE(IsValidTopicName("a/b"));
  EXPECT_FALSE(IsValidTopicName(std::string(250, 'a')));
}

TEST(MapperTest, RowAsJsonForDeadLetters) {
  Tuple row = Row();
  row[5] = kNull;
  EXPECT_EQ(
      Bind().RowAsJson(row),
      R"({"id":"0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01","aggregate_type":"order",)"
      R"("aggregate_id":"o-1","event_type":"OrderCreated","payload":"{\"total\": 10}",)"
      R"("headers":null,"created_at":"2026-01-02 03:04:05.123456+00"})");
}

}  // namespace
}  // namespace publisher
