// The shapes of the tables a pgoutput stream has described, keyed by relation OID.
//
// pgoutput sends a Relation message before a table's first change in each session
// and again after any schema change (ALTER TABLE ... ADD COLUMN, a rename, ...).
// A new message replaces the old entry whole: merging would pair new tuples with
// stale column names.
#ifndef CDC_RELATION_CACHE_H_
#define CDC_RELATION_CACHE_H_

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdc/pgoutput.h"

namespace cdc {

class RelationCache {
 public:
  // Records `relation`, replacing any earlier shape with the same OID.
  void Apply(pgoutput::Relation relation);

  // The latest shape of `oid`. kDataLoss if no Relation message described it: the
  // server always sends one before a change, so its absence means a broken stream.
  // The pointer is valid until the next Apply() or Clear().
  [[nodiscard]] absl::StatusOr<const pgoutput::Relation*> Find(uint32_t oid) const;

  // Checks that `tuple` matches the cached shape of `oid` column for column.
  [[nodiscard]] absl::Status CheckTuple(uint32_t oid, const pgoutput::Tuple& tuple) const;

  // Index of the column called `name` in `relation`, if any.
  static std::optional<size_t> ColumnIndex(const pgoutput::Relation& relation,
                                           absl::string_view name);

  // Forgets everything: a new replication session starts with no shapes.
  void Clear() { relations_.clear(); }
  size_t size() const { return relations_.size(); }

 private:
  absl::flat_hash_map<uint32_t, pgoutput::Relation> relations_;
};

}  // namespace cdc

#endif  // CDC_RELATION_CACHE_H_
