// MessageEvents: outbox_emit()'s JSON content becomes the same record as a row.
#include "publisher/mapping/message_events.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"

namespace publisher {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

const absl::Time kCommit = absl::FromUnixSeconds(1'800'000'000);

RowSource Source() { return {cdc::Lsn(0x1234), cdc::Lsn(0x1200), 77, kCommit, "app"}; }

MessageEvents Bind(const std::string& topic = "outbox.event.{aggregate_type}",
                   ColumnMapping columns = {}) {
  absl::StatusOr<MessageEvents> m = MessageEvents::Bind(columns, topic);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

outbox::v1::Envelope Envelope(const OutboxRecord& r) {
  outbox::v1::Envelope e;
  EXPECT_TRUE(e.ParseFromString(r.value));
  return e;
}

constexpr char kFull[] = R"({"id": "5a9e7c1e-0000-4000-8000-000000000001",
  "aggregate_type": "order", "aggregate_id": "o-17", "event_type": "OrderPlaced",
  "payload": {"total": 12.5, "items": [1, 2]}, "headers": {"trace": "t-1", "n": 3}})";

TEST(MessageEventsTest, EveryFieldMapsLikeATableRow) {
  absl::StatusOr<OutboxRecord> r = Bind().Map(kFull, Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "outbox.event.order");
  EXPECT_EQ(r->key, "o-17");
  EXPECT_EQ(r->id, "5a9e7c1e-0000-4000-8000-000000000001");
  EXPECT_EQ(r->timestamp_ms, absl::ToUnixMillis(kCommit)) << "no created_at: commit time";
  EXPECT_THAT(r->headers, ElementsAre(Pair("id", "5a9e7c1e-0000-4000-8000-000000000001"),
                                      Pair("event_type", "OrderPlaced"),
                                      Pair("content_type", kEnvelopeContentType),
                                      Pair("n", "3"), Pair("trace", "t-1")));
  outbox::v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.id(), "5a9e7c1e-0000-4000-8000-000000000001");
  EXPECT_EQ(e.aggregate_type(), "order");
  EXPECT_EQ(e.aggregate_id(), "o-17");
  EXPECT_EQ(e.event_type(), "OrderPlaced");
  EXPECT_EQ(e.payload(), R"({"total": 12.5, "items": [1, 2]})")
      << "verbatim: outbox_emit() writes jsonb's text form, as a table row's column has "
         "it";
  EXPECT_EQ(e.content_type(), "application/json");
  EXPECT_EQ(e.headers().at("trace"), "t-1");
  EXPECT_EQ(e.source().lsn(), 0x1234u) << "the message's own LSN";
  EXPECT_EQ(e.source().commit_lsn(), 0x1200u);
  EXPECT_EQ(e.source().xid(), 77u);
  EXPECT_EQ(e.source().database(), "app");
  EXPECT_EQ(e.source().schema(), "");
  EXPECT_EQ(e.source().table(), "") << "an event without a table";
  EXPECT_EQ(e.created_at().seconds(), 1'800'000'000);
}

TEST(MessageEventsTest, HeadersAreOptionalAndPayloadsMayBeAnyJson) {
  for (const char* payload : {R"("text")", "42", "[1,2]", "true", "{}"}) {
    std::string content = absl::StrCat(
        R"({"id":"1","aggregate_type":"a","aggregate_id":"k","event_type":"E","payload":)",
        payload, "}");
    absl::StatusOr<OutboxRecord> r = Bind().Map(content, Source());
    ASSERT_TRUE(r.ok()) << payload << ": " << r.status();
    EXPECT_EQ(Envelope(*r).payload(), payload);
    EXPECT_EQ(r->headers.size(), 3u);
  }
  absl::StatusOr<OutboxRecord> null_headers = Bind().Map(
      R"({"id":"1","aggregate_type":"a","aggregate_id":"k","event_type":"E","payload":1,"headers":null})",
      Source());
  EXPECT_TRUE(null_headers.ok()) << null_headers.status();
}

TEST(MessageEventsTest, MissingOrMistypedFieldsAreNamed) {
  const std::string ok_fields =
      R"("aggregate_type":"a","aggregate_id":"k","event_type":"E","payload":{})";
  struct Case {
    std::string content, says;
  };
  for (const Case& c : std::vector<Case>{
           {"{" + ok_fields + "}", "no \"id\""},
           {R"({"id":"1","aggregate_type":"a","event_type":"E","payload":{}})",
            "no \"aggregate_id\""},
           {R"({"id":"1","aggregate_type":"a","aggregate_id":"k","payload":{}})",
            "no \"event_type\""},
           {R"({"id":"1","aggregate_type":"a","aggregate_id":"k","event_type":"E"})",
            "no \"payload\""},
           {R"({"id":1,)" + ok_fields + "}", "\"id\" must be a string"},
           {R"({"id":"1",)" + ok_fields + R"(,"headers":[1]})", "must be a JSON object"},
           {R"({"id":"1",)" + ok_fields + R"(,"headers":"x"})", "must be a JSON object"},
           {"not json", "not a JSON object"},
           {"[1,2]", "not a JSON object"},
           {"", "not a JSON object"},
           {R"({"id":"1",)", "not a JSON object"},
       }) {
    absl::StatusOr<OutboxRecord> r = Bind().Map(c.content, Source());
    ASSERT_FALSE(r.ok()) << c.content;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.content;
    EXPECT_THAT(r.status().message(), HasSubstr(c.says)) << c.content;
  }
}

TEST(MessageEventsTest, UnicodeSurvivesAsUtf8) {
  absl::StatusOr<OutboxRecord> r = Bind().Map(
      R"({"id":"\u00fc-1","aggregate_type":"bestellung","aggregate_id":"キー",)"
      R"("event_type":"Größe","payload":{"name":"Zoë \ud83d\ude00"},"headers":{"h":"é"}})",
      Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->key, "キー");
  EXPECT_EQ(r->id, "ü-1") << "string fields are decoded";
  outbox::v1::Envelope e = Envelope(*r);
  EXPECT_EQ(e.event_type(), "Größe");
  EXPECT_EQ(e.payload(), R"({"name":"Zoë \ud83d\ude00"})") << "the payload is verbatim";
  EXPECT_EQ(e.headers().at("h"), "é");
}

TEST(MessageEventsTest, BigPayloads) {
  std::string big(4 << 20, 'x');
  absl::StatusOr<OutboxRecord> r = Bind().Map(
      absl::StrCat(
          R"({"id":"1","aggregate_type":"a","aggregate_id":"k","event_type":"E",)",
          R"("payload":{"blob":")", big, "\"}}"),
      Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Envelope(*r).payload().size(), big.size() + 11);
}

TEST(MessageEventsTest, TheConfiguredColumnNamesAndTemplatesApply) {
  ColumnMapping columns;
  columns.aggregate_type = "kind";
  MessageEvents m = Bind("events.{kind}.{event_type}", columns);
  absl::StatusOr<OutboxRecord> r = m.Map(kFull, Source());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->topic, "events.order.OrderPlaced");
  // A template naming a column messages lack cannot be bound.
  absl::StatusOr<MessageEvents> bad = MessageEvents::Bind({}, "events.{tenant}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(bad.status().message(), HasSubstr("--message-prefix"));
}

TEST(MessageEventsTest, DeadLettersHoldTheContent) {
  EXPECT_EQ(MessageEvents::ContentAsJson(R"({"a": 1})"), R"({"a":1})");
  EXPECT_EQ(MessageEvents::ContentAsJson("not json"), R"("not json")");
}

}  // namespace
}  // namespace publisher
