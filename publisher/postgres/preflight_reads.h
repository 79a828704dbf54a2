// What --check reads from PostgreSQL (publisher/operations/preflight.h judges it):
// the server's settings, the tables, the publication, the slot, the other hosts of
// a multi-host conninfo and, with --shard, every shard's publication and slot and
// which keys their row filters select. Reads only; creates nothing.
#ifndef PUBLISHER_POSTGRES_PREFLIGHT_READS_H_
#define PUBLISHER_POSTGRES_PREFLIGHT_READS_H_

#include <string>

#include "publisher/operations/preflight.h"

namespace publisher {

// Every read that fails is kept in the findings as its status.
PgFindings ReadPgFindings(const std::string& conninfo, const PreflightOptions& options);

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_PREFLIGHT_READS_H_
