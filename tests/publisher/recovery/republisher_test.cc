// Republisher against a fake sink: every row produced and acknowledged before it
// returns; a refused row or an unmappable one fails it.
#include "publisher/recovery/republisher.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/fakes.h"
#include "tools/harness/schema_outbox_relation.h"

namespace publisher {
namespace {

using cdc::pgoutput::Tuple;
using cdc::pgoutput::Value;
using ::testing::HasSubstr;

class ScriptedRows : public RowBatches {
 public:
  explicit ScriptedRows(std::vector<std::vector<Tuple>> batches)
      : batches_(std::move(batches)) {}
  absl::StatusOr<std::vector<Tuple>> Next() override {
    if (next_ == batches_.size()) return std::vector<Tuple>{};
    return batches_[next_++];
  }

 private:
  std::vector<std::vector<Tuple>> batches_;
  size_t next_ = 0;
};

Tuple Row(const std::string& id, const std::string& key) {
  auto t = [](std::string s) { return Value{Value::Kind::kText, std::move(s)}; };
  return {t(id), t("order"), t(key), t("Created"), t("{\"n\":1}"), Value{Value::Kind::kNull, ""},
          t("2026-12-06 02:00:00+00")};
}

class RepublisherTest : public ::testing::Test {
 protected:
  RepublisherTest()
      : sink_(clock_),
        log_(common::LogFormat::kJson, common::LogLevel::kError),
        relation_(*BoundRelation::Bind(harness::SchemaOutboxRelation(), ColumnMapping{},
                                       "outbox.event.{aggregate_type}")) {}
  fakes::FakeClock clock_;
  fakes::FakeSink sink_;
  common::Logger log_;
  BoundRelation relation_;
};

TEST_F(RepublisherTest, EveryRowIsAcknowledgedBeforeItReturns) {
  ScriptedRows rows({{Row("a", "k1"), Row("b", "k2")}, {Row("c", "k1")}});
  sink_.auto_ack = true;
  Republisher r(sink_, log_, {2, absl::Seconds(5)});
  ASSERT_TRUE(r.Publish(rows, relation_, RowSource{}).ok());
  ASSERT_TRUE(r.Drain().ok());
  ASSERT_EQ(sink_.produced().size(), 3u);
  EXPECT_EQ(sink_.produced()[0].record.id, "a");
  EXPECT_EQ(sink_.produced()[2].record.key, "k1");
  EXPECT_EQ(sink_.produced()[2].record.topic, "outbox.event.order");
  EXPECT_EQ(r.acknowledged(), 3u);
  EXPECT_EQ(sink_.outstanding(), 0u);
}

TEST_F(RepublisherTest, ARefusedRowFailsIt) {
  ScriptedRows rows({{Row("a", "k1"), Row("b", "k2")}});
  sink_.on_poll = [&] {
    if (sink_.produced().size() == 2) {
      sink_.Ack(0);
      sink_.Fail(1, absl::UnavailableError("broker went away"));
    }
  };
  Republisher r(sink_, log_, {100, absl::Seconds(5)});
  absl::Status s = r.Publish(rows, relation_, RowSource{});
  if (s.ok()) s = r.Drain();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("broker went away"));
}

TEST_F(RepublisherTest, AnUnmappableRowFailsItNamingTheRow) {
  Tuple bad = Row("a", "k1");
  bad[0] = Value{Value::Kind::kNull, ""};  // No id.
  ScriptedRows rows({{bad}});
  Republisher r(sink_, log_, {100, absl::Seconds(5)});
  absl::Status s = r.Publish(rows, relation_, RowSource{});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot re-publish a row of public.outbox"));
  EXPECT_TRUE(sink_.produced().empty());
}

}  // namespace
}  // namespace publisher
