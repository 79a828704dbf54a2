#include "cdc/lsn.h"

#include <sstream>

#include "gtest/gtest.h"

namespace cdc {
namespace {

TEST(LsnTest, ParsesServerNotation) {
  absl::StatusOr<Lsn> lsn = Lsn::Parse("16/B374D848");
  ASSERT_TRUE(lsn.ok()) << lsn.status();
  EXPECT_EQ(lsn->value(), (uint64_t{0x16} << 32) | 0xB374D848);
  EXPECT_EQ(Lsn::Parse("0/0")->value(), 0u);
  EXPECT_EQ(Lsn::Parse("ffffffff/ffffffff")->value(), ~uint64_t{0});
  EXPECT_EQ(Lsn::Parse("0/16b3748")->value(), 0x16B3748u);
}

TEST(LsnTest, FormatsLikeTheServer) {
  EXPECT_EQ(Lsn((uint64_t{0x16} << 32) | 0xB374D848).ToString(), "16/B374D848");
  EXPECT_EQ(Lsn(0).ToString(), "0/0");
  EXPECT_EQ(Lsn(0x1000000).ToString(), "0/1000000");
  std::ostringstream os;
  os << Lsn(0x1A);
  EXPECT_EQ(os.str(), "0/1A");
}

TEST(LsnTest, RoundTrips) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{0xFFFFFFFF},
                     uint64_t{0x100000000}, uint64_t{0xDEADBEEFCAFEF00D}, ~uint64_t{0}}) {
    EXPECT_EQ(Lsn::Parse(Lsn(v).ToString())->value(), v);
  }
}

TEST(LsnTest, RejectsMalformed) {
  for (const char* bad : {"", "/", "0/", "/0", "00", "1/2/3", "g/0", "0/x", "123456789/0",
                          "0/123456789", " 0/0", "0/0 ", "-1/0"}) {
    absl::StatusOr<Lsn> lsn = Lsn::Parse(bad);
    EXPECT_FALSE(lsn.ok()) << bad;
    EXPECT_EQ(lsn.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(LsnTest, Compares) {
  EXPECT_LT(Lsn(1), Lsn(2));
  EXPECT_LE(Lsn(2), Lsn(2));
  EXPECT_GT(Lsn(0x100000000), Lsn(0xFFFFFFFF));
  EXPECT_NE(Lsn(1), Lsn(2));
  EXPECT_FALSE(Lsn().is_valid());
  EXPECT_TRUE(Lsn(1).is_valid());
}

}  // namespace
}  // namespace cdc
