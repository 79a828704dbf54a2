// CommittedView: a record counts only when its Kafka transaction's checkpoint is
// in the checkpoint topic.
#include "tests/chaos/committed_view.h"

#include "gtest/gtest.h"
#include "outbox/v1/checkpoint.pb.h"

namespace chaos {
namespace {

std::string CheckpointOf(const std::string& kafka_transaction) {
  outbox::v1::Checkpoint c;
  c.set_end_lsn(0x100);
  c.set_transactional_id("outbox-publisher.s");
  c.set_kafka_transaction(kafka_transaction);
  return c.SerializeAsString();
}

TEST(CommittedViewTest, OnlyRecordsOfCommittedTransactionsAreReceived) {
  CommittedView view;
  ASSERT_TRUE(view.AddCheckpoint(CheckpointOf("p1.1")));
  ASSERT_TRUE(view.AddCheckpoint(CheckpointOf("p2.7")));
  EXPECT_EQ(view.transactions(), 2u);
  EXPECT_TRUE(view.Received({{"id", "a"}, {"kafka_transaction", "p1.1"}}));
  EXPECT_TRUE(view.Received({{"kafka_transaction", "p2.7"}}));
  EXPECT_FALSE(view.Received({{"kafka_transaction", "p1.2"}}))
      << "aborted: no checkpoint";
  EXPECT_FALSE(view.Received({{"id", "a"}})) << "not written by a transaction";
}

TEST(CommittedViewTest, WhatIsNotACheckpointIsRefused) {
  CommittedView view;
  EXPECT_FALSE(view.AddCheckpoint("not a protobuf \xff\xff"));
  EXPECT_FALSE(view.AddCheckpoint(CheckpointOf("")));
  EXPECT_EQ(view.transactions(), 0u);
}

}  // namespace
}  // namespace chaos
