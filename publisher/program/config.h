// The publisher's configuration: the flags docs/configuration.md lists, each also
// settable through OUTBOX_<FLAG> in the environment (flags win), and librdkafka
// properties from -F FILE, OUTBOX_KAFKA_<NAME> and -X key=value
// (common/kafka_properties.h).
// Parsing is pure: the caller supplies argv, the environment and a file reader.
// Every rejection is kInvalidArgument with one sentence naming the value and what
// is accepted; main() turns it into exit code 2.
#ifndef PUBLISHER_PROGRAM_CONFIG_H_
#define PUBLISHER_PROGRAM_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/key_shard.h"
#include "common/kafka_properties.h"
#include "common/log.h"
#include "publisher/mapping/columns.h"
#include "publisher/mapping/value_format.h"
#include "publisher/recovery/slot_plan.h"
#include "publisher/relay/relay_options.h"

namespace publisher {

// --delivery: at-least-once (idempotent producer, confirm on acknowledgement) or
// exactly-once (Kafka transactions with the LSN checkpoint kept in Kafka).
enum class DeliveryMode { kAtLeastOnce, kExactlyOnce };

struct Config {
  std::string pg;  // libpq conninfo or URI; "" = PG* environment.
  // --pg-primary: the primary when `pg` is a standby; "" = none.
  std::string pg_primary;
  std::string slot = "outbox_publisher";
  std::string publication = "outbox_publisher";
  // --shard I/N: this publisher's shard of the keys (cdc/key_shard.h). slot and
  // publication above are then the shard's ("<base>_<I>_of_<N>"), and the bases
  // name every shard's publication and slot for --check.
  std::optional<cdc::KeyShard> shard;
  std::string shard_publication_base, shard_slot_base;
  std::vector<TableName> tables = {{"public", "outbox"}};
  bool create = true;
  // Primary failover and gaps (docs/operations.md, "Primary failover and the slot").
  bool failover_slot = true;  // Create the slot with failover on PostgreSQL 17+.
  // The publisher's record of its slot: "table" (in the first outbox table's
  // schema) or "schema.table"; "" = none (StateTable()).
  std::string state_table = "outbox_publisher_state";
  OnSlotGap on_slot_gap = OnSlotGap::kStop;
  std::string brokers = "localhost:9092";
  std::string topic = "outbox.event.{aggregate_type}";
  ColumnMapping columns;
  ValueFormat value_format = ValueFormat::kEnvelope;  // --value-format.
  // Kafka client properties, merged from -F/--kafka-config, OUTBOX_KAFKA_* and -X
  // (docs/configuration.md, "Kafka client properties"): each key once, the winning value.
  common::KafkaProperties kafka_properties;
  std::string kafka_config;  // -F FILE; "" = none.
  int64_t max_in_flight = 20000;
  int64_t max_in_flight_bytes = 16777216;  // 16 MiB
  OnError on_error = OnError::kHalt;
  std::string dead_letter_topic = "outbox.dead-letter";
  absl::Duration status_interval = absl::Seconds(10);
  absl::Duration stats_interval = absl::Seconds(30);
  common::LogFormat log_format = common::LogFormat::kJson;
  common::LogLevel log_level = common::LogLevel::kInfo;
  // Operations (docs/operations.md, "Monitoring").
  int metrics_port = 0;  // 0 = no metrics server.
  std::string metrics_address = "127.0.0.1";
  int64_t max_retained_wal = int64_t{1} << 30;  // Bytes; warn above.
  absl::Duration slot_check_interval = absl::Seconds(10);
  // Drop and re-open the replication connection after this long without a word
  // from the server (as PostgreSQL's wal_receiver_timeout).
  absl::Duration replication_timeout = absl::Seconds(60);
  // Exactly-once delivery (docs/exactly-once.md).
  DeliveryMode delivery = DeliveryMode::kAtLeastOnce;
  std::string transactional_id;  // "" = outbox-publisher.{slot} (TransactionalId()).
  std::string checkpoint_topic = "outbox.checkpoints";
  absl::Duration transaction_interval = absl::Milliseconds(100);
  // Outbox without a table (docs/configuration.md, "Without a table"): transactional
  // logical decoding messages with this prefix are events too; "" = off.
  std::string message_prefix;
  bool help = false;
  bool version = false;  // --version: print the versions and exit 0.
  bool check = false;    // --check: run the pre-flight checks and exit.
  // Deprecated flags that were used, one sentence each, for main() to log.
  std::vector<std::string> warnings;
};

// --transactional-id, or its default outbox-publisher.{slot}.
std::string TransactionalId(const Config& config);
// --state-table resolved: nullopt when it is "".
std::optional<TableName> StateTable(const Config& config);

// "at-least-once" or "exactly-once".
absl::string_view DeliveryModeName(DeliveryMode mode);

// Parses `args` (argv without the program name) over the environment.
[[nodiscard]] absl::StatusOr<Config> ParseConfig(const std::vector<std::string>& args,
                                                 const common::Environment& env);

// The --help text.
std::string Usage();

// The effective configuration as log fields, with secrets redacted (the password
// in --pg, and Kafka properties that hold one: IsSecretProperty).
std::vector<common::Field> DescribeConfig(const Config& config);

}  // namespace publisher

#endif  // PUBLISHER_PROGRAM_CONFIG_H_
