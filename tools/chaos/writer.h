// The chaos run's writer: commits transactions of 1..max rows (or transactional
// messages, --writer) across the aggregates, each event numbered within its
// aggregate in commit order; survives PostgreSQL restarts and failovers by
// reconnecting. The table (or chaos_history) is the history of what committed;
// the writer keeps each event's commit time, for the latency figures.
#ifndef TOOLS_CHAOS_WRITER_H_
#define TOOLS_CHAOS_WRITER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/chaos/options.h"

namespace chaos {

class Writer {
 public:
  // `pg`: a conninfo (a multi-host one follows a promotion). `pace`: the time
  // from one transaction's start to the next's.
  Writer(std::string pg, const Options& o, absl::Duration pace)
      : pg_(std::move(pg)), options_(o), pace_(pace), rng_(o.seed * 7919 + 1) {}

  // Writes until o.rows events committed or `stop`.
  void Run(std::atomic<bool>& stop);

  int64_t written() const { return written_; }
  int64_t transactions() const { return transactions_; }
  bool done() const { return done_; }
  // When the event `id` ("r<number>") was seen to commit; none for one whose
  // commit was not seen (its connection was lost mid-statement).
  std::optional<absl::Time> CommitTime(const std::string& id);
  // Every event's commit time, by number (absl::InfinitePast() where unseen).
  std::vector<absl::Time> CommitTimes();

 private:
  std::string Transaction(int n, int64_t& next_id, std::vector<int64_t>& next_seq);

  std::string pg_;
  Options options_;
  absl::Duration pace_;
  std::mt19937_64 rng_;
  std::atomic<int64_t> written_{0}, transactions_{0};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::vector<int64_t> commit_us_;  // By event number: Unix µs, 0 where unseen.
};

}  // namespace chaos

#endif  // TOOLS_CHAOS_WRITER_H_
