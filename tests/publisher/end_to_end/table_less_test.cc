// Outbox events without a table (--message-prefix) end to end: outbox_emit() from
// scripts/schema.sql, the publisher binary, a throwaway PostgreSQL and mock-kafka.
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kMessages = {"--message-prefix", "outbox"};

class TableLessTest : public PublisherTest {
 protected:
  void SetUp() override {
    PublisherTest::SetUp();
    std::ifstream in(absl::StrCat(OUTBOX_SOURCE_DIR, "/scripts/schema.sql"));
    std::stringstream schema;
    schema << in.rdbuf();
    ASSERT_FALSE(schema.str().empty());
    ASSERT_TRUE(sql_->Exec(schema.str()).ok()) << "scripts/schema.sql";
  }

  std::string Emit(const std::string& key, const std::string& payload = "{\"n\": 1}") {
    return ValueOrDie(sql_->Value(
        absl::StrCat("SELECT outbox_emit('order', '", key, "', 'OrderPlaced', '", payload,
                     "'::jsonb, '{\"trace\": \"t-1\"}'::jsonb)::text")));
  }
};

TEST_F(TableLessTest, CommittedEventsInterleaveWithRowsAndNothingElsePublishes) {
  publisher_ = StartPublisher(kMessages);
  auto consumer = StartConsumer();
  // One transaction: a row, an event, a row; all for aggregate o-1 (one partition).
  ASSERT_TRUE(sql_->Exec("BEGIN").ok());
  ASSERT_TRUE(
      sql_->Exec("INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, "
                 "payload) VALUES ('00000000-0000-4000-8000-00000000000a', 'order', "
                 "'o-1', 'E', '{}')")
          .ok());
  // The event and row b carry the same jsonb payload.
  constexpr char kPayload[] =
      R"({"total": 12.5, "n": 1, "items": [1, {"b": 2, "a": 1}]})";
  std::string event = Emit("o-1", kPayload);
  ASSERT_TRUE(
      sql_->Exec(absl::StrCat("INSERT INTO outbox (id, aggregate_type, aggregate_id, "
                              "event_type, payload) VALUES "
                              "('00000000-0000-4000-8000-00000000000b', 'order', 'o-1', "
                              "'E', '",
                              kPayload, "')"))
          .ok());
  ASSERT_TRUE(sql_->Exec("COMMIT").ok());
  // Rolled back: never published.
  ASSERT_TRUE(sql_->Exec("BEGIN").ok());
  std::string rolled_back = Emit("o-2");
  ASSERT_TRUE(sql_->Exec("ROLLBACK").ok());
  // Not transactional, or another prefix: never published.
  ASSERT_TRUE(
      sql_->Exec("SELECT pg_logical_emit_message(false, 'outbox', '{\"id\": \"nt\"}')")
          .ok());
  ASSERT_TRUE(
      sql_->Exec("SELECT pg_logical_emit_message(true, 'audit', '{\"id\": \"other\"}')")
          .ok());
  std::string last = Emit("o-3");
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)))
      << publisher_->Log();
  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 4; }, absl::Seconds(60)));

  std::vector<std::string> o1;  // Ids of aggregate o-1, in partition order.
  std::set<std::string> ids;
  for (const auto& r : consumer->Records()) {
    ids.insert(Header(r, "id"));
    if (r.key == "o-1") o1.push_back(Header(r, "id"));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"00000000-0000-4000-8000-00000000000a", event,
                                        "00000000-0000-4000-8000-00000000000b", last}));
  EXPECT_THAT(o1, ::testing::ElementsAre("00000000-0000-4000-8000-00000000000a", event,
                                         "00000000-0000-4000-8000-00000000000b"))
      << "events and rows of one transaction keep commit order";
  std::string row_payload;
  for (const auto& r : consumer->Records()) {
    if (Header(r, "id") != "00000000-0000-4000-8000-00000000000b") continue;
    outbox::v1::Envelope e;
    ASSERT_TRUE(e.ParseFromString(r.value));
    row_payload = e.payload();
  }
  // jsonb's text form: keys ordered by length, then bytes; ", " and ": ".
  EXPECT_EQ(row_payload, R"({"n": 1, "items": [1, {"a": 1, "b": 2}], "total": 12.5})");
  for (const auto& r : consumer->Records()) {
    if (Header(r, "id") != event) continue;
    outbox::v1::Envelope e;
    ASSERT_TRUE(e.ParseFromString(r.value));
    EXPECT_EQ(r.topic, "outbox.event.order");
    EXPECT_EQ(e.event_type(), "OrderPlaced");
    EXPECT_EQ(e.payload(), row_payload) << "the same payload text as a table row's";
    EXPECT_EQ(e.headers().at("trace"), "t-1");
    EXPECT_EQ(Header(r, "trace"), "t-1");
    EXPECT_EQ(e.source().table(), "");
    EXPECT_LT(e.source().lsn(), e.source().commit_lsn())
        << "the message precedes its commit";
  }
  EXPECT_FALSE(ids.count(rolled_back));
  EXPECT_THAT(publisher_->Log(), HasSubstr("ignored a non-transactional message"));
}

TEST_F(TableLessTest, Kill9AndRestartLoseNothing) {
  publisher_ = StartPublisher(kMessages);
  auto consumer = StartConsumer();
  std::set<std::string> emitted;
  for (int i = 0; i < 100; ++i) emitted.insert(Emit(absl::StrCat("o-", i % 7)));
  publisher_->Signal(SIGKILL);
  publisher_->Wait(absl::Seconds(30));
  for (int i = 0; i < 100; ++i) emitted.insert(Emit(absl::StrCat("o-", i % 7)));
  publisher_ = StartPublisher(kMessages);
  for (int i = 0; i < 100; ++i) emitted.insert(Emit(absl::StrCat("o-", i % 7)));
  Lsn end = WalInsert();
  ASSERT_TRUE(WaitFor([&] { return Confirmed() >= end; }, absl::Seconds(60)));
  std::set<std::string> ids = DistinctIds(*consumer, emitted.size());
  EXPECT_EQ(ids, emitted);
}

TEST_F(TableLessTest, OutboxEmitRefusesWhatCannotBeAnEvent) {
  EXPECT_FALSE(sql_->Exec("SELECT outbox_emit('order', NULL, 'E', '{}')").ok());
  EXPECT_FALSE(sql_->Exec("SELECT outbox_emit('order', 'k', 'E', '{}', '[1]')").ok());
  // The prefix follows the setting outbox.message_prefix.
  ASSERT_TRUE(sql_->Exec("SET outbox.message_prefix = 'tenant_a'").ok());
  publisher_ = StartPublisher({"--message-prefix", "tenant_a"});
  auto consumer = StartConsumer();
  std::string id = Emit("k");
  ASSERT_TRUE(WaitFor([&] { return consumer->Count() >= 1; }, absl::Seconds(60)));
  EXPECT_EQ(Header(consumer->Records()[0], "id"), id);
}

}  // namespace
}  // namespace publisher
