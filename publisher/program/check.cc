// RunChecks: the I/O behind --check.
#include "publisher/program/check.h"

#include "absl/strings/str_cat.h"
#include "cdc/postgres/catalog.h"
#include "common/log.h"
#include "common/postgres/conninfo.h"
#include "common/postgres/sql_connection.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/program/options.h"
#include "publisher/program/preflight.h"

namespace publisher {
namespace {

constexpr int kConnectTimeoutSeconds = 10;
constexpr absl::Duration kAnswerTimeout = absl::Seconds(15);
constexpr absl::Duration kKafkaTimeout = absl::Seconds(10);

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
