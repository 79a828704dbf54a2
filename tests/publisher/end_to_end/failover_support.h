// What the failover and standby tests share: a steady writer of outbox rows, one
// per transaction, that reconnects after any failure (so a multi-host conninfo
// with target_session_attrs=read-write follows a promotion), and the count of the
// rows that never reached Kafka once the slot has caught up.
#ifndef TESTS_PUBLISHER_END_TO_END_FAILOVER_SUPPORT_H_
#define TESTS_PUBLISHER_END_TO_END_FAILOVER_SUPPORT_H_

#include <libpq-fe.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/publisher/publisher_fixture.h"

namespace publisher {

// Commits one outbox row per transaction through `conninfo` until stopped,
// reconnecting (a multi-host conninfo finds the new primary) after any failure.
class Writer {
 public:
  explicit Writer(std::string conninfo) : conninfo_(std::move(conninfo)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Writer() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int committed() const { return committed_; }

 private:
  void Loop() {
    PGconn* conn = nullptr;
    for (int n = 0; !stop_; ++n) {
      if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
        if (conn != nullptr) PQfinish(conn);
        conn = PQconnectdb(conninfo_.c_str());
        if (PQstatus(conn) != CONNECTION_OK) {
          absl::SleepFor(absl::Milliseconds(100));
          continue;
        }
      }
      PGresult* r =
          PQexec(conn, absl::StrCat("INSERT INTO outbox (aggregate_type, aggregate_id, "
                                    "event_type, payload) VALUES ('order', 'o-",
                                    n % 8, "', 'Placed', '{\"n\": ", n, "}')")
                           .c_str());
      bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
      PQclear(r);
      if (ok) {
        ++committed_;
      } else {
        PQfinish(conn);
        conn = nullptr;
      }
      absl::SleepFor(absl::Milliseconds(4));
    }
    if (conn != nullptr) PQfinish(conn);
  }

  std::string conninfo_;
  std::atomic<bool> stop_{false};
  std::atomic<int> committed_{0};
  std::thread thread_;
};

// Once `slot_server`'s slot outbox_publisher is confirmed past everything
// `primary` wrote: the primary's rows that `consumer` never received (waiting
// for stragglers), with where they lie on stderr (the writer's n, commit time).
inline size_t UnpublishedRows(PgCluster& slot_server, PgCluster& primary,
                              Consumer& consumer) {
  Lsn end = ValueOrDie(
      Lsn::Parse(ValueOrDie(primary.Value("SELECT pg_current_wal_insert_lsn()::text"))));
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> c = slot_server.Value(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE "
            "slot_name = 'outbox_publisher'");
        return c.ok() && ValueOrDie(Lsn::Parse(*c)) >= end;
      },
      absl::Seconds(120)))
      << "the slot did not catch up";
  auto rows =
      ValueOrDie(primary.Exec("SELECT id::text, coalesce(payload->>'n', '?') || ' ' || "
                              "created_at::text FROM outbox ORDER BY created_at"));
  size_t lost = 0;
  WaitFor(
      [&] {
        std::set<std::string> ids = PublishedIds(consumer);
        lost = 0;
        for (const auto& row : rows) lost += ids.count(*row[0]) == 0;
        return lost == 0;
      },
      absl::Seconds(90));
  std::set<std::string> ids = PublishedIds(consumer);
  bool published = true;
  for (const auto& row : rows) {
    if ((ids.count(*row[0]) > 0) == published) continue;
    published = !published;
    std::cerr << (published ? "published" : "lost") << " from row " << *row[1] << "\n";
  }
  std::cerr << rows.size() << " rows on the primary, " << consumer.Count() << " records, "
            << lost << " lost\n";
  return lost;
}

}  // namespace publisher

#endif  // TESTS_PUBLISHER_END_TO_END_FAILOVER_SUPPORT_H_
