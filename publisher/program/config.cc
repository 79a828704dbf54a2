// Flag table, parsing and validation of the publisher's configuration.
#include "publisher/program/config.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/kafka/client.h"
#include "common/kafka_properties.h"
#include "common/postgres/conninfo.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

absl::Status Bad(absl::string_view flag, absl::string_view value,
                 absl::string_view accepted) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value \"", value, "\" for --", flag, ": ", accepted));
}

absl::StatusOr<bool> ParseBool(absl::string_view flag, absl::string_view v) {
  std::string s = absl::AsciiStrToLower(v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return Bad(flag, v, "expected true or false");
}

absl::StatusOr<int64_t> ParsePositive(absl::string_view flag, absl::string_view v) {
  int64_t n;
  if (!absl::SimpleAtoi(v, &n) || n < 1)
    return Bad(flag, v, "expected a positive integer");
  return n;
}

absl::StatusOr<absl::Duration> ParseInterval(absl::string_view flag,
                                             absl::string_view v) {
  absl::Duration d;
  if (!absl::ParseDuration(v, &d) || d <= absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return Bad(flag, v, "expected a positive duration such as 500ms, 10s or 1m");
  }
  return d;
}

absl::StatusOr<std::string> NonEmpty(absl::string_view flag, absl::string_view v) {
  if (absl::StripAsciiWhitespace(v).empty()) return Bad(flag, v, "must not be empty");
  return std::string(v);
}

absl::StatusOr<std::vector<TableName>> ParseTables(absl::string_view flag,
                                                   absl::string_view v) {
  std::vector<TableName> tables;
  for (absl::string_view item : absl::StrSplit(v, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<std::string> parts = absl::StrSplit(item, '.');
    if (parts.size() == 1) parts.insert(parts.begin(), "public");
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return Bad(flag, v,
                 "expected comma-separated table names, as table or schema.table");
    }
    TableName t{parts[0], parts[1]};
    if (std::find(tables.begin(), tables.end(), t) == tables.end()) tables.push_back(t);
  }
  return tables;
}

// Every {name} must be closed and non-empty.
absl::StatusOr<std::string> ParseTopicTemplate(absl::string_view flag,
                                               absl::string_view v) {
  if (v.empty()) return Bad(flag, v, "must not be empty");
  size_t pos = 0;
  while ((pos = v.find('{', pos)) != absl::string_view::npos) {
    size_t end = v.find('}', pos);
    if (end == absl::string_view::npos || end == pos + 1 ||
        v.substr(pos + 1, end - pos - 1).find('{') != absl::string_view::npos) {
      return Bad(flag, v, "each {placeholder} must name a column, {schema} or {table}");
    }
    pos = end + 1;
  }
  if (v.find('}', 0) != absl::string_view::npos &&
      std::count(v.begin(), v.end(), '}') != std::count(v.begin(), v.end(), '{')) {
    return Bad(flag, v, "unbalanced braces");
  }
  return std::string(v);
}

struct Flag {
  const char* name;
  const char* help;
  bool is_bool;
  std::function<absl::Status(Config&, absl::string_view)> set;
};

#define STRING_FLAG(name, member, help)                                     \
  Flag {                                                                    \
    name, help, false, [](Config& c, absl::string_view v) -> absl::Status { \
      ASSIGN_OR_RETURN(c.member, NonEmpty(name, v));                        \
      return absl::OkStatus();                                              \
    }                                                                       \
  }

const std::vector<Flag>& Flags() {
  static const auto* flags = new std::vector<Flag>{
      Flag{"pg", "libpq conninfo string or URI of the primary (default: PG* environment)",
           false,
           [](Config& c, absl::string_view v) -> absl::Status {
             absl::Status s = outbox::ParseConninfo(v).status();
             if (!s.ok()) return Bad("pg", outbox::RedactConninfo(v), s.message());
             c.pg = std::string(v);
             return absl::OkStatus();
           }},
      STRING_FLAG("slot", slot, "logical replication slot (pgoutput)"),
      STRING_FLAG("publication", publication, "publication to stream"),
      Flag{"shard",
           "publish only the keys of shard I of N (I/N, PostgreSQL 15+): appends _I_of_N "
           "to --slot and --publication, whose row filter keeps the shard's keys",
           false,
           [](Config& c, absl::string_view v) -> absl::Status {
             absl::StatusOr<cdc::KeyShard> shard = cdc::ParseKeyShard(v);
             if (!shard.ok()) return Bad("shard", v, shard.status().message());
             c.shard = *shard;
             return absl::OkStatus();
           }},
      Flag{"table", "outbox table(s), comma-separated", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.tables, ParseTables("table", v));
             return absl::OkStatus();
           }},
      Flag{"create", "create the publication and the slot when missing", true,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.create, ParseBool("create", v));
             return absl::OkStatus();
           }},
      Flag{"failover-slot",
           "create the slot as a failover slot on PostgreSQL 17+ (a standby with "
           "sync_replication_slots carries it across a promotion)",
           true,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.failover_slot, ParseBool("failover-slot", v));
             return absl::OkStatus();
           }},
      Flag{"state-table",
           "the publisher's record of its slot, which detects a gap after a failover "
           "or a lost slot (\"\" = none)",
           false,
           [](Config& c, absl::string_view v) -> absl::Status {
             if (!v.empty()) {
               std::vector<std::string> parts = absl::StrSplit(v, '.');
               if (parts.size() > 2 ||
                   std::any_of(parts.begin(), parts.end(),
                               [](const std::string& p) { return p.empty(); })) {
                 return Bad("state-table", v, "expected table or schema.table, or \"\"");
               }
             }
             c.state_table = std::string(v);
             return absl::OkStatus();
           }},
      Flag{"on-slot-gap",
           "when the slot is new but the state table says an old one was published "
           "from: stop (exit 2), republish (from the outbox table) or skip",
           false,
           [](Config& c, absl::string_view v) -> absl::Status {
             absl::StatusOr<OnSlotGap> g = ParseOnSlotGap(v);
             if (!g.ok()) return Bad("on-slot-gap", v, g.status().message());
             c.on_slot_gap = *g;
             return absl::OkStatus();
           }},
      STRING_FLAG("brokers", brokers, "Kafka bootstrap servers"),
      STRING_FLAG("kafka-config", kafka_config,
                  "librdkafka properties file, key=value per line (also -F FILE)"),
      Flag{"topic", "topic template: {column}, {schema}, {table}", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.topic, ParseTopicTemplate("topic", v));
             return absl::OkStatus();
           }},
      Flag{"value-format",
           "record value: envelope (protobuf), payload (as Debezium's "
           "outbox router) or json (the envelope as JSON)",
           false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.value_format, ParseValueFormat(v));
             return absl::OkStatus();
           }},
      STRING_FLAG("id-column", columns.id, "stable message id"),
      STRING_FLAG("key-column", columns.key, "Kafka message key"),
      STRING_FLAG("aggregate-type-column", columns.aggregate_type, "aggregate type"),
      STRING_FLAG("type-column", columns.type, "event type"),
      STRING_FLAG("payload-column", columns.payload,
                  "payload: json, jsonb, text or bytea"),
      STRING_FLAG("headers-column", columns.headers,
                  "optional jsonb object -> Kafka headers"),
      STRING_FLAG("timestamp-column", columns.timestamp, "optional Kafka timestamp"),
      Flag{"max-in-flight", "unacknowledged messages before reading pauses", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.max_in_flight, ParsePositive("max-in-flight", v));
             return absl::OkStatus();
           }},
      Flag{"max-in-flight-bytes", "unacknowledged bytes before reading pauses", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.max_in_flight_bytes,
                              ParsePositive("max-in-flight-bytes", v));
             return absl::OkStatus();
           }},
      Flag{"on-error", "permanent publish failure: halt or dead-letter", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             if (v == "halt") {
               c.on_error = OnError::kHalt;
             } else if (v == "dead-letter") {
               c.on_error = OnError::kDeadLetter;
             } else {
               return Bad("on-error", v, "expected halt or dead-letter");
             }
             return absl::OkStatus();
           }},
      STRING_FLAG("dead-letter-topic", dead_letter_topic, "topic for dead letters"),
      Flag{"status-interval", "longest gap between standby status updates", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.status_interval, ParseInterval("status-interval", v));
             return absl::OkStatus();
           }},
      Flag{"log-stats-every", "how often the stats line is logged", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.stats_interval, ParseInterval("log-stats-every", v));
             return absl::OkStatus();
           }},
      // The old name, one letter from --status-interval, which means another thing.
      Flag{"stats-interval", "deprecated: --log-stats-every", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.stats_interval, ParseInterval("stats-interval", v));
             c.warnings.push_back(
                 "--stats-interval (OUTBOX_STATS_INTERVAL) is deprecated: it is "
                 "--log-stats-every (OUTBOX_LOG_STATS_EVERY), which cannot be confused "
                 "with --status-interval");
             return absl::OkStatus();
           }},
      Flag{"metrics-port", "serve /metrics and /healthz on this port (0 = off)", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             int port;
             if (!absl::SimpleAtoi(v, &port) || port < 0 || port > 65535)
               return Bad("metrics-port", v, "expected a port number 0-65535 (0 = off)");
             c.metrics_port = port;
             return absl::OkStatus();
           }},
      STRING_FLAG("metrics-address", metrics_address, "address the metrics server binds"),
      Flag{"max-retained-wal", "warn when the slot retains more WAL than this", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             absl::StatusOr<int64_t> n = ParseByteSize(v);
             if (!n.ok()) return Bad("max-retained-wal", v, n.status().message());
             if (*n < 1) return Bad("max-retained-wal", v, "must be positive");
             c.max_retained_wal = *n;
             return absl::OkStatus();
           }},
      Flag{"slot-check-interval",
           "how often the slot, outbox tables and publication are checked while running",
           false,
           [](Config& c, absl::string_view v) -> absl::
                                                  Status {
                                                    ASSIGN_OR_RETURN(
                                                        c.slot_check_interval,
                                                        ParseInterval(
                                                            "slot-check-interval", v));
                                                    return absl::OkStatus();
                                                  }},
      Flag{"replication-timeout",
           "drop and re-open the replication connection after this long without a "
           "message from the server (a half-open connection never stalls the publisher)",
           false,
           [](Config& c, absl::string_view v) -> absl::
                                                  Status {
                                                    ASSIGN_OR_RETURN(
                                                        c.replication_timeout,
                                                        ParseInterval(
                                                            "replication-timeout", v));
                                                    return absl::OkStatus();
                                                  }},
      Flag{"delivery", "at-least-once, or exactly-once (Kafka transactions)", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             if (v == "at-least-once") {
               c.delivery = DeliveryMode::kAtLeastOnce;
             } else if (v == "exactly-once") {
               c.delivery = DeliveryMode::kExactlyOnce;
             } else {
               return Bad("delivery", v, "expected at-least-once or exactly-once");
             }
             return absl::OkStatus();
           }},
      STRING_FLAG(
          "transactional-id", transactional_id,
          "Kafka transactional.id in exactly-once mode (outbox-publisher.{slot})"),
      STRING_FLAG("checkpoint-topic", checkpoint_topic,
                  "compacted topic of exactly-once checkpoints"),
      Flag{"transaction-interval",
           "longest a Kafka transaction gathers PostgreSQL transactions", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             ASSIGN_OR_RETURN(c.transaction_interval,
                              ParseInterval("transaction-interval", v));
             return absl::OkStatus();
           }},
      Flag{"message-prefix",
           "also publish transactional logical decoding messages with this prefix", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             c.message_prefix = std::string(v);  // "" turns it off.
             return absl::OkStatus();
           }},
      Flag{"log-format", "json or text", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             if (v == "json") {
               c.log_format = outbox::LogFormat::kJson;
             } else if (v == "text") {
               c.log_format = outbox::LogFormat::kText;
             } else {
               return Bad("log-format", v, "expected json or text");
             }
             return absl::OkStatus();
           }},
      Flag{"log-level", "debug, info, warn or error", false,
           [](Config& c, absl::string_view v) -> absl::Status {
             for (outbox::LogLevel l :
                  {outbox::LogLevel::kDebug, outbox::LogLevel::kInfo,
                   outbox::LogLevel::kWarn, outbox::LogLevel::kError}) {
               if (v == outbox::LogLevelName(l)) {
                 c.log_level = l;
                 return absl::OkStatus();
               }
             }
             return Bad("log-level", v, "expected debug, info, warn or error");
           }},
  };
  return *flags;
}

