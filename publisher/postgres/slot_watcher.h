// SlotWatcher: the slot watcher's thread. Every --slot-check-interval, while
// the relay streams, it reads the slot, the outbox tables and the publication over
// a plain connection of its own, and acts on CatalogVerdicts's verdict: it logs the
// warnings, sets the slot's retained WAL in Metrics, and raises a fatal finding on
// the ExternalFault that the relay checks on every turn of its loop. It also
// raises the state table's horizon as the relay's confirmations cover it: on the
// primary, through --pg-primary when the slot is on a standby.
//
// Trouble reaching the server is not its business (the replication connection
// reports that): it logs at debug level and tries again at the next interval.
#ifndef PUBLISHER_POSTGRES_SLOT_WATCHER_H_
#define PUBLISHER_POSTGRES_SLOT_WATCHER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "common/log.h"
#include "common/postgres/sql_connection.h"
#include "publisher/operations/catalog_verdicts.h"
#include "publisher/operations/metrics.h"
#include "publisher/postgres/postgres_options.h"
#include "publisher/recovery/horizon.h"
#include "publisher/relay/external_fault.h"

namespace publisher {

class SlotWatcher {
 public:
  // Starts the thread. Every argument must outlive the watcher.
  SlotWatcher(SlotWatcherOptions options, common::Logger& log, Metrics& metrics,
              ExternalFault& fault);
  // Stops and joins the thread.
  ~SlotWatcher();
  SlotWatcher(const SlotWatcher&) = delete;
  SlotWatcher& operator=(const SlotWatcher&) = delete;

 private:
  void Loop();
  absl::Status Probe();

  SlotWatcherOptions options_;
  common::Logger& log_;
  Metrics& metrics_;
  ExternalFault& fault_;
  std::unique_ptr<common::SqlConnection> sql_;      // The slot's server.
  bool standby_ = false;                            // sql_'s server, at the last probe.
  std::unique_ptr<common::SqlConnection> primary_;  // --pg-primary, with a standby.
  std::optional<CatalogVerdicts> watch_;            // Built on the first connection.
  // Raising the state table's horizon (publisher/recovery/horizon.h).
  absl::Status AdvanceHorizon();
  // The connection the state table is written over; null when none is kept.
  absl::StatusOr<common::SqlConnection*> StateConnection();
  PublishedHorizon horizon_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_SLOT_WATCHER_H_
