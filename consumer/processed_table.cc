// ProcessedTable: its DDL, the claim and the pruning, as SQL.
#include "consumer/processed_table.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace consumer {
namespace {

// Rows deleted per statement: short locks on a busy table.
constexpr int kPruneBatch = 5000;

}  // namespace

std::string ProcessedTable::Quoted(Database& db) const {
  std::string quoted;
  for (absl::string_view part : absl::StrSplit(name_, '.')) {
    absl::StrAppend(&quoted, quoted.empty() ? "" : ".", db.Identifier(part));
  }
  return quoted;
}

absl::Status ProcessedTable::Create(Database& db) {
  std::string t = Quoted(db);
  std::string index = db.Identifier(absl::StrCat(
      std::vector<std::string>(absl::StrSplit(name_, '.')).back(), "_prune"));
  return db.Command(absl::StrCat(
      "CREATE TABLE IF NOT EXISTS ", t,
      " (id text PRIMARY KEY, topic text NOT NULL, kafka_partition integer NOT NULL,"
      " kafka_offset bigint NOT NULL,"
      " processed_at timestamptz NOT NULL DEFAULT now());"
      " CREATE INDEX IF NOT EXISTS ",
      index, " ON ", t, " (topic, kafka_partition, processed_at)"));
}

absl::StatusOr<bool> ProcessedTable::Claim(Database& db, const std::string& id,
                                           const InboundRecord& r) {
  absl::StatusOr<Rows> rows = db.Query(absl::StrCat(
      "INSERT INTO ", Quoted(db), " (id, topic, kafka_partition, kafka_offset) VALUES (",
      db.Literal(id), ", ", db.Literal(r.source.topic), ", ", r.source.partition, ", ",
      r.offset, ") ON CONFLICT (id) DO NOTHING RETURNING 1"));
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

absl::StatusOr<int64_t> ProcessedTable::Prune(Database& db, const TopicPartition& tp,
                                              int64_t committed_offset,
                                              absl::Duration retention) {
  std::string t = Quoted(db);
  std::string batch =
      absl::StrCat("WITH gone AS (DELETE FROM ", t, " WHERE ctid IN (SELECT ctid FROM ",
                   t, " WHERE topic = ", db.Literal(tp.topic),
                   " AND kafka_partition = ", tp.partition, " AND kafka_offset < ",
                   committed_offset, " AND processed_at < now() - make_interval(secs => ",
                   absl::ToDoubleSeconds(retention), ") LIMIT ", kPruneBatch,
                   ") RETURNING 1) SELECT count(*) FROM gone");
  int64_t total = 0;
  while (true) {
    absl::StatusOr<Rows> rows = db.Query(batch);
    if (!rows.ok()) return rows.status();
    int64_t n = 0;
    if (!rows->empty() && !(*rows)[0].empty() && (*rows)[0][0]) {
      n = std::stoll(*(*rows)[0][0]);
    }
    total += n;
    if (n < kPruneBatch) return total;
  }
}

}  // namespace consumer
