// OutboxRows: DECLARE ... CURSOR, FETCH, CLOSE.
#include "publisher/postgres/outbox_rows.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

constexpr int kBatch = 1000;

}  // namespace

absl::StatusOr<std::unique_ptr<OutboxRows>> OutboxRows::Open(
    common::SqlConnection& sql, const cdc::pgoutput::Relation& relation,
    std::optional<uint64_t> published_below_xid) {
  std::vector<std::string> columns;
  for (const auto& c : relation.columns) columns.push_back("t." + sql.Quote(c.name));
  std::string table = absl::StrCat(sql.Quote(relation.schema), ".", sql.Quote(relation.name));
  std::string where;
  if (published_below_xid) {
    // The row's xmin widened with the epoch of this snapshot's xmax (x), and moved
    // one epoch back if that lands at or past x (it then belongs to the last one).
    constexpr char kFull[] = "(((s.x >> 32) << 32) + t.xmin::text::bigint)";
    where = absl::StrCat(" WHERE ", kFull, " - CASE WHEN ", kFull,
                         " >= s.x THEN 4294967296 ELSE 0 END >= ", *published_below_xid);
  }
  std::string cursor = absl::StrCat("outbox_republish_", relation.oid);
  RETURN_IF_ERROR(sql.Command(absl::StrCat(
      "DECLARE ", cursor, " NO SCROLL CURSOR FOR SELECT ", absl::StrJoin(columns, ", "),
      " FROM ", table,
      " t, (SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())"
      "::text::bigint AS x) s",
      where,
      // The order in which they were most likely committed: per key, an older
      // event goes first.
      " ORDER BY t.xmin::text::bigint")));
  return std::unique_ptr<OutboxRows>(new OutboxRows(sql, std::move(cursor)));
}

OutboxRows::~OutboxRows() {
  if (!done_) sql_.Command(absl::StrCat("CLOSE ", cursor_)).IgnoreError();
}

absl::StatusOr<std::vector<cdc::pgoutput::Tuple>> OutboxRows::Next() {
  std::vector<cdc::pgoutput::Tuple> batch;
  if (done_) return batch;
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql_.Query(absl::StrCat("FETCH ", kBatch, " FROM ", cursor_)));
  for (const auto& row : rows) {
    cdc::pgoutput::Tuple tuple;
    for (const auto& v : row) {
      tuple.push_back(v ? cdc::pgoutput::Value{cdc::pgoutput::Value::Kind::kText, *v}
                        : cdc::pgoutput::Value{cdc::pgoutput::Value::Kind::kNull, ""});
    }
    batch.push_back(std::move(tuple));
  }
  if (batch.empty()) {
    done_ = true;
    RETURN_IF_ERROR(sql_.Command(absl::StrCat("CLOSE ", cursor_)));
  }
  return batch;
}

}  // namespace publisher
