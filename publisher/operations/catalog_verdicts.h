// CatalogVerdicts: judges what the slot watcher reads from the catalog while the
// publisher streams (--max-retained-wal). Pure: the caller
// reads the facts (cdc/postgres/catalog.h) and acts on the verdict.
//   - the slot retains more WAL than --max-retained-wal: a warning, once per
//     crossing (and a note when it falls back below);
//   - the slot's wal_status is "unreserved": a warning, once, that it is about to
//     lose WAL;
//   - the slot lost WAL, an outbox table or the publication was dropped, or the
//     publication no longer publishes the tables' INSERTs: fatal, with the fix;
//     the run stops instead of finding out at the next restart.
#ifndef PUBLISHER_OPERATIONS_CATALOG_VERDICTS_H_
#define PUBLISHER_OPERATIONS_CATALOG_VERDICTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cdc/catalog_facts.h"

namespace publisher {

struct CatalogFindings {
  cdc::SlotFacts slot;
  std::vector<cdc::TableFacts> tables;
  cdc::PublicationFacts publication;
};

struct WatchVerdict {
  absl::Status fatal;                 // Not OK: stop the run with it.
  std::vector<std::string> warnings;  // Log each at warn level.
  std::vector<std::string> notes;     // Log each at info level.
};

class CatalogVerdicts {
 public:
  // `quoted_*`: the same names quoted for SQL, for the fixes the messages name.
  // `row_filter`: a shard's (cdc/key_shard.h), which its publication must have;
  // "" for an unsharded publisher, whose publication must filter nothing.
  CatalogVerdicts(std::string database, int64_t max_retained_wal,
                  std::string quoted_publication, std::vector<std::string> tables,
                  std::vector<std::string> quoted_tables, std::string literal_slot,
                  std::string row_filter = "");

  WatchVerdict Judge(const CatalogFindings& findings);

 private:
  std::string database_;
  int64_t max_retained_wal_;
  std::string quoted_publication_;
  std::vector<std::string> tables_, quoted_tables_;
  std::string literal_slot_;
  std::string row_filter_;
  bool above_ = false;       // Retained WAL is above the limit (warned).
  bool unreserved_ = false;  // wal_status was unreserved (warned).
};

}  // namespace publisher

#endif  // PUBLISHER_OPERATIONS_CATALOG_VERDICTS_H_
