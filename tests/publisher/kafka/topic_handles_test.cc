#include "publisher/kafka/topic_handles.h"

#include <librdkafka/rdkafka.h>

#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace publisher {
namespace {

// A producer that never connects: handles need no broker.
class TopicHandlesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<common::KafkaClient> rk = common::NewKafkaClient(
        RD_KAFKA_PRODUCER, common::KafkaConf(rd_kafka_conf_new()), {}, "a producer");
    ASSERT_TRUE(rk.ok()) << rk.status();
    client_ = *std::move(rk);
    rk_ = client_.get();
  }
  common::KafkaClient client_;
  rd_kafka_t* rk_ = nullptr;
  TopicHandles handles_;  // Released before client_ (declared after it).
};

TEST_F(TopicHandlesTest, OneHandlePerTopicKeptAcrossMessages) {
  rd_kafka_topic_t* orders = handles_.Get(rk_, "outbox.event.order");
  ASSERT_NE(orders, nullptr);
  EXPECT_EQ(handles_.Get(rk_, "outbox.event.order"), orders);
  rd_kafka_topic_t* users = handles_.Get(rk_, "outbox.event.user");
  EXPECT_NE(users, orders);
  EXPECT_STREQ(rd_kafka_topic_name(users), "outbox.event.user");
  EXPECT_EQ(handles_.size(), 2u);
}

TEST_F(TopicHandlesTest, ManyTopicsStartOverInsteadOfGrowing) {
  for (size_t i = 0; i < TopicHandles::kMaxHandles + 10; ++i) {
    ASSERT_NE(handles_.Get(rk_, "t" + std::to_string(i)), nullptr);
    ASSERT_LE(handles_.size(), TopicHandles::kMaxHandles);
  }
  EXPECT_EQ(handles_.size(), 10u);
}

}  // namespace
}  // namespace publisher
