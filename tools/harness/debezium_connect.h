// DebeziumConnect: Kafka Connect standalone with Debezium's PostgreSQL connector and
// its Outbox Event Router (tools/bench/debezium.sh), for the benchmark and for the
// compatibility test. Stopped, and its folder deleted, on destruction.
#ifndef TOOLS_HARNESS_DEBEZIUM_CONNECT_H_
#define TOOLS_HARNESS_DEBEZIUM_CONNECT_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace harness {

class DebeziumConnect {
 public:
  struct Options {
    std::string bootstrap;
    int pg_port = 0;
    std::string slot;         // Created by the connector when missing.
    std::string publication;  // Must exist.
    std::string tables;       // "schema.table[,schema.table...]".
    std::string topic_prefix = "debezium.outbox.event.";
    // The connector's value converter: the payload's text by default; a bytea's
    // bytes with "io.debezium.converters.BinaryDataConverter".
    std::string value_converter = "org.apache.kafka.connect.storage.StringConverter";
    // The event type as header "type" (an additional placement); false is the
    // router's default.
    bool type_header = true;
  };

  static absl::StatusOr<std::unique_ptr<DebeziumConnect>> Start(const Options& options);
  ~DebeziumConnect();

  pid_t pid() const { return pid_; }
  bool running() const;
  // The last lines of Connect's log, for a failure message.
  std::string LogTail() const;

 private:
  DebeziumConnect() = default;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace harness

#endif  // TOOLS_HARNESS_DEBEZIUM_CONNECT_H_
