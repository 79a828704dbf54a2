// The publisher's flag table (docs/configuration.md lists the same flags).
#include "publisher/program/flags.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/postgres/conninfo.h"
#include "common/status_macros.h"

namespace publisher {
namespace {

using common::BadFlagValue;
using common::ShowBool;
using common::ShowBytes;
using Flag = common::FlagDef<Config>;

constexpr char kPostgres[] = "PostgreSQL and the slot";
constexpr char kKafka[] = "Kafka";
constexpr char kColumns[] = "Columns of the outbox table";
constexpr char kOperations[] = "Operations";

absl::StatusOr<std::vector<TableName>> ParseTables(absl::string_view flag,
                                                   absl::string_view v) {
  std::vector<TableName> tables;
  for (absl::string_view item : absl::StrSplit(v, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<std::string> parts = absl::StrSplit(item, '.');
    if (parts.size() == 1) parts.insert(parts.begin(), "public");
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return BadFlagValue(
          flag, v, "expected comma-separated table names, as table or schema.table");
    }
    TableName t{parts[0], parts[1]};
    if (std::find(tables.begin(), tables.end(), t) == tables.end()) tables.push_back(t);
  }
  return tables;
}

// Every {name} must be closed and non-empty.
absl::StatusOr<std::string> ParseTopicTemplate(absl::string_view flag,
                                               absl::string_view v) {
  if (v.empty()) return BadFlagValue(flag, v, "must not be empty");
  size_t pos = 0;
  while ((pos = v.find('{', pos)) != absl::string_view::npos) {
    size_t end = v.find('}', pos);
    if (end == absl::string_view::npos || end == pos + 1 ||
        v.substr(pos + 1, end - pos - 1).find('{') != absl::string_view::npos) {
      return BadFlagValue(flag, v,
                          "each {placeholder} must name a column, {schema} or {table}");
    }
    pos = end + 1;
  }
  if (v.find('}', 0) != absl::string_view::npos &&
      std::count(v.begin(), v.end(), '}') != std::count(v.begin(), v.end(), '{')) {
    return BadFlagValue(flag, v, "unbalanced braces");
  }
  return std::string(v);
}

// One of `names`, each standing for a value.
template <typename T>
absl::StatusOr<T> OneOf(absl::string_view flag, absl::string_view v,
                        std::initializer_list<std::pair<const char*, T>> names) {
  std::vector<std::string> accepted;
  for (const auto& [name, value] : names) {
    if (v == name) return value;
    accepted.push_back(name);
  }
  std::string last = accepted.back();
  accepted.pop_back();
  return BadFlagValue(
      flag, v, absl::StrCat("expected ", absl::StrJoin(accepted, ", "), " or ", last));
}

// A flag whose value is any non-empty text, kept in `member`.
Flag Text(const char* name, const char* group, const char* value, const char* help,
          std::string Config::*member) {
  return common::TextFlag(name, group, value, help, member);
}

// A column of the outbox table: ColumnMapping's `member`.
Flag ColumnFlag(const char* name, const char* help, std::string ColumnMapping::*member) {
  return {name,
          kColumns,
          "COLUMN",
          help,
          [name, member](Config& c, absl::string_view v) -> absl::Status {
            RETURN_IF_ERROR(common::RefuseBlank(name, v));
            c.columns.*member = std::string(v);
            return absl::OkStatus();
          },
          [member](const Config& c) { return c.columns.*member; }};
}

// A positive duration kept in `member`.
Flag Interval(const char* name, const char* group, const char* help,
              absl::Duration Config::*member) {
  return common::IntervalFlag(name, group, help, member);
}

// A boolean kept in `member`.
Flag Bool(const char* name, const char* group, const char* help, bool Config::*member) {
  return {name,
          group,
          "",
          help,
          [name, member](Config& c, absl::string_view v) -> absl::Status {
            ASSIGN_OR_RETURN(c.*member, common::ParseFlagBool(name, v));
            return absl::OkStatus();
          },
          [member](const Config& c) { return ShowBool(c.*member); }};
}

// A libpq conninfo kept in `member`; its password never shows in an error.
Flag Conninfo(const char* name, const char* help, std::string Config::*member) {
  return {name, kPostgres, "CONNINFO", help,
          [name, member](Config& c, absl::string_view v) -> absl::Status {
            absl::Status s = common::ParseConninfo(v).status();
            if (!s.ok())
              return BadFlagValue(name, common::RedactConninfo(v), s.message());
            c.*member = std::string(v);
            return absl::OkStatus();
          }};
}

// --state-table: where the publisher records its slot (schema.table, or "").
Flag StateTableFlag() {
  return {"state-table",
          kPostgres,
          "TABLE",
          "the publisher's record of its slot, which detects a gap after a failover or a "
          "lost slot (\"\" = none)",
          [](Config& c, absl::string_view v) -> absl::Status {
            if (!v.empty()) {
              std::vector<std::string> parts = absl::StrSplit(v, '.');
              if (parts.size() > 2 ||
                  std::any_of(parts.begin(), parts.end(),
                              [](const std::string& p) { return p.empty(); })) {
                return BadFlagValue("state-table", v,
                                    "expected table or schema.table, or \"\"");
              }
            }
            c.state_table = std::string(v);
            return absl::OkStatus();
          },
          [](const Config& c) { return c.state_table; }};
}

// --on-slot-gap: what a new slot after a published one means.
Flag OnSlotGapFlag() {
  return {"on-slot-gap",
          kPostgres,
          "stop|republish|skip",
          "when the slot is new but the state table says an old one was published from: "
          "stop (exit 2), republish (from the outbox table) or skip",
          [](Config& c, absl::string_view v) -> absl::Status {
            absl::StatusOr<OnSlotGap> g = ParseOnSlotGap(v);
            if (!g.ok()) return BadFlagValue("on-slot-gap", v, g.status().message());
            c.on_slot_gap = *g;
            return absl::OkStatus();
          },
          [](const Config& c) { return std::string(OnSlotGapName(c.on_slot_gap)); }};
}

std::vector<Flag> PostgresFlags() {
  return {
      Conninfo("pg",
               "libpq conninfo string or URI of the server to publish from: the primary, "
               "or a standby of PostgreSQL 16+ (default: PG* environment)",
               &Config::pg),
      Conninfo("pg-primary",
               "with --pg naming a standby: the primary, where the state table is "
               "written, the publication created (--create) and the standby's slot "
               "creation sped up (pg_log_standby_snapshot); \"\" = none",
               &Config::pg_primary),
      Text("slot", kPostgres, "NAME", "logical replication slot (pgoutput)",
           &Config::slot),
      Text("publication", kPostgres, "NAME", "publication to stream",
           &Config::publication),
      {"shard", kPostgres, "I/N",
       "publish only the keys of shard I of N (PostgreSQL 15+): appends _I_of_N to "
       "--slot and --publication, whose row filter keeps the shard's keys",
       [](Config& c, absl::string_view v) -> absl::Status {
         absl::StatusOr<cdc::KeyShard> shard = cdc::ParseKeyShard(v);
         if (!shard.ok()) return BadFlagValue("shard", v, shard.status().message());
         c.shard = *shard;
         return absl::OkStatus();
       }},
      {"table", kPostgres, "TABLE[,...]", "outbox table(s), comma-separated",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.tables, ParseTables("table", v));
         return absl::OkStatus();
       },
       [](const Config& c) {
         std::vector<std::string> names;
         for (const TableName& t : c.tables) names.push_back(t.qualified());
         return absl::StrJoin(names, ",");
       }},
      Bool("create", kPostgres, "create the publication and the slot when missing",
           &Config::create),
      Bool("failover-slot", kPostgres,
           "create the slot as a failover slot on PostgreSQL 17+ (a standby with "
           "sync_replication_slots carries it across a promotion)",
           &Config::failover_slot),
      StateTableFlag(),
      OnSlotGapFlag(),
      {"message-prefix", kPostgres, "PREFIX",
       "also publish transactional logical decoding messages with this prefix",
       [](Config& c, absl::string_view v) -> absl::Status {
         c.message_prefix = std::string(v);  // "" turns it off.
         return absl::OkStatus();
       }},
      Interval("status-interval", kPostgres, "longest gap between standby status updates",
               &Config::status_interval),
      Interval("replication-timeout", kPostgres,
               "drop and re-open the replication connection after this long without a "
               "message from the server (a half-open connection never stalls the "
               "publisher)",
               &Config::replication_timeout),
  };
}

