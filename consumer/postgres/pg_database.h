// PgDatabase: Database over one libpq connection (cdc::SqlConnection), made
// again after it breaks. The libpq shell of the consumer kit.
//
// A statement waits at most the answer timeout (30 s): a connection that went
// silent without closing fails, and is made again, instead of stalling
// the consumer forever.
#ifndef CONSUMER_POSTGRES_PG_DATABASE_H_
#define CONSUMER_POSTGRES_PG_DATABASE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/postgres/sql_connection.h"
#include "consumer/database.h"

namespace consumer {

class PgDatabase : public Database {
 public:
  // Connects now, so that a wrong conninfo fails at start.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgDatabase>> Connect(
      std::string conninfo, std::string application_name = "outbox-consumer");

  absl::Status Begin() override;
  absl::Status Commit() override;
  void Rollback() override;
  absl::StatusOr<Rows> Query(const std::string& sql) override;
  std::string Literal(absl::string_view text) override;
  std::string Identifier(absl::string_view identifier) override;
  bool lost_connection() const override { return lost_; }

 private:
  PgDatabase(std::string conninfo, std::string application_name)
      : conninfo_(std::move(conninfo)), application_name_(std::move(application_name)) {}
  absl::Status EnsureConnected();
  // Notes whether `s` lost the connection (then drops it); returns `s`.
  absl::Status Check(absl::Status s);

  std::string conninfo_;
  std::string application_name_;
  std::unique_ptr<common::SqlConnection> conn_;
  bool lost_ = false;
};

}  // namespace consumer

#endif  // CONSUMER_POSTGRES_PG_DATABASE_H_
