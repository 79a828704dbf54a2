// PgSessionSource: opens replication sessions on the configured PostgreSQL. Every
// session re-checks what the publisher depends on (wal_level, each outbox table and
// its columns, the publication, the slot and its WAL), so a change made while it
// was disconnected is reported before streaming, with the fix.
#ifndef PUBLISHER_PG_SESSION_H_
#define PUBLISHER_PG_SESSION_H_

#include <memory>
#include <string>

#include "publisher/config.h"
#include "publisher/log.h"
#include "publisher/supervisor.h"

namespace publisher {

class PgSessionSource : public SessionSource {
 public:
  // `config` and `log` must outlive the source.
  PgSessionSource(const Config& config, Logger& log) : config_(config), log_(log) {}

  absl::StatusOr<Session> Open() override;

 private:
  const Config& config_;
  Logger& log_;
};

}  // namespace publisher

#endif  // PUBLISHER_PG_SESSION_H_
