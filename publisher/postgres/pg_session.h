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
#include "publisher/delivery/sink.h"
#include "publisher/postgres/postgres_options.h"
#include "publisher/relay/session.h"

namespace publisher {

class PgSessionSource : public SessionSource {
 public:
  // `log` must outlive the source, and so must `republish_sinks`: the producer
  // that closes a gap from the outbox table (--on-slot-gap=republish); may be
  // null otherwise.
  PgSessionSource(PgSessionOptions options, common::Logger& log,
                  SinkFactory* republish_sinks = nullptr)
      : options_(std::move(options)), log_(log), republish_sinks_(republish_sinks) {}

  absl::StatusOr<Session> Open() override;

 private:
  PgSessionOptions options_;
  common::Logger& log_;
  SinkFactory* republish_sinks_;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_PG_SESSION_H_
