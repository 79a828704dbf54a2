// Parsing and validation of the publisher's configuration (its flags: flags.cc).
#include "publisher/program/config.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/kafka/client.h"
#include "common/kafka_properties.h"
#include "common/postgres/conninfo.h"
#include "common/status_macros.h"
#include "publisher/program/flags.h"

namespace publisher {
namespace {

absl::Status AddKafkaProperty(common::KafkaProperties& properties, absl::string_view kv) {
  size_t eq = kv.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return common::BadFlagValue("X", kv, "expected -X key=value (a librdkafka property)");
  }
  properties.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  return absl::OkStatus();
}

// Why a Kafka property setting is refused, or "" when it is not. Most would void
// a promise (docs/design.md); both producers, at-least-once and exactly-once, use them.
std::string RefusedBecause(const std::string& key, const std::string& v) {
  auto is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* n) { return key == n; });
  };
  int64_t n;
  if (is({"transactional.id"})) {
    return "set --delivery=exactly-once and --transactional-id instead";
  }
  if (is({"enable.idempotence"}) && common::KafkaBoolean(v) == false) {
    return "voids per-key order and retries without duplicates (guarantee 4, the "
           "idempotent producer)";
  }
  if (is({"acks", "request.required.acks"}) && v != "all" && v != "-1") {
    return "voids at-least-once (guarantees 1 and 2): the broker acknowledges before "
           "every in-sync replica has the message, so a leader's failure loses it; "
           "use all";
  }
  if (is({"max.in.flight.requests.per.connection", "max.in.flight"}) &&
      absl::SimpleAtoi(v, &n) && n > 5) {
    return "voids per-key order (guarantee 4): above 5 requests in flight per "
           "connection, a retry can reorder a key's messages";
  }
  if (is({"retries", "message.send.max.retries"}) && absl::SimpleAtoi(v, &n) && n < 1) {
    return "voids per-key order (guarantee 4): a failed request must be retried in "
           "order";
  }
  if (is({"queuing.strategy"}) && v != "fifo") {
    return "voids per-key order (guarantee 4): messages must leave in the order read";
  }
  if (is({"partitioner"}) && v == "random") {
    return "voids per-key order (guarantee 4): one key's messages would land on "
           "several partitions";
  }
  if (is({"delivery.report.only.error"}) && common::KafkaBoolean(v) != false) {
    return "voids the slot's confirmation (guarantees 2 and 7): the slot is confirmed "
           "from successful delivery reports, which this turns off";
  }
  return "";
}

}  // namespace

std::string TransactionalId(const Config& c) {
  return c.transactional_id.empty() ? absl::StrCat("outbox-publisher.", c.slot)
                                    : c.transactional_id;
}

absl::string_view DeliveryModeName(DeliveryMode mode) {
  return mode == DeliveryMode::kExactlyOnce ? "exactly-once" : "at-least-once";
}

absl::StatusOr<Config> ParseConfig(const std::vector<std::string>& args,
                                   const common::Environment& env) {
  Config c;
  const common::FlagTable<Config>& flags = ConfigFlags();
  common::FlagValues given;
  flags.TakeEnvironment(env.lookup, given);
  common::KafkaProperties command_line;  // -X, in order.
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      c.help = true;
      continue;
    }
    if (arg == "--version") {
      c.version = true;
      continue;
    }
    if (arg == "--check") {
      c.check = true;
      continue;
    }
    if (arg == "-X") {
      if (i + 1 >= args.size())
        return common::BadFlagValue("X", "", "expected -X key=value");
      RETURN_IF_ERROR(AddKafkaProperty(command_line, args[++i]));
      continue;
    }
    if (absl::ConsumePrefix(&arg, "-X")) {
      RETURN_IF_ERROR(AddKafkaProperty(command_line, arg));
      continue;
    }
    if (arg == "-F") {
      if (i + 1 >= args.size()) {
        return common::BadFlagValue("kafka-config", "", "expected -F FILE");
      }
      given.Give("kafka-config", args[++i], "");
      continue;
    }
    ASSIGN_OR_RETURN(bool taken, flags.TakeArgument(args, &i, given));
    if (taken) continue;
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", args[i], "\": flags start with -- (see --help)"));
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown flag ",
                                                   args[i].substr(0, args[i].find('=')),
                                                   " (see --help for the list)"));
  }
  RETURN_IF_ERROR(flags.Apply(given, c));
  // Kafka client properties: the file, then OUTBOX_KAFKA_*, then -X; later wins.
  ASSIGN_OR_RETURN(c.kafka_properties,
                   common::GatherKafkaProperties(c.kafka_config, env, command_line));
  std::vector<std::string> refused;
  for (const auto& [key, value] : c.kafka_properties) {
    if (std::string why = RefusedBecause(key, value); !why.empty()) {
      // The key and the reason, never the value: it may be a secret put in the
      // wrong place.
      refused.push_back(absl::StrCat(key, ": ", why));
    }
  }
  if (!refused.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Kafka property refused: ", absl::StrJoin(refused, "; ")));
  }
  // What librdkafka refuses is refused here, before the start line shows anything.
  RETURN_IF_ERROR(common::CheckKafkaProperties(c.kafka_properties));
  if (c.shard) {
    if (!c.message_prefix.empty()) {
      return absl::InvalidArgumentError(
          "--shard cannot go with --message-prefix: a publication's row filter does not "
          "apply to logical decoding messages, so every shard would publish each one; "
          "shard an outbox table instead");
    }
    c.shard_publication_base = c.publication;
    c.shard_slot_base = c.slot;
    c.slot = cdc::ShardedName(c.slot, *c.shard);
    c.publication = cdc::ShardedName(c.publication, *c.shard);
  }
  return c;
}

