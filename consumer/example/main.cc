// outbox-paid-orders: the consumer kit's example service (paid_orders.h), wired to
// PostgreSQL and Kafka. main only parses flags and wires parts together.
//
//   outbox-paid-orders --pg CONNINFO --brokers HOST:PORT
//       [--group paid-orders] [--topic outbox.event.order[,...]]
//       [--dead-letter-topic paid-orders.dead-letter]
//       [--processed-table processed_messages] [--retention 168h]
//       [--max-attempts 10] [--log-stats-every 10s] [--log-format json|text]
//       [--metrics-port 0] [--metrics-address 127.0.0.1]
//       [-F FILE] [-X librdkafka.property=value ...]
//
// Every flag is also an OUTBOX_<FLAG> variable, as for the publisher; --help
// prints the flags and exits 0, --version the version.
//
// Kafka client properties come from -F FILE (or OUTBOX_KAFKA_CONFIG), then
// OUTBOX_KAFKA_<NAME> variables, then -X, the later winning, as for the publisher
// (common/kafka_properties.h): credentials stay off the command line.
//
// SIGTERM or SIGINT stops it cleanly: offsets of applied events are committed and
// the group rebalances at once.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/http/metrics_server.h"
#include "common/kafka/client.h"
#include "common/kafka_properties.h"
#include "common/process_environment.h"
#include "consumer/consumer_metrics.h"
#include "consumer/example/paid_orders.h"
#include "consumer/kafka/kafka_dead_letters.h"
#include "consumer/kafka/kafka_source.h"
#include "consumer/outbox_consumer.h"
#include "consumer/postgres/pg_database.h"
#include "consumer/unsafe_properties.h"

