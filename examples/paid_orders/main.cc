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
#include "common/crash_report.h"
#include "common/http/metrics_server.h"
#include "common/kafka/client.h"
#include "common/kafka_properties.h"
#include "common/process_environment.h"
#include "consumer/consumer_metrics.h"
#include "consumer/kafka/kafka_dead_letters.h"
#include "consumer/kafka/kafka_source.h"
#include "consumer/outbox_consumer.h"
#include "consumer/postgres/pg_database.h"
#include "consumer/unsafe_properties.h"
#include "examples/paid_orders/flags.h"
#include "examples/paid_orders/paid_orders.h"

namespace {

using paid_orders::Action;
using paid_orders::Flags;
using paid_orders::ParseFlags;
using paid_orders::UsageText;

std::atomic<bool> stop{false};
void OnSignal(int) { stop = true; }

int Usage(const std::string& why) {
  std::cerr << "outbox-paid-orders: " << why << "\n" << UsageText();
  return 2;
}

int Fail(common::Logger& log, const absl::Status& s, const char* what) {
  log.Error(what, {{"error", std::string(s.message())}});
  return 1;
}

// The Kafka client's properties: -F FILE (else OUTBOX_KAFKA_CONFIG), OUTBOX_KAFKA_*
// variables and -X, with the properties the kit refuses refused.
absl::StatusOr<common::KafkaProperties> KafkaPropertiesOf(
    Flags& f, const common::Environment& env) {
  // -F wins over OUTBOX_KAFKA_CONFIG, as a flag over its variable.
  if (f.kafka_config.empty()) {
    f.kafka_config = env.lookup(common::kKafkaConfigEnv).value_or("");
  }
  absl::StatusOr<common::KafkaProperties> properties =
      common::GatherKafkaProperties(f.kafka_config, env, f.command_line);
  if (!properties.ok()) return properties;
  if (absl::Status s = consumer::RefuseUnsafeProperties(*properties); !s.ok()) return s;
  return properties;
}

consumer::KafkaSourceOptions SourceOptionsOf(const Flags& f,
                                             const common::KafkaProperties& properties) {
  consumer::KafkaSourceOptions o;
  o.brokers = f.brokers;
  o.group = f.group;
  o.topics = absl::StrSplit(f.topics, ',', absl::SkipEmpty());
  o.properties = properties;
  return o;
}

consumer::ConsumerOptions ConsumerOptionsOf(const Flags& f) {
  consumer::ConsumerOptions o;
  o.group = f.group;
  o.retry.max_attempts = f.max_attempts;
  o.retention = f.retention;
  o.stats_interval = f.stats_interval;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  common::Environment env = common::ProcessEnvironment();
  Action action = Action::kRun;
  absl::Status parsed =
      ParseFlags(std::vector<std::string>(argv + 1, argv + argc), env.lookup, f, action);
  if (!parsed.ok()) return Usage(std::string(parsed.message()));
  if (action == Action::kHelp) {
    std::cout << UsageText();
    return 0;
  }
  if (action == Action::kVersion) {
    std::cout << "outbox-paid-orders " << OUTBOX_PUBLISHER_VERSION << " (librdkafka "
              << common::LibrdkafkaVersion() << ")\n";
    return 0;
  }
  absl::StatusOr<common::KafkaProperties> properties = KafkaPropertiesOf(f, env);
  if (!properties.ok()) return Usage(std::string(properties.status().message()));
  common::Logger log(
      f.log_format == "json" ? common::LogFormat::kJson : common::LogFormat::kText,
      common::LogLevel::kInfo);
  for (const std::string& warning : f.warnings) log.Warn(warning);
  common::InstallCrashReport(argv[0]);  // Before the SIGTERM and SIGINT handlers.
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
  auto source = consumer::KafkaSource::Create(SourceOptionsOf(f, *properties), log);
  if (!source.ok()) return Fail(log, source.status(), "cannot start the Kafka consumer");
  // The same properties (credentials above all) for the dead-letter producer.
  auto dead_letters = consumer::KafkaDeadLetters::Create(f.brokers, f.dead_letter_topic,
                                                         *properties, &log);
  if (!dead_letters.ok()) {
    return Fail(log, dead_letters.status(), "cannot start the dead-letter producer");
  }

  consumer::OutboxConsumer c(**source, **db, table, **dead_letters, &paid_orders::Apply,
                             ConsumerOptionsOf(f), log);
  consumer::ConsumerMetrics metrics;
  std::unique_ptr<common::MetricsServer> server;
  if (f.metrics_port != 0) {
    c.set_metrics(&metrics);
    auto started = common::MetricsServer::Start(
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
