// Connection strings: both of libpq's forms parse; defaults fill only what the user
// left unset; passwords never reach a log.
#include "common/postgres/conninfo.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace common {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

TEST(ConninfoTest, BothFormsParse) {
  auto kv = ParseConninfo("host=db port=5433 dbname=app");
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_THAT(*kv, Contains(Pair("port", "5433")));
  auto uri = ParseConninfo("postgresql://u@db:5433/app?keepalives_idle=5");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_THAT(*uri, Contains(Pair("keepalives_idle", "5")));
  EXPECT_EQ(ParseConninfo("host=").status().code(), absl::StatusCode::kOk);
  EXPECT_EQ(ParseConninfo("nonsense").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConninfoTest, SocketDefaultsFillOnlyWhatTheUserLeftUnset) {
  ConnParams user = *ParseConninfo("host=db tcp_user_timeout=5000 keepalives=0");
  ConnParams p = WithDefaults(user, SocketTimeoutDefaults());
  EXPECT_THAT(p, Contains(Pair("tcp_user_timeout", "5000")));
  EXPECT_THAT(p, Contains(Pair("keepalives", "0")));
  EXPECT_THAT(p, Not(Contains(Pair("keepalives", "1"))));
  EXPECT_THAT(p, Contains(Pair("keepalives_idle", "30")));
  EXPECT_THAT(p, Contains(Pair("keepalives_interval", "10")));
  EXPECT_THAT(p, Contains(Pair("keepalives_count", "3")));
}

TEST(ConninfoTest, EveryConnectionGetsBoundedSocketTimeouts) {
  ConnParams p = WithDefaults({}, SocketTimeoutDefaults());
  EXPECT_THAT(p, Contains(Pair("keepalives", "1")));
  EXPECT_THAT(p, Contains(Pair("tcp_user_timeout", "30000")));
}

TEST(ConninfoTest, PasswordsAreRedacted) {
  std::string shown = RedactConninfo("host=db password=hunter2 user=u");
  EXPECT_THAT(shown, Not(HasSubstr("hunter2")));
  EXPECT_THAT(RedactConninfo("postgresql://u:hunter2@db/app"), Not(HasSubstr("hunter2")));
  EXPECT_THAT(RedactConninfo("password='unterminated"), Not(HasSubstr("unterminated")));
}

TEST(ConninfoTest, SplitHostsGivesOneConninfoPerServer) {
  auto one = SplitHosts("host=db port=5433 dbname=app");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->size(), 1u);
  auto two = SplitHosts(
      "host=a,b port=5433,5434 dbname=app target_session_attrs=read-write password=it's");
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->size(), 2u);
  auto second = ParseConninfo((*two)[1]);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(*second, Contains(Pair("host", "b")));
  EXPECT_THAT(*second, Contains(Pair("port", "5434")));
  EXPECT_THAT(*second, Contains(Pair("dbname", "app")));
  EXPECT_THAT(*second, Contains(Pair("password", "it's")));
  EXPECT_THAT(*second, Contains(Pair("target_session_attrs", "any")));
  // One port for every host; a URI with several hosts.
  auto uri = SplitHosts("postgresql://u@a,b:6000/app");
  ASSERT_TRUE(uri.ok()) << uri.status();
  ASSERT_EQ(uri->size(), 2u);
  EXPECT_THAT(*ParseConninfo((*uri)[0]), Contains(Pair("host", "a")));
  EXPECT_THAT(*ParseConninfo((*uri)[1]), Contains(Pair("port", "6000")));
}

}  // namespace
}  // namespace common
