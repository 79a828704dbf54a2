// ReadPgFindings: the libpq reads behind --check.
#include "publisher/postgres/preflight_reads.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cdc/key_shard.h"
#include "cdc/postgres/catalog.h"
#include "common/postgres/conninfo.h"
#include "common/postgres/sql_connection.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

constexpr int kConnectTimeoutSeconds = 10;
constexpr absl::Duration kAnswerTimeout = absl::Seconds(15);
// Generated keys tried against the shards' row filters.
constexpr int kShardSamples = 10000;

// The servers of a multi-host --pg other than the primary: a standby's copy of
// the slot is what a promotion will stream from.
std::vector<StandbyFindings> ReadOtherServers(const std::string& conninfo,
                                              const PreflightOptions& options) {
  std::vector<StandbyFindings> out;
  absl::StatusOr<std::vector<std::string>> hosts = common::SplitHosts(conninfo);
  if (!hosts.ok() || hosts->size() < 2) return out;
  for (const std::string& host_conninfo : *hosts) {
    StandbyFindings f;
    absl::StatusOr<common::ConnParams> params = common::ParseConninfo(host_conninfo);
    std::string host = "?", port = "5432";
    for (const auto& [k, v] : params.ok() ? *params : common::ConnParams{}) {
      if (k == "host" || (k == "hostaddr" && host == "?")) host = v;
      if (k == "port" && !v.empty()) port = v;
    }
    f.server = absl::StrCat(host, ":", port);
    absl::StatusOr<std::unique_ptr<common::SqlConnection>> sql =
        common::SqlConnection::Connect(host_conninfo, common::SqlConnection::Mode::kPlain,
                                       "outbox-publisher --check",
                                       kConnectTimeoutSeconds);
    f.connect = sql.status();
    if (sql.ok()) {
      (*sql)->set_answer_timeout(kAnswerTimeout);
      absl::StatusOr<common::SqlRows> r =
          (*sql)->Query("SELECT pg_catalog.pg_is_in_recovery()");
      if (!r.ok()) {
        f.connect = r.status();
      } else {
        f.in_recovery = !r->empty() && (*r)[0][0].value_or("f") == "t";
        if (!f.in_recovery) continue;  // The primary: judged above.
        f.slot = cdc::ReadSlotFacts(**sql, options.slot);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

// A standby's settings that keep its slot valid, and the primary's wal_level
// through --pg-primary.
PublishingStandbyFindings ReadStandby(common::SqlConnection& c,
                                      const PreflightOptions& options) {
  PublishingStandbyFindings f;
  absl::StatusOr<common::SqlRows> r = c.Query(
      "SELECT current_setting('hot_standby_feedback'), "
      "current_setting('primary_slot_name')");
  if (r.ok() && r->size() == 1 && (*r)[0].size() == 2) {
    f.hot_standby_feedback = (*r)[0][0].value_or("off") == "on";
    f.primary_slot_name = (*r)[0][1].value_or("");
  }
  if (options.pg_primary.empty()) return f;
  absl::StatusOr<std::unique_ptr<common::SqlConnection>> primary =
      common::SqlConnection::Connect(options.pg_primary,
                                     common::SqlConnection::Mode::kPlain,
                                     "outbox-publisher --check", kConnectTimeoutSeconds);
  if (!primary.ok()) {
    f.primary_wal_level = primary.status();
    return f;
  }
  (*primary)->set_answer_timeout(kAnswerTimeout);
  absl::StatusOr<common::SqlRows> level =
      (*primary)->Query("SELECT current_setting('wal_level')");
  if (!level.ok()) {
    f.primary_wal_level = level.status();
  } else if (level->size() == 1 && !(*level)[0].empty() && (*level)[0][0]) {
    f.primary_wal_level = *(*level)[0][0];
  }
  return f;
}

// Sample keys of the key column's type: generated ones, NULL, and (some of) the
// table's own.
std::string SampleKeys(common::SqlConnection& c, const TableName& table,
                       const std::string& key_column, const std::string& type) {
  std::string generated;
  if (type == "text" || absl::StartsWith(type, "character") || type == "name") {
    generated = "SELECT ('key-' || g)::" + type;
  } else if (type == "uuid") {
    generated = "SELECT md5(g::text)::uuid";
  } else if (type == "smallint" || type == "integer" || type == "bigint" ||
             absl::StartsWith(type, "numeric")) {
    generated = "SELECT (g % 32000)::" + type;
  }
  std::string quoted_table =
      absl::StrCat(c.Quote(table.schema), ".", c.Quote(table.table));
  std::string samples =
      absl::StrCat("SELECT NULL::", type, " UNION ALL (SELECT DISTINCT ",
                   c.Quote(key_column), " FROM ", quoted_table, " LIMIT 10000)");
  if (!generated.empty()) {
    samples = absl::StrCat(generated, " FROM generate_series(1, ", kShardSamples,
                           ") AS g UNION ALL ", samples);
  }
  return samples;
}

absl::StatusOr<ShardCoverage> ReadCoverage(common::SqlConnection& c,
                                           const PreflightOptions& options,
                                           const TableName& table,
                                           const ShardFindings& shards) {
  ASSIGN_OR_RETURN(
      common::SqlRows type,
      c.Query(absl::StrCat(
          "SELECT pg_catalog.format_type(atttypid, atttypmod) FROM "
          "pg_catalog.pg_attribute WHERE attrelid = ",
          c.Literal(absl::StrCat(c.Quote(table.schema), ".", c.Quote(table.table))),
          "::regclass AND attname = ", c.Literal(options.columns.key),
          " AND NOT attisdropped")));
  if (type.empty() || !type[0][0]) {
    return absl::NotFoundError(absl::StrCat("no column ", options.columns.key));
  }
  std::vector<std::string> filters;
  for (const auto& p : shards.publications) {
    if (!p.ok() || !p->exists) continue;
    for (size_t i = 0; i < p->tables.size(); ++i) {
      if (p->tables[i] != table.qualified()) continue;
      // No filter publishes every row.
      filters.push_back(i < p->row_filters.size() && !p->row_filters[i].empty()
                            ? p->row_filters[i]
                            : "true");
    }
  }
  std::string samples = SampleKeys(c, table, options.columns.key, *type[0][0]);
  ASSIGN_OR_RETURN(
      common::SqlRows r,
      c.Query(cdc::ShardCoverageQuery(filters, c.Quote(options.columns.key), samples)));
  ShardCoverage coverage;
  auto number = [](const std::optional<std::string>& v) {
    int64_t n = 0;
    if (v) (void)absl::SimpleAtoi(*v, &n);
    return n;
  };
  coverage.unselected = number(r[0][0]);
  coverage.repeated = number(r[0][1]);
  coverage.unselected_example = r[0][2];
  coverage.repeated_example = r[0][3];
  coverage.samples = number(r[0][4]);
  return coverage;
}

ShardFindings ReadShards(common::SqlConnection& c, const PreflightOptions& options) {
  ShardFindings shards;
  for (int i = 1; i <= options.shard->count; ++i) {
    cdc::KeyShard shard{i, options.shard->count};
    shards.publications.push_back(cdc::ReadPublicationFacts(
        c, cdc::ShardedName(options.shard_publication_base, shard)));
    shards.slots.push_back(
        cdc::ReadSlotFacts(c, cdc::ShardedName(options.shard_slot_base, shard)));
  }
  for (const TableName& t : options.tables)
    shards.coverage.push_back(ReadCoverage(c, options, t, shards));
  return shards;
}

}  // namespace

PgFindings ReadPgFindings(const std::string& conninfo, const PreflightOptions& options) {
  PgFindings pg;
  absl::StatusOr<std::unique_ptr<common::SqlConnection>> sql =
      common::SqlConnection::Connect(conninfo, common::SqlConnection::Mode::kPlain,
                                     "outbox-publisher --check", kConnectTimeoutSeconds);
  pg.connect = sql.status();
  if (!sql.ok()) return pg;
  common::SqlConnection& c = **sql;
  // A connection that goes silent fails each remaining check in bounded time.
  c.set_answer_timeout(kAnswerTimeout);
  pg.server = cdc::ReadServerFacts(c);
  pg.replication_connect =
      common::SqlConnection::Connect(conninfo, common::SqlConnection::Mode::kReplication,
                                     "outbox-publisher --check", kConnectTimeoutSeconds)
          .status();
  std::vector<std::string> tables;
  for (const TableName& t : options.tables) {
    pg.tables.push_back(cdc::ReadTableFacts(c, t.schema, t.table));
    tables.push_back(t.qualified());
  }
  pg.publication = cdc::ReadPublicationFacts(c, options.publication);
  pg.slot = cdc::ReadSlotFacts(c, options.slot);
  pg.quoted_publication = c.Quote(options.publication);
  pg.quoted_tables = cdc::QuoteTables(c, tables);
  pg.literal_slot = c.Literal(options.slot);
  pg.others = ReadOtherServers(conninfo, options);
  pg.quoted_key_column = c.Quote(options.columns.key);
  if (options.shard && pg.server.ok() && pg.server->version_num >= 150000)
    pg.shards = ReadShards(c, options);
  if (pg.server.ok() && pg.server->in_recovery) pg.standby = ReadStandby(c, options);
  return pg;
}

}  // namespace publisher