std::string Usage() {
  std::string out =
      "usage: outbox-publisher [--flag value ...] [-X librdkafka.property=value ...]\n\n"
      "Publishes INSERTs into a PostgreSQL outbox table to Kafka through a logical\n"
      "replication slot, confirming the slot only after the broker acknowledged.\n"
      "Every flag can also be set as OUTBOX_<FLAG> in the environment (flags win).\n\n";
  std::vector<common::FlagHelpLine> lines = ConfigFlags().HelpLines(Config());
  constexpr char kProperties[] = "Kafka client properties";
  constexpr char kProgram[] = "The program";
  lines.insert(
      lines.end(),
      {{kProperties, "-X key=value", "any librdkafka property (repeatable)", ""},
       {kProperties, "-F FILE",
        "librdkafka properties from a file, key=value per line (also --kafka-config "
        "FILE, OUTBOX_KAFKA_CONFIG)",
        ""},
       {kProperties, "OUTBOX_KAFKA_<NAME>=value",
        "a librdkafka property from the environment: OUTBOX_KAFKA_SASL_PASSWORD sets "
        "sasl.password; -X wins over the environment, which wins over -F",
        ""},
       {kProgram, "--help", "this text", ""},
       {kProgram, "--version", "the publisher's, librdkafka's and libpq's versions", ""},
       {kProgram, "--check",
        "run the pre-flight checks against PostgreSQL and Kafka, one line per check; "
        "exit 0 if all pass, 2 otherwise",
        ""}});
  absl::StrAppend(
      &out, common::RenderFlagHelp(lines),
      "\n"
      "Exit codes: 0 after SIGTERM/SIGINT with everything acknowledged and "
      "confirmed;\n2 invalid configuration or environment; 1 fatal runtime error.\n");
  return out;
}

std::optional<TableName> StateTable(const Config& c) {
  if (c.state_table.empty()) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(c.state_table, '.');
  if (parts.size() == 2) return TableName{parts[0], parts[1]};
  std::string schema = c.tables.empty() ? "public" : c.tables.front().schema;
  return TableName{schema, c.state_table};
}

std::vector<common::Field> DescribeConfig(const Config& c) {
  std::vector<std::string> tables;
  for (const TableName& t : c.tables) tables.push_back(t.qualified());
  std::vector<common::Field> f = {
      {"pg", c.pg.empty() ? std::string("") : common::RedactConninfo(c.pg)},
      {"pg-primary",
       c.pg_primary.empty() ? std::string("") : common::RedactConninfo(c.pg_primary)},
      {"slot", c.slot},
      {"publication", c.publication},
      {"shard", c.shard ? cdc::KeyShardName(*c.shard) : std::string("")},
      {"table", absl::StrJoin(tables, ",")},
      {"create", c.create},
      {"failover-slot", c.failover_slot},
      {"state-table", c.state_table},
      {"on-slot-gap", std::string(OnSlotGapName(c.on_slot_gap))},
      {"brokers", c.brokers},
      {"topic", c.topic},
      {"value-format", std::string(ValueFormatName(c.value_format))},
      {"id-column", c.columns.id},
      {"key-column", c.columns.key},
      {"aggregate-type-column", c.columns.aggregate_type},
      {"type-column", c.columns.type},
      {"payload-column", c.columns.payload},
      {"headers-column", c.columns.headers},
      {"timestamp-column", c.columns.timestamp},
      {"max-in-flight", c.max_in_flight},
      {"max-in-flight-bytes", c.max_in_flight_bytes},
      {"on-error", std::string(c.on_error == OnError::kHalt ? "halt" : "dead-letter")},
      {"dead-letter-topic", c.dead_letter_topic},
      {"status-interval", absl::FormatDuration(c.status_interval)},
      {"log-stats-every", absl::FormatDuration(c.stats_interval)},
      {"kafka-config", c.kafka_config},
      {"metrics-port", int64_t{c.metrics_port}},
      {"metrics-address", c.metrics_address},
      {"max-retained-wal", c.max_retained_wal},
      {"slot-check-interval", absl::FormatDuration(c.slot_check_interval)},
      {"replication-timeout", absl::FormatDuration(c.replication_timeout)},
      {"delivery", std::string(DeliveryModeName(c.delivery))},
      {"transactional-id", TransactionalId(c)},
      {"checkpoint-topic", c.checkpoint_topic},
      {"transaction-interval", absl::FormatDuration(c.transaction_interval)},
      {"message-prefix", c.message_prefix},
      {"log-format",
       std::string(c.log_format == common::LogFormat::kJson ? "json" : "text")},
      {"log-level", std::string(common::LogLevelName(c.log_level))},
  };
  for (const auto& [k, v] : c.kafka_properties) {
    f.push_back({absl::StrCat("X.", k),
                 common::ShownPropertyValue(k, v, common::IsKafkaProperty(k))});
  }
  return f;
}

}  // namespace publisher
