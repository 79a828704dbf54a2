// RelationCache: replace-on-update bookkeeping of pgoutput Relation messages.
#include "cdc/relation_cache.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace cdc {

void RelationCache::Apply(pgoutput::Relation relation) {
  uint32_t oid = relation.oid;
  relations_.insert_or_assign(oid, std::move(relation));
}

absl::StatusOr<const pgoutput::Relation*> RelationCache::Find(uint32_t oid) const {
  auto it = relations_.find(oid);
  if (it == relations_.end()) {
    return absl::DataLossError(
        absl::StrCat("change for relation OID ", oid,
                     " arrived before any Relation message describing it"));
  }
  return &it->second;
}

absl::Status RelationCache::CheckTuple(uint32_t oid, const pgoutput::Tuple& tuple) const {
  ASSIGN_OR_RETURN(const pgoutput::Relation* relation, Find(oid));
  if (tuple.size() != relation->columns.size()) {
    return absl::DataLossError(absl::StrCat(
        "tuple for ", relation->schema, ".", relation->name, " has ", tuple.size(),
        " columns; its Relation message declared ", relation->columns.size()));
  }
  return absl::OkStatus();
}

std::optional<size_t> RelationCache::ColumnIndex(const pgoutput::Relation& relation,
                                                 absl::string_view name) {
  for (size_t i = 0; i < relation.columns.size(); ++i) {
    if (relation.columns[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace cdc
