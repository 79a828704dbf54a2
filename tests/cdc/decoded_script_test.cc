// Runs a script of transactions against a throwaway PostgreSQL and asserts the
// decoded stream exactly: every message in order, values, xids, and commit/end LSNs
// checked against the WAL itself (pg_walinspect, PostgreSQL 15 and later; on 14
// they are checked for order and against the Begin messages only).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cdc/postgres/catalog.h"
#include "cdc/postgres/replication_stream.h"
#include "cdc/relation_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cdc/catch_up.h"
#include "tests/test_util.h"
#include "tools/harness/pg_cluster.h"

namespace cdc {
namespace {

using harness::PgCluster;
using harness::PgSession;
using test_util::ValueOrDie;
using ::testing::ElementsAreArray;

// A compact, exact rendering of a tuple: text values as-is (long ones by length),
// NULL, unchanged TOAST.
std::string Render(const pgoutput::Tuple& tuple) {
  std::vector<std::string> parts;
  for (const pgoutput::Value& v : tuple) {
    switch (v.kind) {
      case pgoutput::Value::Kind::kNull:
        parts.push_back("NULL");
        break;
      case pgoutput::Value::Kind::kUnchangedToast:
        parts.push_back("TOAST");
        break;
      default:
        parts.push_back(v.data.size() > 100 ? absl::StrCat("<", v.data.size(), " bytes>")
                                            : v.data);
    }
  }
  return absl::StrJoin(parts, "|");
}

struct Rendered {
  std::vector<std::string> lines;
  std::vector<pgoutput::Begin> begins;
  std::vector<pgoutput::Commit> commits;
  std::vector<std::string> long_values;
  // Transactions without a published change, left out (see Renderer).
  int empty_transactions = 0;
};

struct Renderer {
  Rendered& out;
  RelationCache& cache;
  // PostgreSQL 14 sends a transaction with no published change as an empty
  // BEGIN/COMMIT pair, which 15 skips: with this set, such pairs are counted and
  // left out, so that one script fits both.
  bool drop_empty = false;

