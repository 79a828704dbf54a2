// A 200k-row backlog (one 150k-row transaction plus 500 small ones, ~120 MB of row
// data) read through ReplicationStream and the decoder: the reader's resident memory
// must stay flat, proving it never buffers the stream or a transaction.
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cdc/postgres/replication_stream.h"
#include "gtest/gtest.h"
#include "tests/cdc/catch_up.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"

namespace cdc {
namespace {

using harness::PgCluster;
using test_util::ValueOrDie;

// A "VmXXX:  1234 kB" field of /proc/self/status, in bytes.
int64_t ProcStatusBytes(absl::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, field) && absl::ConsumePrefix(&rest, ":")) {
      int64_t kb = 0;
      rest = absl::StripAsciiWhitespace(rest);
      absl::ConsumeSuffix(&rest, " kB");
      if (absl::SimpleAtoi(rest, &kb)) return kb * 1024;
    }
  }
  ADD_FAILURE() << "no " << field << " in /proc/self/status";
  return 0;
}

TEST(BacklogMemoryTest, ReadingA200kRowBacklogKeepsMemoryFlat) {
  constexpr int kRows = 200000;
  auto cluster = ValueOrDie(PgCluster::Start());
  auto sql = ValueOrDie(cluster->Connect());
  // Separate statements: a simple query with several runs as one transaction, in
  // which neither slot creation nor COMMIT inside DO is allowed.
  for (const char* statement :
       {"CREATE TABLE outbox (id bigint PRIMARY KEY, aggregate_id text, payload jsonb)",
        "CREATE PUBLICATION pub FOR TABLE outbox",
        "SELECT pg_create_logical_replication_slot('s', 'pgoutput')",
        R"sql(INSERT INTO outbox SELECT i, 'agg-' || (i % 100),
                   jsonb_build_object('p', repeat(md5(i::text), 18))
                 FROM generate_series(1, 150000) i)sql",
        R"sql(DO $$ BEGIN
                   FOR t IN 0..499 LOOP
                     INSERT INTO outbox SELECT i, 'agg-' || (i % 100),
                       jsonb_build_object('p', repeat(md5(i::text), 18))
                       FROM generate_series(150001 + t * 100, 150000 + (t + 1) * 100) i;
                     COMMIT;
                   END LOOP;
                 END $$)sql"}) {
    absl::Status s = sql->Exec(statement).status();
    ASSERT_TRUE(s.ok()) << s;
  }
  Lsn until = ValueOrDie(
      Lsn::Parse(ValueOrDie(sql->Value("SELECT pg_current_wal_insert_lsn()"))));

  auto stream = ValueOrDie(ReplicationStream::Connect(cluster->conninfo()));
  StartOptions options;
  options.slot = "s";
  options.publications = {"pub"};
  ASSERT_TRUE(stream->Start(options).ok());

  // Reset the peak-RSS watermark, so VmHWM covers the streaming only.
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const int64_t rss_before = ProcStatusBytes("VmRSS");
  int64_t inserts = 0, bytes = 0, commits = 0, max_rss = rss_before;
  ASSERT_TRUE(CatchUp(*stream, until, absl::Now() + absl::Minutes(4),
                      [&](const XLogData& frame, const pgoutput::PgOutputMessage& m) {
                        bytes += frame.payload.size();
                        commits += std::holds_alternative<pgoutput::Commit>(m);
                        if (std::holds_alternative<pgoutput::Insert>(m) &&
                            ++inserts % 10000 == 0) {
                          max_rss = std::max(max_rss, ProcStatusBytes("VmRSS"));
                        }
                      })
                  .ok());
  const int64_t peak = std::max(max_rss, ProcStatusBytes("VmHWM"));

  EXPECT_EQ(inserts, kRows);
  EXPECT_EQ(commits, 501);
  EXPECT_GT(bytes, 100 << 20) << "the backlog must dwarf the memory bound";
  const int64_t growth = peak - rss_before;
  std::cout << "streamed " << (bytes >> 20) << " MiB; RSS before " << (rss_before >> 20)
            << " MiB, peak growth " << (growth >> 10) << " KiB\n";
  EXPECT_LT(growth, 16 << 20) << "memory grew with the backlog";
}

}  // namespace
}  // namespace cdc