#undef STRING_FLAG

const Flag* FindFlag(absl::string_view name) {
  for (const Flag& f : Flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string EnvName(absl::string_view flag) {
  return absl::StrCat("OUTBOX_",
                      absl::AsciiStrToUpper(absl::StrReplaceAll(flag, {{"-", "_"}})));
}

absl::Status AddKafkaProperty(outbox::KafkaProperties& properties, absl::string_view kv) {
  size_t eq = kv.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return Bad("X", kv, "expected -X key=value (a librdkafka property)");
  }
  properties.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  return absl::OkStatus();
}

// Why a Kafka property setting is refused, or "" when it is not. Most would void
// a promise (docs/design.md); both producers, at-least-once and exactly-once, use them.
std::string RefusedBecause(const std::string& key, const std::string& v) {
  auto is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return key == n; });
  };
  int64_t n;
  if (is({"transactional.id"})) {
    return "set --delivery=exactly-once and --transactional-id instead";
  }
  if (is({"enable.idempotence"}) && outbox::KafkaBoolean(v) == false) {
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
  if (is({"delivery.report.only.error"}) && outbox::KafkaBoolean(v) != false) {
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

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < t.size() && absl::ascii_isdigit(static_cast<unsigned char>(t[digits])))
    ++digits;
  int64_t n = 0;
  if (digits == 0 || !absl::SimpleAtoi(t.substr(0, digits), &n)) {
    return absl::InvalidArgumentError("expected a size such as 512MB, 1GB or 1073741824");
  }
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t.substr(digits)));
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  if (shift < 0) {
    return absl::InvalidArgumentError(
        "expected a size such as 512MB, 1GB or 1073741824 (units B, kB, MB, GB, TB)");
  }
  if (n > (std::numeric_limits<int64_t>::max() >> shift)) {
    return absl::InvalidArgumentError("size too large");
  }
  return n << shift;
}

