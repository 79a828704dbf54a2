// --shard I/N end to end: two publishers share one outbox table, each with its own
// slot and a publication whose row filter keeps its keys. Every row is published
// once, each key by one shard only, and --check says whether the shards' filters
// cover every key exactly once. Row filters need PostgreSQL 15+.
#include <signal.h>

#include <cstdlib>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// PG_VERSION when it has row filters, else 15.
int ShardVersion() {
  int v = 0;
  const char* env = std::getenv("PG_VERSION");
  if (env == nullptr || !absl::SimpleAtoi(env, &v) || v < 15) return 15;
  return v;
}

class ShardTest : public PublisherTest {
 protected:
  void SetUp() override {
    cluster_ = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}, ShardVersion()));
    sql_ = ValueOrDie(cluster_->Connect());
    ASSERT_TRUE(sql_->Exec(kSchema).ok());
    log_path_ = absl::StrCat(cluster_->dir(), "/publisher.log");
    SetUpBroker();
  }
  void TearDown() override {
    if (HasFailure() && second_)
      std::cerr << "--- shard 2 ---\n" << second_->Log() << "\n";
    PublisherTest::TearDown();
  }

  // `n` rows of keys k0..k(keys-1), ten per transaction, ids from `first`.
  void Write(int n, int keys, int first = 0) {
    for (int i = 0; i < n; i += 10) {
      ASSERT_TRUE(
          sql_->Exec(absl::StrCat(
                         "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, "
                         "payload) SELECT 'order', 'k' || (g % ",
                         keys, "), 'E', jsonb_build_object('n', g) FROM generate_series(",
                         first + i, ", ", first + i + 9, ") g"))
              .ok());
    }
  }

  // The shard (1 or 2) of key `k` as the row filters compute it.
  int ShardOf(const std::string& key) {
    std::string v = ValueOrDie(sql_->Value(
        absl::StrCat("SELECT ((hashtext('", key, "'::text) % 2) + 2) % 2 + 1")));
    int shard = 0;
    EXPECT_TRUE(absl::SimpleAtoi(v, &shard));
    return shard;
  }

  // Shard `index`/2's publisher, logging to a file of its own (the streaming line
  // StartPublisher waits for must be its own).
  std::unique_ptr<Process> StartShard(int index) {
    std::string shared = log_path_;
    log_path_ = absl::StrCat(cluster_->dir(), "/shard", index, "-", ++starts_, ".log");
    auto p = StartPublisher({"--shard", absl::StrCat(index, "/2")});
    log_path_ = shared;
    return p;
  }

  std::string Check(int index) {
    auto check = ValueOrDie(
        Process::Start(PublisherArgv({"--check", "--shard", absl::StrCat(index, "/2")}),
                       absl::StrCat(cluster_->dir(), "/check", ++checks_, ".log")));
    check->Wait(absl::Seconds(60));
    return check->Log();
  }

  std::unique_ptr<Process> second_;
  int checks_ = 0;
  int starts_ = 0;
};

TEST_F(ShardTest, TwoShardsPublishEveryRowOnceEachKeyFromOneShard) {
  auto consumer = StartConsumer();
  publisher_ = StartShard(1);
  // Every shard's slot must exist before rows are written: shard 2 starts once,
  // making its slot, then stops.
  second_ = StartShard(2);
  second_->Signal(SIGTERM);
  ASSERT_EQ(second_->Wait(absl::Seconds(30)), 0) << second_->Log();
  Write(200, 40);
  int expected = 0;
  for (int k = 0; k < 40; ++k) expected += ShardOf(absl::StrCat("k", k)) == 1 ? 5 : 0;
  ASSERT_GT(expected, 0);
  ASSERT_LT(expected, 200) << "both shards must have keys";
  ASSERT_TRUE(
      WaitFor([&] { return consumer->Records().size() >= static_cast<size_t>(expected); },
              absl::Seconds(60)));
  for (const auto& r : consumer->Records())
    EXPECT_EQ(ShardOf(r.key), 1) << "shard 1 published key " << r.key;

  // Shard 2 resumes from its own slot: the rest arrives, each row once.
  second_ = StartShard(2);
  Write(200, 40, 1000);
  std::set<std::string> ids = DistinctIds(*consumer, 400);
  EXPECT_EQ(ids.size(), 400u);
  EXPECT_EQ(consumer->Records().size(), 400u) << "a row published by both shards";
}

TEST_F(ShardTest, CheckSaysWhetherTheShardsCoverEveryKeyOnce) {
  std::string log = Check(1);
  EXPECT_THAT(log, HasSubstr("shard 2/2 publication outbox_publisher_2_of_2"));
  EXPECT_THAT(log, HasSubstr("does not exist"));
  publisher_ = StartShard(1);
  second_ = StartShard(2);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto n = sql_->Value(
            "SELECT count(*) FROM pg_publication WHERE pubname LIKE '%_of_2'");
        return n.ok() && *n == "2";
      },
      absl::Seconds(60)));
  Write(20, 5);
  log = Check(2);
  EXPECT_THAT(log, HasSubstr("shards of public.outbox by aggregate_id"));
  EXPECT_THAT(log, HasSubstr("select each of"));
  EXPECT_THAT(log, HasSubstr("sample keys exactly once"));
  EXPECT_THAT(log, Not(HasSubstr("in no shard")));

  // Shard 2 made to publish every key: keys of shard 1 now come twice.
  ASSERT_TRUE(sql_->Exec("ALTER PUBLICATION outbox_publisher_2_of_2 SET TABLE outbox "
                         "WHERE (aggregate_id IS NOT NULL), outbox_bin WHERE "
                         "(aggregate_id IS NOT NULL)")
                  .ok());
  log = Check(1);
  EXPECT_THAT(log, HasSubstr("in more than one shard"));
  EXPECT_THAT(log, HasSubstr("published twice"));

  // And shard 2 publishing nothing: its keys are lost.
  ASSERT_TRUE(sql_->Exec("ALTER PUBLICATION outbox_publisher_2_of_2 SET TABLE outbox "
                         "WHERE (false), outbox_bin WHERE (false)")
                  .ok());
  log = Check(2);
  EXPECT_THAT(log, HasSubstr("in no shard"));
  EXPECT_THAT(log, HasSubstr("would never be published"));
}

TEST_F(ShardTest, AnUnshardedPublisherRefusesAFilteredPublication) {
  ASSERT_TRUE(sql_->Exec("CREATE PUBLICATION outbox_publisher FOR TABLE outbox WHERE "
                         "(aggregate_id <> 'x'), outbox_bin WITH (publish = 'insert')")
                  .ok());
  auto p = ValueOrDie(Process::Start(PublisherArgv(), log_path_));
  EXPECT_NE(p->Wait(absl::Seconds(60)), 0);
  EXPECT_THAT(p->Log(), HasSubstr("the rows it leaves out would never be published"));
}

}  // namespace
}  // namespace publisher
