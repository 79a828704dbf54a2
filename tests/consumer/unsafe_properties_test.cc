#include "consumer/unsafe_properties.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace consumer {
namespace {

using ::testing::HasSubstr;

TEST(UnsafePropertiesTest, SettingsThatBreakApplyOnceAreRefusedNamingWhy) {
  absl::Status s = RefuseUnsafeProperties({{"enable.auto.offset.store", "true"},
                                           {"isolation.level", "read_uncommitted"}});
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("enable.auto.offset.store: the group would "
                                     "commit a record's offset before its effect"));
  EXPECT_THAT(s.message(), HasSubstr("isolation.level: records of "
                                     "aborted Kafka transactions"));
  EXPECT_THAT(RefuseUnsafeProperties({{"group.id", "g"}}).message(), HasSubstr("--group"));
  EXPECT_EQ(RefuseUnsafeProperties({{"enable.auto.offset.store", "1"}}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(UnsafePropertiesTest, SafeSettingsPass) {
  EXPECT_TRUE(RefuseUnsafeProperties({}).ok());
  EXPECT_TRUE(RefuseUnsafeProperties({{"enable.auto.offset.store", "false"},
                                      {"isolation.level", "read_committed"},
                                      {"security.protocol", "SASL_SSL"},
                                      {"sasl.password", "p"}})
                  .ok());
}

}  // namespace
}  // namespace consumer