  void operator()(const pgoutput::Begin& m) {
    out.lines.push_back(absl::StrCat("BEGIN ", m.xid));
    out.begins.push_back(m);
  }
  void operator()(const pgoutput::Commit& m) {
    if (drop_empty && !out.lines.empty() && absl::StartsWith(out.lines.back(), "BEGIN ")) {
      out.lines.pop_back();
      out.begins.pop_back();
      ++out.empty_transactions;
      return;
    }
    out.lines.push_back("COMMIT");
    out.commits.push_back(m);
  }
  void operator()(const pgoutput::Relation& m) {
    std::vector<std::string> cols;
    for (const auto& c : m.columns) cols.push_back(c.name);
    out.lines.push_back(
        absl::StrCat("RELATION ", m.schema, ".", m.name, " ", absl::StrJoin(cols, ",")));
    cache.Apply(m);
  }
  void Tuple(const char* what, uint32_t oid, const pgoutput::Tuple& t) {
    const pgoutput::Relation* r = ValueOrDie(cache.Find(oid));
    EXPECT_TRUE(cache.CheckTuple(oid, t).ok());
    out.lines.push_back(absl::StrCat(what, " ", r->name, " ", Render(t)));
    for (const auto& v : t) {
      if (v.data.size() > 100) out.long_values.push_back(v.data);
    }
  }
  void operator()(const pgoutput::Insert& m) {
    Tuple("INSERT", m.relation_oid, m.new_tuple);
  }
  void operator()(const pgoutput::Update& m) {
    if (m.old_kind)
      Tuple(m.old_kind == 'K' ? "UPDATE-OLD-KEY" : "UPDATE-OLD", m.relation_oid,
            m.old_tuple);
    Tuple("UPDATE", m.relation_oid, m.new_tuple);
  }
  void operator()(const pgoutput::Delete& m) {
    Tuple(m.old_kind == 'K' ? "DELETE-KEY" : "DELETE-OLD", m.relation_oid, m.old_tuple);
  }
  void operator()(const pgoutput::Truncate& m) {
    std::vector<std::string> names;
    for (uint32_t oid : m.relation_oids)
      names.push_back(ValueOrDie(cache.Find(oid))->name);
    out.lines.push_back(
        absl::StrCat("TRUNCATE ", absl::StrJoin(names, ","), " options=", m.options));
  }
  void operator()(const pgoutput::Message& m) {
    out.lines.push_back(absl::StrCat("MESSAGE ", m.flags, " ", m.prefix, " ", m.content));
  }
  template <typename T>
  void operator()(const T& m) {
    out.lines.push_back(std::string(pgoutput::MessageName(m)));
  }
};

TEST(DecodedScriptTest, EveryTransactionDecodesExactlyInCommitOrder) {
  auto cluster = ValueOrDie(PgCluster::Start({"TimeZone=UTC"}));
  auto sql = ValueOrDie(cluster->Connect());
  int major = ValueOrDie(cluster->MajorVersion());
  bool walinspect = major >= 15;  // pg_walinspect is there from 15.
  bool sends_empty = major < 15;  // So are skipped empty transactions.
  if (walinspect) {
    ASSERT_TRUE(sql->Exec("CREATE EXTENSION pg_walinspect").ok());
  }
  ASSERT_TRUE(sql->Exec(R"sql(
    CREATE TABLE outbox (
      id uuid PRIMARY KEY, aggregate_type text NOT NULL, aggregate_id text NOT NULL,
      event_type text NOT NULL, payload jsonb NOT NULL, headers jsonb,
      created_at timestamptz NOT NULL, blob bytea);
    CREATE TABLE other (id int PRIMARY KEY, v text);
    CREATE PUBLICATION pub FOR TABLE outbox
      WITH (publish = 'insert, update, delete, truncate');
  )sql")
                  .ok());
  auto stream = ValueOrDie(ReplicationStream::Connect(cluster->conninfo()));
  ASSERT_TRUE(cdc::EnsureSlot(stream->sql(), "s", true).ok());

  // Runs one transaction and returns its xid.
  auto tx = [&](const std::string& body) {
    EXPECT_TRUE(sql->Exec("BEGIN").ok());
    std::string xid = ValueOrDie(sql->Value("SELECT pg_current_xact_id()::text"));
    absl::Status s = sql->Exec(body).status();
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(sql->Exec("COMMIT").ok());
    return xid;
  };
  const std::string big =
      "(SELECT jsonb_build_object('blob', string_agg(md5(i::text), '')) "
      "FROM generate_series(1, 400) i)";

  std::string x1 = tx(R"sql(
    INSERT INTO outbox VALUES
      ('00000000-0000-0000-0000-000000000001', 'order', 'o-1', 'Created', '{"total": 10}',
       '{"trace": "t1"}', '2026-01-02 03:04:05.123456+00', '\x00ff10'),
      ('00000000-0000-0000-0000-000000000002', 'order', 'o-2', 'Created',
       '{"name": "Zoë ✓ 日本"}', NULL, '2026-01-02 03:04:05+00', NULL),
      ('00000000-0000-0000-0000-000000000003', 'user', 'u-1', 'Named', '"just a string"',
       '{}', '1999-12-31 23:59:59.999999+00', '\x'))sql");
  ASSERT_TRUE(
      sql->Exec(
             "BEGIN; INSERT INTO outbox VALUES ('00000000-0000-0000-0000-0000000000ff',"
             " 'x', 'x', 'RolledBack', '{}', NULL, now(), NULL); ROLLBACK")
          .ok());
  std::string x2 =
      tx("INSERT INTO outbox VALUES ('00000000-0000-0000-0000-000000000004', "
         "'order', 'o-1', 'Big', " +
         big + ", NULL, '2026-01-01 00:00:00+00', NULL)");
  ASSERT_TRUE(sql->Exec("ALTER TABLE outbox ADD COLUMN extra text").ok());
  std::string x3 =
      tx("INSERT INTO outbox VALUES ('00000000-0000-0000-0000-000000000005', "
         "'order', 'o-3', 'Widened', '[]', NULL, '2026-01-01 00:00:00+00', NULL, "
         "'more')");
  std::string x4 = tx(R"sql(
    UPDATE outbox SET event_type = 'Touched' WHERE id = '00000000-0000-0000-0000-000000000004';
    DELETE FROM outbox WHERE id = '00000000-0000-0000-0000-000000000003')sql");
  std::string x5 = tx("TRUNCATE outbox");
  std::string x6 = tx(R"sql(
    SELECT pg_logical_emit_message(true, 'outbox', 'in a transaction');
    INSERT INTO outbox VALUES ('00000000-0000-0000-0000-000000000006', 'order', 'o-4',
      'AfterTruncate', '{}', NULL, '2026-01-01 00:00:00+00', NULL, NULL))sql");
  tx("INSERT INTO other VALUES (1, 'not published')");
  std::string x8 = tx(R"sql(
    INSERT INTO outbox VALUES ('00000000-0000-0000-0000-000000000007', 'order', 'o-5',
      'InsertThenDelete', '{}', NULL, '2026-01-01 00:00:00+00', NULL, NULL);
    DELETE FROM outbox WHERE id = '00000000-0000-0000-0000-000000000007')sql");
  Lsn until = ValueOrDie(
      Lsn::Parse(ValueOrDie(sql->Value("SELECT pg_current_wal_insert_lsn()"))));

  StartOptions options;
  options.slot = "s";
  options.publications = {"pub"};
  options.messages = true;
  ASSERT_TRUE(stream->Start(options).ok());
  Rendered got;
  RelationCache cache;
  ASSERT_TRUE(CatchUp(*stream, until, absl::Now() + absl::Seconds(60),
                      [&](const XLogData&, const pgoutput::PgOutputMessage& m) {
                        std::visit(Renderer{got, cache, sends_empty}, m);
                      })
                  .ok());

  const std::string cols8 =
      "id,aggregate_type,aggregate_id,event_type,payload,headers,created_at,blob";
  const std::string cols9 = cols8 + ",extra";
  std::vector<std::string> want = {
      "BEGIN " + x1,
      "RELATION public.outbox " + cols8,
      "INSERT outbox 00000000-0000-0000-0000-000000000001|order|o-1|Created|{\"total\": "
      "10}|"
      "{\"trace\": \"t1\"}|2026-01-02 03:04:05.123456+00|\\x00ff10",
      "INSERT outbox 00000000-0000-0000-0000-000000000002|order|o-2|Created|"
      "{\"name\": \"Zoë ✓ 日本\"}|NULL|2026-01-02 03:04:05+00|NULL",
      "INSERT outbox 00000000-0000-0000-0000-000000000003|user|u-1|Named|\"just a "
      "string\"|"
      "{}|1999-12-31 23:59:59.999999+00|\\x",
      "COMMIT",
      "BEGIN " + x2,
      "INSERT outbox 00000000-0000-0000-0000-000000000004|order|o-1|Big|<12812 "
      "bytes>|NULL|"
      "2026-01-01 00:00:00+00|NULL",
      "COMMIT",
      "BEGIN " + x3,
      "RELATION public.outbox " + cols9,
      "INSERT outbox 00000000-0000-0000-0000-000000000005|order|o-3|Widened|[]|NULL|"
      "2026-01-01 00:00:00+00|NULL|more",
      "COMMIT",
      "BEGIN " + x4,
      "UPDATE outbox 00000000-0000-0000-0000-000000000004|order|o-1|Touched|TOAST|NULL|"
      "2026-01-01 00:00:00+00|NULL|NULL",
      "DELETE-KEY outbox "
      "00000000-0000-0000-0000-000000000003|NULL|NULL|NULL|NULL|NULL|NULL|"
      "NULL|NULL",
      "COMMIT",
      "BEGIN " + x5,
      "RELATION public.outbox " + cols9,
      "TRUNCATE outbox options=0",
      "COMMIT",
      "BEGIN " + x6,
      "MESSAGE 1 outbox in a transaction",
      "RELATION public.outbox " + cols9,
      "INSERT outbox "
      "00000000-0000-0000-0000-000000000006|order|o-4|AfterTruncate|{}|NULL|"
      "2026-01-01 00:00:00+00|NULL|NULL",
      "COMMIT",
      "BEGIN " + x8,
      "INSERT outbox "
      "00000000-0000-0000-0000-000000000007|order|o-5|InsertThenDelete|{}|NULL|"
      "2026-01-01 00:00:00+00|NULL|NULL",
      "DELETE-KEY outbox "
      "00000000-0000-0000-0000-000000000007|NULL|NULL|NULL|NULL|NULL|NULL|"
      "NULL|NULL",
      "COMMIT",
  };
  EXPECT_THAT(got.lines, ElementsAreArray(want));
  // Only PostgreSQL 14 sends the script's transactions on other tables as empty
  // pairs (its one DELETE on another table, and the rolled-back one is not sent).
  if (sends_empty) {
    EXPECT_GT(got.empty_transactions, 0);
  }

  // The TOASTed payload arrived whole.
  ASSERT_EQ(got.long_values.size(), 1u);
  EXPECT_EQ(got.long_values[0], ValueOrDie(sql->Value("SELECT " + big + "::text")));

  // Every commit LSN and end LSN is exactly the commit record in the WAL.
  ASSERT_EQ(got.commits.size(), got.begins.size());
  Lsn previous_end;
  for (size_t i = 0; i < got.commits.size(); ++i) {
    const pgoutput::Commit& c = got.commits[i];
    EXPECT_EQ(got.begins[i].final_lsn, c.commit_lsn);
    EXPECT_EQ(got.begins[i].commit_time, c.commit_time);
    EXPECT_GT(c.commit_lsn, previous_end);
    previous_end = c.end_lsn;
    if (!walinspect) continue;
    auto row = ValueOrDie(sql->Exec(absl::StrCat(
        "SELECT record_type, xid::text, end_lsn::text FROM pg_get_wal_record_info('",
        c.commit_lsn.ToString(), "')")));
    ASSERT_EQ(row.size(), 1u);
    EXPECT_EQ(row[0][0].value_or(""), "COMMIT");
    EXPECT_EQ(row[0][1].value_or(""), std::to_string(got.begins[i].xid));
    EXPECT_EQ(row[0][2].value_or(""), c.end_lsn.ToString());
  }
}

}  // namespace
}  // namespace cdc