absl::StatusOr<Config> ParseConfig(const std::vector<std::string>& args,
                                   const outbox::Environment& env) {
  Config c;
  for (const Flag& f : Flags()) {
    if (std::optional<std::string> v = env.lookup(EnvName(f.name))) {
      absl::Status s = f.set(c, *v);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(s.message(), " (from ", EnvName(f.name), ")"));
      }
    }
  }
  outbox::KafkaProperties command_line;  // -X, in order.
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
      if (i + 1 >= args.size()) return Bad("X", "", "expected -X key=value");
      RETURN_IF_ERROR(AddKafkaProperty(command_line, args[++i]));
      continue;
    }
    if (absl::ConsumePrefix(&arg, "-X")) {
      RETURN_IF_ERROR(AddKafkaProperty(command_line, arg));
      continue;
    }
    if (arg == "-F") {
      if (i + 1 >= args.size()) return Bad("kafka-config", "", "expected -F FILE");
      c.kafka_config = args[++i];
      continue;
    }
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", args[i], "\": flags start with -- (see --help)"));
    }
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
      arg = arg.substr(0, eq);
    }
    const Flag* f = FindFlag(arg);
    if (f == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", arg, " (see --help for the list)"));
    }
    if (!value) {
      bool next_is_value = i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--");
      if (f->is_bool && (!next_is_value || !ParseBool(f->name, args[i + 1]).ok())) {
        value = "true";
      } else if (!next_is_value && !f->is_bool) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", f->name, " needs a value"));
      } else {
        value = args[++i];
      }
    }
    RETURN_IF_ERROR(f->set(c, *value));
  }
  // Kafka client properties: the file, then OUTBOX_KAFKA_*, then -X; later wins.
  ASSIGN_OR_RETURN(c.kafka_properties,
                   outbox::GatherKafkaProperties(c.kafka_config, env, command_line));
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
  RETURN_IF_ERROR(outbox::CheckKafkaProperties(c.kafka_properties));
  if (c.max_in_flight_bytes < 1024) {
    return Bad("max-in-flight-bytes", std::to_string(c.max_in_flight_bytes),
               "expected at least 1024");
  }
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
  Config defaults;
  std::vector<outbox::Field> described = DescribeConfig(defaults);
  for (const Flag& f : Flags()) {
    std::string def;
    for (const auto& [k, v] : described) {
      if (k == f.name) std::visit([&](const auto& x) { def = absl::StrCat(x); }, v);
    }
    absl::StrAppend(&out, "  --", f.name,
                    std::string(std::max<int>(1, 24 - strlen(f.name)), ' '), f.help,
                    def.empty() ? "" : absl::StrCat(" [", def, "]"), "\n");
  }
  absl::StrAppend(
      &out,
      "  -X key=value              any librdkafka property (repeatable)\n"
      "  -F FILE                   librdkafka properties from a file, key=value per "
      "line\n"
      "                            (also --kafka-config FILE, OUTBOX_KAFKA_CONFIG)\n"
      "  OUTBOX_KAFKA_<NAME>=value a librdkafka property from the environment:\n"
      "                            OUTBOX_KAFKA_SASL_PASSWORD sets sasl.password.\n"
      "                            -X wins over the environment, which wins over -F\n"
      "  --help                    this text\n"
      "  --version                 the publisher's, librdkafka's and libpq's versions\n"
      "  --check                   run the pre-flight checks against PostgreSQL and "
      "Kafka,\n"
      "                            one line per check; exit 0 if all pass, 2 "
      "otherwise\n\n"
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

std::vector<outbox::Field> DescribeConfig(const Config& c) {
  std::vector<std::string> tables;
  for (const TableName& t : c.tables) tables.push_back(t.qualified());
  std::vector<outbox::Field> f = {
      {"pg", c.pg.empty() ? std::string("") : outbox::RedactConninfo(c.pg)},
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
      {"delivery",
       std::string(c.delivery == DeliveryMode::kExactlyOnce ? "exactly-once"
                                                            : "at-least-once")},
      {"transactional-id", TransactionalId(c)},
      {"checkpoint-topic", c.checkpoint_topic},
      {"transaction-interval", absl::FormatDuration(c.transaction_interval)},
      {"message-prefix", c.message_prefix},
      {"log-format",
       std::string(c.log_format == outbox::LogFormat::kJson ? "json" : "text")},
      {"log-level", std::string(outbox::LogLevelName(c.log_level))},
  };
  for (const auto& [k, v] : c.kafka_properties) {
    f.push_back({absl::StrCat("X.", k),
                 outbox::ShownPropertyValue(k, v, outbox::IsKafkaProperty(k))});
  }
  return f;
}

}  // namespace publisher