std::vector<Flag> KafkaFlags() {
  return {
      Text("brokers", kKafka, "HOST:PORT[,...]", "Kafka bootstrap servers",
           &Config::brokers),
      Text("kafka-config", kKafka, "FILE",
           "librdkafka properties file, key=value per line (also -F FILE)",
           &Config::kafka_config),
      {"topic", kKafka, "TEMPLATE", "topic template: {column}, {schema}, {table}",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.topic, ParseTopicTemplate("topic", v));
         return absl::OkStatus();
       },
       [](const Config& c) { return c.topic; }},
      {"value-format", kKafka, "envelope|payload|json",
       "record value: envelope (protobuf), payload (as Debezium's outbox router) or "
       "json (the envelope as JSON)",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.value_format, ParseValueFormat(v));
         return absl::OkStatus();
       },
       [](const Config& c) { return std::string(ValueFormatName(c.value_format)); }},
      {"delivery", kKafka, "MODE", "at-least-once, or exactly-once (Kafka transactions)",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(
             c.delivery,
             OneOf<DeliveryMode>("delivery", v,
                                 {{"at-least-once", DeliveryMode::kAtLeastOnce},
                                  {"exactly-once", DeliveryMode::kExactlyOnce}}));
         return absl::OkStatus();
       },
       [](const Config& c) { return std::string(DeliveryModeName(c.delivery)); }},
      Text("transactional-id", kKafka, "ID",
           "Kafka transactional.id in exactly-once mode (default: "
           "outbox-publisher.{slot})",
           &Config::transactional_id),
      Text("checkpoint-topic", kKafka, "TOPIC",
           "compacted topic of exactly-once checkpoints", &Config::checkpoint_topic),
      Interval("transaction-interval", kKafka,
               "longest a Kafka transaction gathers PostgreSQL transactions",
               &Config::transaction_interval),
      {"max-in-flight", kKafka, "N", "unacknowledged messages before reading pauses",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.max_in_flight, common::ParseFlagPositive("max-in-flight", v));
         return absl::OkStatus();
       },
       [](const Config& c) { return absl::StrCat(c.max_in_flight); }},
      {"max-in-flight-bytes", kKafka, "SIZE",
       "unacknowledged bytes before reading pauses",
       [](Config& c, absl::string_view v) -> absl::Status {
         absl::StatusOr<int64_t> n = common::ParseByteSize(v);
         if (!n.ok()) return BadFlagValue("max-in-flight-bytes", v, n.status().message());
         if (*n < 1024)
           return BadFlagValue("max-in-flight-bytes", v, "expected at least 1024");
         c.max_in_flight_bytes = *n;
         return absl::OkStatus();
       },
       [](const Config& c) { return ShowBytes(c.max_in_flight_bytes); }},
      {"on-error", kKafka, "halt|dead-letter",
       "permanent publish failure: halt or dead-letter",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.on_error,
                          OneOf<OnError>("on-error", v,
                                         {{"halt", OnError::kHalt},
                                          {"dead-letter", OnError::kDeadLetter}}));
         return absl::OkStatus();
       },
       [](const Config& c) {
         return std::string(c.on_error == OnError::kHalt ? "halt" : "dead-letter");
       }},
      Text("dead-letter-topic", kKafka, "TOPIC", "topic for dead letters",
           &Config::dead_letter_topic),
  };
}

