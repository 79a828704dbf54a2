// CatalogWatcher: the slot watcher's thread. Every --slot-check-interval, while
// the relay streams, it reads the slot, the outbox tables and the publication over
// a plain connection of its own, and acts on CatalogWatch's verdict: it logs the
// warnings, sets the slot's retained WAL in Metrics, and raises a fatal finding on
// the ExternalFault that the relay checks on every turn of its loop. It also
// raises the state table's horizon as the relay's confirmations cover it.
//
// Trouble reaching the server is not its business (the replication connection
// reports that): it logs at debug level and tries again at the next interval.
#ifndef PUBLISHER_POSTGRES_CATALOG_WATCHER_H_
#define PUBLISHER_POSTGRES_CATALOG_WATCHER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "common/log.h"
#include "common/postgres/sql_connection.h"
#include "publisher/operations/catalog_watch.h"
#include "publisher/operations/metrics.h"
#include "publisher/postgres/postgres_options.h"
#include "publisher/recovery/horizon.h"
#include "publisher/relay/external_fault.h"

namespace publisher {

class CatalogWatcher {
 public:
  // Starts the thread. Every argument must outlive the watcher.
  CatalogWatcher(CatalogWatcherOptions options, outbox::Logger& log, Metrics& metrics,
                 ExternalFault& fault);
  // Stops and joins the thread.
  ~CatalogWatcher();
  CatalogWatcher(const CatalogWatcher&) = delete;
  CatalogWatcher& operator=(const CatalogWatcher&) = delete;

 private:
  void Loop();
  absl::Status Probe();

  CatalogWatcherOptions options_;
  outbox::Logger& log_;
  Metrics& metrics_;
  ExternalFault& fault_;
  std::unique_ptr<outbox::SqlConnection> sql_;
  std::optional<CatalogWatch> watch_;  // Built on the first connection.
  // Raising the state table's horizon (publisher/recovery/horizon.h).
  absl::Status AdvanceHorizon();
  PublishedHorizon horizon_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace publisher

#endif  // PUBLISHER_POSTGRES_CATALOG_WATCHER_H_
