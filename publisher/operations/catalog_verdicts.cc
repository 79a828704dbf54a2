// CatalogVerdicts: the rules of cdc/catalog_facts.h, plus the retained-WAL crossing.
#include "publisher/operations/catalog_verdicts.h"

#include "absl/strings/str_cat.h"

namespace publisher {

CatalogVerdicts::CatalogVerdicts(std::string database, int64_t max_retained_wal,
                                 std::string quoted_publication,
                                 std::vector<std::string> tables,
                                 std::vector<std::string> quoted_tables,
                                 std::string literal_slot, std::string row_filter)
    : database_(std::move(database)),
      max_retained_wal_(max_retained_wal),
      quoted_publication_(std::move(quoted_publication)),
      tables_(std::move(tables)),
      quoted_tables_(std::move(quoted_tables)),
      literal_slot_(std::move(literal_slot)),
      row_filter_(std::move(row_filter)) {}

WatchVerdict CatalogVerdicts::Judge(const CatalogFindings& f) {
  WatchVerdict v;
  for (const cdc::TableFacts& t : f.tables) {
    if (t.exists) continue;
    v.fatal = absl::FailedPreconditionError(absl::StrCat(
        "outbox table ", t.schema, ".", t.table,
        " was dropped while the publisher ran: events written to it after the drop "
        "cannot be published; recreate it (scripts/schema.sql), add it to the "
        "publication, and restart"));
    return v;
  }
  absl::Status pub = cdc::CheckPublication(f.publication, quoted_publication_, tables_,
                                           quoted_tables_, /*create=*/false, row_filter_);
  if (!pub.ok()) {
    v.fatal = absl::FailedPreconditionError(
        absl::StrCat("the publication changed while the publisher ran: ", pub.message()));
    return v;
  }
  // A missing slot is not judged here: a streaming slot cannot be dropped.
  if (f.slot.exists) {
    absl::Status slot =
        cdc::CheckSlot(f.slot, literal_slot_, database_, /*create=*/false);
    if (!slot.ok()) {
      v.fatal = slot;
      return v;
    }
  }
  bool unreserved = f.slot.wal_status == "unreserved";
  if (unreserved && !unreserved_) {
    v.warnings.push_back(absl::StrCat(
        "replication slot \"", f.slot.name,
        "\" is about to lose WAL it still needs (wal_status = unreserved, past "
        "max_slot_wal_keep_size): the publisher is far behind; find why (lag_bytes, "
        "errors) or raise max_slot_wal_keep_size"));
  }
  unreserved_ = unreserved;
  if (!f.slot.retained_bytes) return v;
  int64_t retained = *f.slot.retained_bytes;
  if (retained > max_retained_wal_ && !above_) {
    above_ = true;
    v.warnings.push_back(absl::StrCat(
        "replication slot \"", f.slot.name, "\" retains ", retained,
        " bytes of WAL, more than --max-retained-wal (", max_retained_wal_,
        "): the publisher is behind or its confirmations are stuck; check lag_bytes, "
        "oldest_unacked_age_ms and the brokers, or raise --max-retained-wal"));
  } else if (retained <= max_retained_wal_ && above_) {
    above_ = false;
    v.notes.push_back(absl::StrCat("replication slot \"", f.slot.name, "\" retains ",
                                   retained,
                                   " bytes of WAL again, within --max-retained-wal"));
  }
  return v;
}

}  // namespace publisher
