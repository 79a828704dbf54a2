// Supervisor: keeps the relay running across the failures that pass. It opens a
// replication session, runs the relay on it, and when the session ends:
//   - the connection was lost (server restart, pg_terminate_backend, network):
//     reconnect with capped exponential backoff and jitter, resume from the slot;
//   - another connection holds the slot ("is active for PID"): wait and retry, so
//     two publishers on one slot form a hot-standby pair;
//   - the producer session must end (it failed fatally, or a delivery failed or
//     was not proven stored): recreate it and rewind to the slot (the new
//     session re-reads everything unconfirmed: duplicates, never loss);
//   - anything else (a halting permanent failure, a broken outbox table, a
//     dropped publication): stop with that error.
// Before the first session has started, only the standby case is retried: a bad
// environment at start is the operator's to fix (exit 2).
#ifndef PUBLISHER_RELAY_SUPERVISOR_H_
#define PUBLISHER_RELAY_SUPERVISOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/log.h"
#include "publisher/delivery/sink.h"
#include "publisher/relay/relay.h"
#include "publisher/relay/relay_monitor.h"
#include "publisher/relay/session.h"

namespace publisher {

struct SupervisorOptions {
  absl::Duration backoff_initial = absl::Milliseconds(200);
  absl::Duration backoff_max = absl::Seconds(30);
  absl::Duration standby_retry = absl::Seconds(2);
};

struct SupervisorResult {
  absl::Status status;
  bool started = false;  // Whether any session started streaming.
};

class Supervisor {
 public:
  // Sleeps for a duration unless `stop` is set first.
  using Sleep = std::function<void(absl::Duration, const std::atomic<bool>& stop)>;

  Supervisor(SupervisorOptions options, SessionSource& sessions, SinkFactory& sinks,
             Relay& relay, outbox::Logger& log, Sleep sleep);

  // Runs until `stop` is set (OK) or an error that retrying cannot cure.
  SupervisorResult Run(const std::atomic<bool>& stop);

  // Where reconnects are counted and what the supervisor does while not streaming
  // is told (/healthz's reason); not owned, may be null. Set before Run.
  void set_monitor(RelayMonitor* monitor) { monitor_ = monitor; }

 private:
  // Not streaming, and why: tells the monitor `reason`, logs `warning` with `cause`,
  // the attempt and the wait, then waits `wait` (or until `stop`).
  void WaitToRetry(absl::string_view warning, const std::string& reason,
                   const absl::Status& cause, int attempt, absl::Duration wait,
                   const std::atomic<bool>& stop);

  SupervisorOptions options_;
  SessionSource& sessions_;
  SinkFactory& sinks_;
  Relay& relay_;
  outbox::Logger& log_;
  Sleep sleep_;
  RelayMonitor* monitor_ = nullptr;
};

// Sleep in small steps, waking early when `stop` is set.
void InterruptibleSleep(absl::Duration d, const std::atomic<bool>& stop);

// Whether `status` says another connection is streaming the slot.
bool IsSlotHeldElsewhere(const absl::Status& status);

}  // namespace publisher

#endif  // PUBLISHER_RELAY_SUPERVISOR_H_
