// What a chaos run was asked for (outbox-chaos's flags, parsed in chaos.cc).
#ifndef TOOLS_CHAOS_OPTIONS_H_
#define TOOLS_CHAOS_OPTIONS_H_

#include <cstdint>
#include <string>

namespace chaos {

struct Options {
  int64_t rows = 200000;
  int faults = 30;
  uint64_t seed = 1;
  int max_tx_rows = 500;
  int aggregates = 200;
  bool pg_restarts = true;     // --schedule full (true) or no-pg-restart.
  int in_flight_requests = 0;  // 0: the publisher's default.
  bool exactly_once = false;   // --delivery exactly-once.
  // --writer: rows in the outbox table, transactional messages (outbox events
  // without a table), or both interleaved in each transaction.
  enum class WriterMode { kTable, kMessage, kMixed } writer = WriterMode::kTable;
  std::string broker = "mock";      // --broker mock|kafka (brokers.h).
  bool failover = false;            // --schedule failover.
  bool publishing_standby = false;  // --schedule standby.
  bool soak = false;                // --schedule soak (soak.h).
  int64_t rate = 3000;              // --rate: the soak writer's rows a second.
  std::string schedule = "full";
  int pg_version = 0;  // --pg-version; 0: the harness's default.
  int shards = 1;      // --shards: publishers sharing the table by key.
};

inline const char* WriterName(Options::WriterMode m) {
  switch (m) {
    case Options::WriterMode::kTable:
      return "table";
    case Options::WriterMode::kMessage:
      return "message";
    case Options::WriterMode::kMixed:
      return "mixed";
  }
  return "?";
}

}  // namespace chaos

#endif  // TOOLS_CHAOS_OPTIONS_H_
