// PgSessionSource: opens replication sessions on the configured PostgreSQL. Every
// session re-checks what the publisher depends on (wal_level, each outbox table and
// its columns, the publication, the slot and its WAL), so a change made while it
// was disconnected is reported before streaming, with the fix.
#ifndef PUBLISHER_POSTGRES_PG_SESSION_H_
#define PUBLISHER_POSTGRES_PG_SESSION_H_

#include <memory>
#include <string>
#include <utility>

#include "common/log.h"
#include "publisher/postgres/postgres_options.h"
#include "publisher/relay/session.h"

namespace publisher {

class PgSessionSource : public SessionSource {
 public:
  // `log` must outlive the source.
  PgSessionSource(PgSessionOptions options, Logger& log)
      : options_(std::move(options)), log_(log) {}

  absl::StatusOr<Session> Open() override;

 private:
  PgSessionOptions options_;
  Logger& log_;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_PG_SESSION_H_
