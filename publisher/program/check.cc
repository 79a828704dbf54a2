// RunChecks: the I/O behind --check.
#include "publisher/program/check.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cdc/key_shard.h"
#include "cdc/postgres/catalog.h"
#include "common/log.h"
#include "common/postgres/conninfo.h"
#include "common/postgres/sql_connection.h"
#include "common/status_macros.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/program/options.h"
#include "publisher/program/preflight.h"

namespace publisher {
namespace {

constexpr int kConnectTimeoutSeconds = 10;
constexpr absl::Duration kAnswerTimeout = absl::Seconds(15);
constexpr absl::Duration kKafkaTimeout = absl::Seconds(10);
// Generated keys tried against the shards' row filters.
constexpr int kShardSamples = 10000;

// The servers of a multi-host --pg other than the primary: a standby's copy of
// the slot is what a promotion will stream from.
std::vector<StandbyFindings> ReadOtherServers(const Config& config) {
  std::vector<StandbyFindings> out;
  absl::StatusOr<std::vector<std::string>> hosts = outbox::SplitHosts(config.pg);
  if (!hosts.ok() || hosts->size() < 2) return out;
  for (const std::string& conninfo : *hosts) {
    StandbyFindings f;
    absl::StatusOr<outbox::ConnParams> params = outbox::ParseConninfo(conninfo);
    std::string host = "?", port = "5432";
    for (const auto& [k, v] : params.ok() ? *params : outbox::ConnParams{}) {
      if (k == "host" || (k == "hostaddr" && host == "?")) host = v;
      if (k == "port" && !v.empty()) port = v;
    }
    f.server = absl::StrCat(host, ":", port);
    absl::StatusOr<std::unique_ptr<outbox::SqlConnection>> sql =
        outbox::SqlConnection::Connect(conninfo, outbox::SqlConnection::Mode::kPlain,
                                       "outbox-publisher --check",
                                       kConnectTimeoutSeconds);
    f.connect = sql.status();
    if (sql.ok()) {
      (*sql)->set_answer_timeout(kAnswerTimeout);
      absl::StatusOr<outbox::SqlRows> r =
          (*sql)->Query("SELECT pg_catalog.pg_is_in_recovery()");
      if (!r.ok()) {
        f.connect = r.status();
      } else {
        f.in_recovery = !r->empty() && (*r)[0][0].value_or("f") == "t";
        if (!f.in_recovery) continue;  // The primary: judged above.
        f.slot = cdc::ReadSlotFacts(**sql, config.slot);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

// Sample keys of the key column's type: generated ones, NULL, and (some of) the
// table's own.
std::string SampleKeys(outbox::SqlConnection& c, const TableName& table,
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

absl::StatusOr<ShardCoverage> ReadCoverage(outbox::SqlConnection& c, const Config& config,
                                           const TableName& table,
                                           const ShardFindings& shards) {
  ASSIGN_OR_RETURN(
      outbox::SqlRows type,
      c.Query(absl::StrCat(
          "SELECT pg_catalog.format_type(atttypid, atttypmod) FROM "
          "pg_catalog.pg_attribute WHERE attrelid = ",
          c.Literal(absl::StrCat(c.Quote(table.schema), ".", c.Quote(table.table))),
          "::regclass AND attname = ", c.Literal(config.columns.key),
          " AND NOT attisdropped")));
  if (type.empty() || !type[0][0]) {
    return absl::NotFoundError(absl::StrCat("no column ", config.columns.key));
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
  std::string samples = SampleKeys(c, table, config.columns.key, *type[0][0]);
  ASSIGN_OR_RETURN(
      outbox::SqlRows r,
      c.Query(cdc::ShardCoverageQuery(filters, c.Quote(config.columns.key), samples)));
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

ShardFindings ReadShards(outbox::SqlConnection& c, const Config& config) {
  ShardFindings shards;
  for (int i = 1; i <= config.shard->count; ++i) {
    cdc::KeyShard shard{i, config.shard->count};
    shards.publications.push_back(cdc::ReadPublicationFacts(
        c, cdc::ShardedName(config.shard_publication_base, shard)));
    shards.slots.push_back(
        cdc::ReadSlotFacts(c, cdc::ShardedName(config.shard_slot_base, shard)));
  }
  for (const TableName& t : config.tables)
    shards.coverage.push_back(ReadCoverage(c, config, t, shards));
  return shards;
}

PgFindings ReadPostgres(const Config& config) {
  PgFindings pg;
  absl::StatusOr<std::unique_ptr<outbox::SqlConnection>> sql =
      outbox::SqlConnection::Connect(config.pg, outbox::SqlConnection::Mode::kPlain,
                                     "outbox-publisher --check", kConnectTimeoutSeconds);
  pg.connect = sql.status();
  if (!sql.ok()) return pg;
  outbox::SqlConnection& c = **sql;
  // A connection that goes silent fails each remaining check in bounded time.
  c.set_answer_timeout(kAnswerTimeout);
  pg.server = cdc::ReadServerFacts(c);
  pg.replication_connect =
      outbox::SqlConnection::Connect(config.pg, outbox::SqlConnection::Mode::kReplication,
                                     "outbox-publisher --check", kConnectTimeoutSeconds)
          .status();
  std::vector<std::string> tables;
  for (const TableName& t : config.tables) {
    pg.tables.push_back(cdc::ReadTableFacts(c, t.schema, t.table));
    tables.push_back(t.qualified());
  }
  pg.publication = cdc::ReadPublicationFacts(c, config.publication);
  pg.slot = cdc::ReadSlotFacts(c, config.slot);
  pg.quoted_publication = c.Quote(config.publication);
  pg.quoted_tables = cdc::QuoteTables(c, tables);
  pg.literal_slot = c.Literal(config.slot);
  pg.others = ReadOtherServers(config);
  pg.quoted_key_column = c.Quote(config.columns.key);
  if (config.shard && pg.server.ok() && pg.server->version_num >= 150000)
    pg.shards = ReadShards(c, config);
  return pg;
}

KafkaFindings ReadKafka(const Config& config) {
  KafkaFindings kafka;
  // Only errors: librdkafka's retries of an unreachable broker are not checks.
  outbox::Logger quiet(outbox::LogFormat::kText, outbox::LogLevel::kError);
  absl::StatusOr<std::unique_ptr<KafkaSink>> sink =
      KafkaSink::Create(KafkaOptionsFrom(config), quiet);
  if (!sink.ok()) {
    kafka.reachable = sink.status();
    return kafka;
  }
  absl::StatusOr<KafkaSink::ClusterMetadata> md =
      (*sink)->ReadMetadata(kKafkaTimeout, /*all_topics=*/true);
  kafka.reachable = md.status();
  if (md.ok()) {
    kafka.brokers = md->brokers;
    kafka.topics = std::move(md->topics);
  }
  return kafka;
}

}  // namespace

bool RunChecks(const Config& config, std::ostream& out) {
  PgFindings pg = ReadPostgres(config);
  KafkaFindings kafka = ReadKafka(config);
  std::vector<CheckLine> lines = JudgePostgres(config, pg);
  for (CheckLine& l : JudgeKafka(config, pg, kafka)) lines.push_back(std::move(l));
  int failed = 0;
  for (const CheckLine& l : lines) {
    out << FormatCheckLine(l) << "\n";
    failed += !l.ok;
  }
  if (failed == 0) {
    out << "all " << lines.size() << " checks passed\n";
  } else {
    out << failed << " of " << lines.size() << " checks failed\n";
  }
  out.flush();
  return failed == 0;
}

}  // namespace publisher
