// Database: the consumer's connection to the service's own PostgreSQL database,
// as the kit needs it. An interface, so that OutboxConsumer is tested with a fake;
// PgDatabase (pg_database.h) is the libpq shell.
#ifndef CONSUMER_DATABASE_H_
#define CONSUMER_DATABASE_H_

#include "absl/status/status.h"
#include "consumer/handler.h"

namespace consumer {

class Database : public Transaction {
 public:
  // Outside Begin()/Commit() each statement commits on its own.
  [[nodiscard]] virtual absl::Status Begin() = 0;
  // kUnavailable when the connection broke: the commit may or may not have
  // happened (the processed-messages table tells, next time).
  [[nodiscard]] virtual absl::Status Commit() = 0;
  // Best effort: a broken connection rolls back by itself.
  virtual void Rollback() = 0;
  // `identifier` as a quoted SQL identifier.
  virtual std::string Identifier(absl::string_view identifier) = 0;
  // Whether the last failure lost the connection (the next statement reconnects):
  // then the database failed, not the record.
  virtual bool lost_connection() const = 0;
};

}  // namespace consumer

#endif  // CONSUMER_DATABASE_H_
