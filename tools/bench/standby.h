// Publishing from a standby against publishing from the primary (outbox-bench
// --only standby; docs/operations.md, "Publishing from a standby"): one primary of
// PostgreSQL 16+ and two standbys of it on this machine.
//   - The same backlog published from the primary and from a standby, and 2 shards
//     on the primary against 2 shards one per standby: rows/s, the CPU of the
//     primary's walsenders over the run (its physical ones included: what
//     publishing costs the primary), the decoding walsenders' CPU wherever they
//     run, and the publishers' CPU per row.
//   - The steady state from each: commit (on the primary) to consumer, at a rate.
#ifndef TOOLS_BENCH_STANDBY_H_
#define TOOLS_BENCH_STANDBY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/bench/support.h"

namespace bench {

struct StandbyRun {
  std::string where;  // "primary", "standby", "2 shards on the primary", ...
  double rows_s = 0;  // Median over the rounds.
  double primary_walsender_cpu_s = 0;
  double decoding_cpu_s = 0;  // The logical walsenders', on whichever server.
  double publisher_cpu_us_per_row = 0;
};

struct StandbyFigures {
  int version = 0;
  std::vector<StandbyRun> backlog;
  Latency steady_primary, steady_standby;
};

StandbyFigures MeasureStandby(int64_t rows, int rounds, int rate,
                              absl::Duration steady_for,
                              const std::vector<std::string>& publisher_flags);

// The markdown section of the report.
std::string StandbyTable(const StandbyFigures& f, int64_t rows, int rounds, int rate);

}  // namespace bench

#endif  // TOOLS_BENCH_STANDBY_H_
