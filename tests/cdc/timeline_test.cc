// ParseTimelineHistory over history files as PostgreSQL writes them.
#include "cdc/timeline.h"

#include "gtest/gtest.h"

namespace cdc {
namespace {

TEST(TimelineHistoryTest, ParsesEachEarlierTimelineAndItsSwitchPoint) {
  auto h = ParseTimelineHistory(
      "1\t0/3000158\tno recovery target specified\n"
      "\n# a comment\n"
      "2\t0/5A00000\tno recovery target specified\n");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0], (TimelineSwitch{1, Lsn(0x3000158)}));
  EXPECT_EQ((*h)[1], (TimelineSwitch{2, Lsn(0x5A00000)}));
  EXPECT_TRUE(ParseTimelineHistory("")->empty());
}

TEST(TimelineHistoryTest, AMalformedLineIsDataLoss) {
  EXPECT_EQ(ParseTimelineHistory("1 nonsense\n").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseTimelineHistory("x\t0/1\n").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace cdc
