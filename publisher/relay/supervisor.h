// Supervisor: keeps the relay running across the failures that pass. It opens a
// replication session, runs the relay on it, and when the session ends:
//   - the connection was lost (server restart, pg_terminate_backend, network):
//     reconnect with capped exponential backoff and jitter, resume from the slot;
//   - another connection streams the slot (cdc::IsSlotInUse): stand by and look
//     again every few seconds, so two publishers on one slot form a hot-standby
//     pair. Each look also asks whether the brokers answer, so the monitor can
//     say whether this standby could take over (/readyz). Standing by is logged
//     once when it begins, then as a reminder every kStandbyReminder;
//     the metrics carry the state in between;
//   - the producer session must end (it failed fatally, or a delivery failed or
//     was not proven stored): recreate it and rewind to the slot (the new
//     session re-reads everything unconfirmed: duplicates, never loss);
//   - anything else (a halting permanent failure, a broken outbox table, a
//     dropped publication): stop with that error.
// Before the first session has started (or this instance stood by, which proves
// the environment), only the standby case is retried: a bad environment at start
// is the operator's to fix (exit 2).
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
  // How often a standby says again that it stands by.
  absl::Duration standby_reminder = absl::Minutes(5);
  std::function<absl::Time()> now = absl::Now;
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
             Relay& relay, common::Logger& log, Sleep sleep);

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
  // Another connection streams the slot (`cause`): probe the brokers, tell the
  // monitor, log what changed (or the reminder), wait standby_retry.
  void StandBy(const absl::Status& cause, const std::atomic<bool>& stop);
  // Standing by ends: a session holds the slot (`taking_over`, logged), or
  // something else went wrong, which the caller reports.
  void EndStandBy(bool taking_over);

  SupervisorOptions options_;
  SessionSource& sessions_;
  SinkFactory& sinks_;
  Relay& relay_;
  common::Logger& log_;
  Sleep sleep_;
  RelayMonitor* monitor_ = nullptr;
  // Standing by since (InfinitePast when not), the last line said about it, and
  // what kept it from taking over then ("" = nothing).
  absl::Time standing_by_since_ = absl::InfinitePast();
  absl::Time standby_logged_ = absl::InfinitePast();
  std::string standby_problem_;
};

// Sleep in small steps, waking early when `stop` is set.
void InterruptibleSleep(absl::Duration d, const std::atomic<bool>& stop);


}  // namespace publisher

#endif  // PUBLISHER_RELAY_SUPERVISOR_H_