std::vector<Flag> ColumnFlags() {
  return {
      ColumnFlag("id-column", "stable message id", &ColumnMapping::id),
      ColumnFlag("key-column", "Kafka message key", &ColumnMapping::key),
      ColumnFlag("aggregate-type-column", "aggregate type",
                 &ColumnMapping::aggregate_type),
      ColumnFlag("type-column", "event type", &ColumnMapping::type),
      ColumnFlag("payload-column", "payload: json, jsonb, text or bytea",
                 &ColumnMapping::payload),
      ColumnFlag("headers-column", "optional jsonb object -> Kafka headers",
                 &ColumnMapping::headers),
      ColumnFlag("timestamp-column", "optional Kafka timestamp",
                 &ColumnMapping::timestamp),
  };
}

std::vector<Flag> OperationsFlags() {
  return {
      {"metrics-port", kOperations, "PORT",
       "serve /metrics, /healthz, /readyz and /livez on this port (0 = off)",
       [](Config& c, absl::string_view v) -> absl::Status {
         int port;
         if (!absl::SimpleAtoi(v, &port) || port < 0 || port > 65535)
           return BadFlagValue("metrics-port", v,
                               "expected a port number 0-65535 (0 = off)");
         c.metrics_port = port;
         return absl::OkStatus();
       },
       [](const Config& c) { return absl::StrCat(c.metrics_port); }},
      Text("metrics-address", kOperations, "ADDRESS", "address the metrics server binds",
           &Config::metrics_address),
      {"max-retained-wal", kOperations, "SIZE",
       "warn when the slot retains more WAL than this",
       [](Config& c, absl::string_view v) -> absl::Status {
         absl::StatusOr<int64_t> n = common::ParseByteSize(v);
         if (!n.ok()) return BadFlagValue("max-retained-wal", v, n.status().message());
         if (*n < 1) return BadFlagValue("max-retained-wal", v, "must be positive");
         c.max_retained_wal = *n;
         return absl::OkStatus();
       },
       [](const Config& c) { return ShowBytes(c.max_retained_wal); }},
      Interval("slot-check-interval", kOperations,
               "how often the slot, outbox tables and publication are checked while "
               "running",
               &Config::slot_check_interval),
      Interval("log-stats-every", kOperations, "how often the stats line is logged",
               &Config::stats_interval),
      // The old name, one letter from --status-interval, which means another thing.
      {"stats-interval", kOperations, "DURATION", "deprecated: --log-stats-every",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.stats_interval,
                          common::ParseFlagInterval("stats-interval", v));
         c.warnings.push_back(
             "--stats-interval (OUTBOX_STATS_INTERVAL) is deprecated: it is "
             "--log-stats-every (OUTBOX_LOG_STATS_EVERY), which cannot be confused with "
             "--status-interval");
         return absl::OkStatus();
       }},
      {"log-format", kOperations, "json|text", "log line format",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.log_format,
                          OneOf<common::LogFormat>("log-format", v,
                                                   {{"json", common::LogFormat::kJson},
                                                    {"text", common::LogFormat::kText}}));
         return absl::OkStatus();
       },
       [](const Config& c) {
         return std::string(c.log_format == common::LogFormat::kJson ? "json" : "text");
       }},
      {"log-level", kOperations, "LEVEL", "debug, info, warn or error",
       [](Config& c, absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(c.log_level,
                          OneOf<common::LogLevel>("log-level", v,
                                                  {{"debug", common::LogLevel::kDebug},
                                                   {"info", common::LogLevel::kInfo},
                                                   {"warn", common::LogLevel::kWarn},
                                                   {"error", common::LogLevel::kError}}));
         return absl::OkStatus();
       },
       [](const Config& c) { return std::string(common::LogLevelName(c.log_level)); }},
  };
}

}  // namespace

const common::FlagTable<Config>& ConfigFlags() {
  static const auto* table = [] {
    std::vector<Flag> flags;
    for (auto group : {PostgresFlags, KafkaFlags, ColumnFlags, OperationsFlags}) {
      for (Flag& f : group()) flags.push_back(std::move(f));
    }
    return new common::FlagTable<Config>(std::move(flags));
  }();
  return *table;
}

}  // namespace publisher
