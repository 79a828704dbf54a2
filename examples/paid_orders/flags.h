// outbox-paid-orders' command line: its flags as a table (common/flag_table.h, as
// the publisher's), each also an OUTBOX_<FLAG> variable, the command line winning;
// -F FILE and -X property=value for Kafka, as for the publisher.
#ifndef EXAMPLES_PAID_ORDERS_FLAGS_H_
#define EXAMPLES_PAID_ORDERS_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/kafka_properties.h"

namespace paid_orders {

struct Flags {
  std::string pg, brokers;
  std::string group = "paid-orders";
  std::string topics = "outbox.event.order";
  std::string dead_letter_topic = "paid-orders.dead-letter";
  std::string processed_table = "processed_messages";
  std::string log_format = "json";
  absl::Duration retention = absl::Hours(24 * 7);
  absl::Duration stats_interval = absl::Seconds(10);
  int max_attempts = 10;
  int metrics_port = 0;  // 0 = no /metrics.
  std::string metrics_address = "127.0.0.1";
  std::string kafka_config;              // -F FILE.
  common::KafkaProperties command_line;  // -X, in order.
  std::vector<std::string> warnings;     // Deprecated flags used.
};

// What the command line asks for besides flags.
enum class Action { kRun, kHelp, kVersion };

// Parses the environment's OUTBOX_<FLAG> variables and `args` (argv without the
// program's name) into `flags`; kInvalidArgument says why not.
absl::Status ParseFlags(const std::vector<std::string>& args,
                        const common::EnvLookup& env, Flags& flags, Action& action);

// The --help text.
std::string UsageText();

}  // namespace paid_orders

#endif  // EXAMPLES_PAID_ORDERS_FLAGS_H_
