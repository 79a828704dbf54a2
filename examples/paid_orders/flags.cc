// outbox-paid-orders' flag table and its parsing.
#include "examples/paid_orders/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/flag_table.h"
#include "common/status_macros.h"

namespace paid_orders {
namespace {

using Flag = common::FlagDef<Flags>;

constexpr char kService[] = "The service";
constexpr char kOperations[] = "Operations";

// Refusals as this program has always worded them: bad --flag value.
absl::Status Bad(absl::string_view flag, absl::string_view value,
                 absl::string_view why = "") {
  return absl::InvalidArgumentError(absl::StrCat("bad --", flag, " ", value, why));
}

// A flag whose value is any text, kept in `member`.
Flag Text(const char* name, const char* group, const char* value, const char* help,
          std::string Flags::*member) {
  return common::TextFlag(name, group, value, help, member, /*may_be_blank=*/true);
}

// A positive duration kept in `member`.
Flag Duration(const char* name, const char* group, const char* help,
              absl::Duration Flags::*member) {
  return common::IntervalFlag(name, group, help, member);
}

const common::FlagTable<Flags>& Table() {
  static const auto* table = new common::FlagTable<Flags>({
      Text("pg", kService, "CONNINFO",
           "PostgreSQL conninfo of the service's database (required)", &Flags::pg),
      Text("brokers", kService, "HOST:PORT[,...]", "Kafka bootstrap servers (required)",
           &Flags::brokers),
      Text("group", kService, "G", "consumer group", &Flags::group),
      Text("topic", kService, "T[,T...]", "topics to consume", &Flags::topics),
      Text("dead-letter-topic", kService, "T", "where records that keep failing go",
           &Flags::dead_letter_topic),
      Text("processed-table", kService, "NAME", "the processed-messages table",
           &Flags::processed_table),
      Duration("retention", kService, "how long processed ids are kept",
               &Flags::retention),
      {"max-attempts", kService, "N", "tries of a record's effect before its dead letter",
       [](Flags& f, absl::string_view v) {
         return absl::SimpleAtoi(v, &f.max_attempts) && f.max_attempts >= 1
                    ? absl::OkStatus()
                    : Bad("max-attempts", v);
       },
       [](const Flags& f) { return absl::StrCat(f.max_attempts); }},
      Duration("log-stats-every", kOperations, "interval of the stats line",
               &Flags::stats_interval),
      {"stats-interval", kOperations, "DURATION", "deprecated: --log-stats-every",
       [](Flags& f, absl::string_view v) {
         f.warnings.push_back("--stats-interval is deprecated: it is --log-stats-every");
         absl::StatusOr<absl::Duration> d =
             common::ParseFlagInterval("stats-interval", v);
         if (!d.ok()) return d.status();
         f.stats_interval = *d;
         return absl::OkStatus();
       }},
      {"log-format", kOperations, "json|text", "log line format",
       [](Flags& f, absl::string_view v) {
         if (v != "json" && v != "text")
           return absl::InvalidArgumentError("--log-format is json or text");
         f.log_format = std::string(v);
         return absl::OkStatus();
       },
       [](const Flags& f) { return f.log_format; }},
      {"metrics-port", kOperations, "P",
       "serve /metrics, /healthz, /readyz, /livez (0 = off)",
       [](Flags& f, absl::string_view v) {
         return absl::SimpleAtoi(v, &f.metrics_port) && f.metrics_port >= 0 &&
                        f.metrics_port <= 65535
                    ? absl::OkStatus()
                    : Bad("metrics-port", v, " (0-65535, 0 = off)");
       },
       [](const Flags& f) { return absl::StrCat(f.metrics_port); }},
      Text("metrics-address", kOperations, "A", "address the metrics server binds",
           &Flags::metrics_address),
  });
  return *table;
}

}  // namespace

absl::Status ParseFlags(const std::vector<std::string>& args,
                        const common::EnvLookup& env, Flags& flags, Action& action) {
  common::FlagValues given;
  Table().TakeEnvironment(env, given);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      action = Action::kHelp;
      return absl::OkStatus();
    }
    if (a == "--version") {
      action = Action::kVersion;
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(bool taken, Table().TakeArgument(args, &i, given));
    if (taken) continue;
    if (a != "-F" && a != "-X") return absl::InvalidArgumentError("unknown flag " + a);
    if (i + 1 >= args.size())
      return absl::InvalidArgumentError("missing a value after " + a);
    const std::string& v = args[++i];
    if (a == "-F") {
      flags.kafka_config = v;
      continue;
    }
    std::pair<std::string, std::string> kv = absl::StrSplit(v, absl::MaxSplits('=', 1));
    if (kv.second.empty())
      return absl::InvalidArgumentError("-X needs property=value, not " + v);
    flags.command_line.push_back(kv);
  }
  RETURN_IF_ERROR(Table().Apply(given, flags));
  if (flags.pg.empty() || flags.brokers.empty()) {
    return absl::InvalidArgumentError("--pg and --brokers are required");
  }
  return absl::OkStatus();
}

std::string UsageText() {
  std::vector<common::FlagHelpLine> lines = Table().HelpLines(Flags());
  constexpr char kKafka[] = "Kafka client properties";
  lines.insert(
      lines.end(),
      {{kKafka, "-F FILE",
        "a Kafka properties file (key=value lines; also OUTBOX_KAFKA_CONFIG)", ""},
       {kKafka, "-X property=value", "a librdkafka property (repeatable)", ""},
       {kKafka, "OUTBOX_KAFKA_<NAME>=value",
        "a librdkafka property from the environment (sasl.password: "
        "OUTBOX_KAFKA_SASL_PASSWORD); -X wins over the environment, which wins "
        "over the file",
        ""},
       {"The program", "--help", "this text", ""},
       {"The program", "--version", "the version, and librdkafka's", ""}});
  return absl::StrCat(
      "usage: outbox-paid-orders --pg CONNINFO --brokers HOST:PORT [flags]\n"
      "The consumer kit's example service: applies OrderPaid events exactly once.\n"
      "Every flag is also an OUTBOX_<FLAG> variable (--metrics-port: "
      "OUTBOX_METRICS_PORT); the command line wins.\n\n",
      common::RenderFlagHelp(lines));
}

}  // namespace paid_orders
