// A steady writer of outbox rows, one per transaction, for the failover and
// standby tests: it reconnects after any failure, so a multi-host conninfo with
// target_session_attrs=read-write follows a promotion.
#ifndef TESTS_PUBLISHER_END_TO_END_STEADY_WRITER_H_
#define TESTS_PUBLISHER_END_TO_END_STEADY_WRITER_H_

#include <libpq-fe.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

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

}  // namespace publisher

#endif  // TESTS_PUBLISHER_END_TO_END_STEADY_WRITER_H_