namespace {

std::atomic<bool> stop{false};
void OnSignal(int) { stop = true; }

struct Flags {
  std::string pg, brokers, group = "paid-orders", topics = "outbox.event.order",
                           dead_letter_topic = "paid-orders.dead-letter",
                           processed_table = "processed_messages", log_format = "json";
  absl::Duration retention = absl::Hours(24 * 7);
  absl::Duration stats_interval = absl::Seconds(10);
  int max_attempts = 10;
  int metrics_port = 0;  // 0 = no /metrics.
  std::string metrics_address = "127.0.0.1";
  std::string kafka_config;  // -F FILE.
  outbox::KafkaProperties command_line;  // -X, in order.
  std::vector<std::string> warnings;  // Deprecated flags used.
};

// One flag: its name, the value's name and help for --help, and how it sets Flags
// ("" or why the value is refused). Every flag is also OUTBOX_<NAME> in the
// environment (--metrics-port: OUTBOX_METRICS_PORT), as for the publisher; the
// command line wins.
struct FlagSpec {
  const char* name;
  const char* value;
  const char* help;
  std::string (*set)(Flags& f, const std::string& v);
};

std::string ParseDurationFlag(const char* name, const std::string& v, absl::Duration* d) {
  return absl::ParseDuration(v, d) ? "" : absl::StrCat("bad --", name, " ", v);
}

const std::vector<FlagSpec>& FlagTable() {
  static const std::vector<FlagSpec> table = {
      {"pg", "CONNINFO", "PostgreSQL conninfo of the service's database (required)",
       [](Flags& f, const std::string& v) { f.pg = v; return std::string(); }},
      {"brokers", "HOST:PORT[,...]", "Kafka bootstrap servers (required)",
       [](Flags& f, const std::string& v) { f.brokers = v; return std::string(); }},
      {"group", "G", "consumer group (default paid-orders)",
       [](Flags& f, const std::string& v) { f.group = v; return std::string(); }},
      {"topic", "T[,T...]", "topics to consume (default outbox.event.order)",
       [](Flags& f, const std::string& v) { f.topics = v; return std::string(); }},
      {"dead-letter-topic", "T", "where records that keep failing go "
                                 "(default paid-orders.dead-letter)",
       [](Flags& f, const std::string& v) {
         f.dead_letter_topic = v;
         return std::string();
       }},
      {"processed-table", "NAME", "the processed-messages table (default processed_messages)",
       [](Flags& f, const std::string& v) {
         f.processed_table = v;
         return std::string();
       }},
      {"retention", "DURATION", "how long processed ids are kept (default 168h)",
       [](Flags& f, const std::string& v) {
         return ParseDurationFlag("retention", v, &f.retention);
       }},
      {"max-attempts", "N", "tries of a record's effect before its dead letter (default 10)",
       [](Flags& f, const std::string& v) {
         return absl::SimpleAtoi(v, &f.max_attempts) && f.max_attempts >= 1
                    ? std::string()
                    : "bad --max-attempts " + v;
       }},
      {"log-stats-every", "DURATION", "interval of the stats line (default 10s)",
       [](Flags& f, const std::string& v) {
         return ParseDurationFlag("log-stats-every", v, &f.stats_interval);
       }},
      {"stats-interval", "DURATION", "deprecated: --log-stats-every",
       [](Flags& f, const std::string& v) {
         f.warnings.push_back("--stats-interval is deprecated: it is --log-stats-every");
         return ParseDurationFlag("stats-interval", v, &f.stats_interval);
       }},
      {"log-format", "json|text", "log line format (default json)",
       [](Flags& f, const std::string& v) {
         if (v != "json" && v != "text") return std::string("--log-format is json or text");
         f.log_format = v;
         return std::string();
       }},
      {"metrics-port", "P", "serve /metrics, /healthz, /readyz, /livez (default 0: off)",
       [](Flags& f, const std::string& v) {
         return absl::SimpleAtoi(v, &f.metrics_port) && f.metrics_port >= 0 &&
                        f.metrics_port <= 65535
                    ? std::string()
                    : "bad --metrics-port " + v + " (0-65535, 0 = off)";
       }},
      {"metrics-address", "A", "address the metrics server binds (default 127.0.0.1)",
       [](Flags& f, const std::string& v) {
         f.metrics_address = v;
         return std::string();
       }},
  };
  return table;
}

const FlagSpec* FindFlag(const std::string& name) {
  for (const FlagSpec& spec : FlagTable()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

std::string UsageText() {
  std::string out =
      "usage: outbox-paid-orders --pg CONNINFO --brokers HOST:PORT [flags]\n"
      "The consumer kit's example service: applies OrderPaid events exactly once.\n\n";
  for (const FlagSpec& spec : FlagTable()) {
    absl::StrAppend(&out, "  --", spec.name, " ", spec.value, "\n      ", spec.help, "\n");
  }
  absl::StrAppend(
      &out,
      "  -F FILE\n      a Kafka properties file (key=value lines; also "
      "OUTBOX_KAFKA_CONFIG)\n",
      "  -X property=value\n      a librdkafka property (repeatable)\n",
      "  --help, --version\n\n",
      "Every flag is also an OUTBOX_<FLAG> variable (--metrics-port: "
      "OUTBOX_METRICS_PORT); the command line wins.\n"
      "Kafka properties also come from OUTBOX_KAFKA_<NAME> (sasl.password: "
      "OUTBOX_KAFKA_SASL_PASSWORD) and OUTBOX_KAFKA_CONFIG=FILE; -X wins over the "
      "environment, which wins over the file.\n");
  return out;
}

int Usage(const std::string& why) {
  std::cerr << "outbox-paid-orders: " << why << "\n" << UsageText();
  return 2;
}

// OUTBOX_<FLAG> for `name`: metrics-port -> OUTBOX_METRICS_PORT.
std::string EnvName(absl::string_view name) {
  return "OUTBOX_" + absl::AsciiStrToUpper(absl::StrReplaceAll(name, {{"-", "_"}}));
}

// What Parse found besides flags.
enum class Action { kRun, kHelp, kVersion };

// Parses the environment's OUTBOX_<FLAG> variables and argv into `f`, a flag on
// the command line replacing its variable (even one whose value is refused); ""
// or why not.
std::string Parse(int argc, char** argv, const outbox::Environment& env, Flags& f,
                  Action& action) {
  // Each flag's value and where it came from, the command line last.
  std::map<std::string, std::pair<std::string, std::string>> given;
  for (const FlagSpec& spec : FlagTable()) {
    if (std::optional<std::string> v = env.lookup(EnvName(spec.name))) {
      given[spec.name] = {*v, absl::StrCat(" (from ", EnvName(spec.name), ")")};
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      action = Action::kHelp;
      return "";
    }
    if (a == "--version") {
      action = Action::kVersion;
      return "";
    }
    if (i + 1 >= argc) return "missing a value after " + a;
    std::string v = argv[++i];
    if (a == "-F") {
      f.kafka_config = v;
    } else if (a == "-X") {
      std::pair<std::string, std::string> kv = absl::StrSplit(v, absl::MaxSplits('=', 1));
      if (kv.second.empty()) return "-X needs property=value, not " + v;
      f.command_line.push_back(kv);
    } else if (absl::StartsWith(a, "--") && FindFlag(a.substr(2)) != nullptr) {
      given[a.substr(2)] = {v, ""};
    } else {
      return "unknown flag " + a;
    }
  }
  for (const FlagSpec& spec : FlagTable()) {
    auto it = given.find(spec.name);
    if (it == given.end()) continue;
    if (std::string why = spec.set(f, it->second.first); !why.empty())
      return why + it->second.second;
  }
  if (f.pg.empty() || f.brokers.empty()) return "--pg and --brokers are required";
  return "";
}

int Fail(outbox::Logger& log, const absl::Status& s, const char* what) {
  log.Error(what, {{"error", std::string(s.message())}});
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  outbox::Environment env = outbox::ProcessEnvironment();
  Action action = Action::kRun;
  if (std::string why = Parse(argc, argv, env, f, action); !why.empty()) return Usage(why);
  if (action == Action::kHelp) {
    std::cout << UsageText();
    return 0;
  }
  if (action == Action::kVersion) {
    std::cout << "outbox-paid-orders " << OUTBOX_PUBLISHER_VERSION << " (librdkafka "
              << outbox::LibrdkafkaVersion() << ")\n";
    return 0;
  }
  // -F wins over OUTBOX_KAFKA_CONFIG, as a flag over its variable.
  if (f.kafka_config.empty()) {
    f.kafka_config = env.lookup(outbox::kKafkaConfigEnv).value_or("");
  }
  absl::StatusOr<outbox::KafkaProperties> properties =
      outbox::GatherKafkaProperties(f.kafka_config, env, f.command_line);
  if (properties.ok()) {
    if (absl::Status s = consumer::RefuseUnsafeProperties(*properties); !s.ok()) {
      properties = s;
    }
  }
  if (!properties.ok()) return Usage(std::string(properties.status().message()));
  outbox::Logger log(
      f.log_format == "json" ? outbox::LogFormat::kJson : outbox::LogFormat::kText,
      outbox::LogLevel::kInfo);
  for (const std::string& warning : f.warnings) log.Warn(warning);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);

  auto db = consumer::PgDatabase::Connect(f.pg, "outbox-paid-orders");
  if (!db.ok()) return Fail(log, db.status(), "cannot connect to PostgreSQL");
  consumer::ProcessedTable table(f.processed_table);
  if (absl::Status s = table.Create(**db); !s.ok()) {
    return Fail(log, s, "cannot create the processed-messages table");
  }
  if (absl::Status s = paid_orders::CreateTables(**db); !s.ok()) {
    return Fail(log, s, "cannot create the example's tables");
  }
  consumer::KafkaSourceOptions source_options;
  source_options.brokers = f.brokers;
  source_options.group = f.group;
  source_options.topics = absl::StrSplit(f.topics, ',', absl::SkipEmpty());
  source_options.properties = *properties;
  auto source = consumer::KafkaSource::Create(source_options, log);
  if (!source.ok()) return Fail(log, source.status(), "cannot start the Kafka consumer");
  // The same properties (credentials above all) for the dead-letter producer.
  auto dead_letters =
      consumer::KafkaDeadLetters::Create(f.brokers, f.dead_letter_topic, *properties);
  if (!dead_letters.ok()) {
    return Fail(log, dead_letters.status(), "cannot start the dead-letter producer");
  }

  consumer::ConsumerOptions options;
  options.group = f.group;
  options.retry.max_attempts = f.max_attempts;
  options.retention = f.retention;
  options.stats_interval = f.stats_interval;
  consumer::OutboxConsumer c(**source, **db, table, **dead_letters, &paid_orders::Apply,
                             options, log);
  consumer::ConsumerMetrics metrics;
  std::unique_ptr<outbox::MetricsServer> server;
  if (f.metrics_port != 0) {
    c.set_metrics(&metrics);
    auto started = outbox::MetricsServer::Start(
        f.metrics_address, f.metrics_port,
        {[&metrics] { return metrics.RenderPrometheus(absl::Now()); },
         [&metrics] { return metrics.UnhealthyReason(absl::Now()); },
         nullptr});  // /readyz answers as /healthz: every member of a group works.
    if (!started.ok()) return Fail(log, started.status(), "cannot serve /metrics");
    server = std::move(*started);
  }
  log.Info("consuming", {{"group", f.group},
                         {"topics", f.topics},
                         {"dead_letter_topic", f.dead_letter_topic},
                         {"processed_table", f.processed_table}});
  absl::Status s = c.Run(stop);
  absl::Status closed = (*source)->Close();
  const consumer::ConsumerStats& st = c.stats();
  log.Info("stopped", {{"applied", st.applied},
                       {"duplicates", st.duplicates},
                       {"dead_lettered", st.dead_lettered}});
  if (!s.ok()) return Fail(log, s, "the consumer failed");
  if (!closed.ok()) return Fail(log, closed, "closing the Kafka consumer failed");
  return 0;
}
