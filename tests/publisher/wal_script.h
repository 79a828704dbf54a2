// Building blocks of scripted replication streams for the relay's tests: pgoutput
// messages as XLogData frames, for an outbox table (OID 16384) and another table.
#ifndef TESTS_PUBLISHER_WAL_SCRIPT_H_
#define TESTS_PUBLISHER_WAL_SCRIPT_H_

#include <string>
#include <vector>

#include "cdc/framing.h"
#include "cdc/pgoutput.h"
#include "cdc/pgoutput_encoder.h"
#include "tools/harness/schema_outbox_relation.h"

namespace publisher::wal_script {

namespace pg = cdc::pgoutput;
using cdc::Lsn;

constexpr uint32_t kOutboxOid = 16384;
constexpr uint32_t kOtherOid = 16390;

inline std::string W(const pg::PgOutputMessage& m, Lsn data_start = Lsn()) {
  return cdc::BuildXLogData({data_start, Lsn(0), 0, pg::Encode(m)});
}

// The outbox table's Relation message without its optional columns (headers,
// created_at), with `extra` text columns at the end.
inline std::string OutboxRelation(const std::vector<std::string>& extra = {}) {
  pg::Relation r = harness::SchemaOutboxRelation();
  r.columns.resize(5);
  for (const std::string& name : extra) r.columns.push_back({0, name, 25, -1});
  return W(r);
}

inline std::string OtherRelation() {
  return W(
      pg::Relation{std::nullopt, kOtherOid, "public", "other", 'd', {{1, "id", 23, -1}}});
}

inline pg::Value T(std::string s) { return {pg::Value::Kind::kText, std::move(s)}; }

inline std::string Insert(const std::string& id, const std::string& key = "k",
                          uint32_t oid = kOutboxOid) {
  if (oid != kOutboxOid) return W(pg::Insert{std::nullopt, oid, {T(id)}});
  return W(
      pg::Insert{std::nullopt, oid, {T(id), T("order"), T(key), T("Created"), T("{}")}},
      Lsn(0x10));
}

// An outbox INSERT whose key is NULL: it cannot be mapped.
inline std::string UnmappableInsert() {
  return W(
      pg::Insert{std::nullopt,
                 kOutboxOid,
                 {T("x"), T("order"), {pg::Value::Kind::kNull, ""}, T("E"), T("{}")}});
}

inline std::string Begin(uint32_t xid, uint64_t commit) {
  return W(pg::Begin{Lsn(commit), 0, xid});
}
inline std::string Commit(uint64_t commit, uint64_t end) {
  return W(pg::Commit{0, Lsn(commit), Lsn(end), 0});
}
inline std::string Keepalive(uint64_t wal_end) {
  return cdc::BuildKeepalive({Lsn(wal_end), 0, false});
}

}  // namespace publisher::wal_script

#endif  // TESTS_PUBLISHER_WAL_SCRIPT_H_
