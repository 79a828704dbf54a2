// outbox-publisher: wires configuration, the PostgreSQL session source, the Kafka
// sink factory, the relay and the supervisor together, with the metrics server
// and the slot watcher beside them; or runs the pre-flight checks (--check).
//
// Exit codes: 0 after SIGTERM/SIGINT with everything acknowledged and confirmed;
// 2 for invalid configuration or environment (found before the first session
// streams: a bad flag, unreachable servers, wal_level, a missing table or column,
// a slot of another plugin; and a gap in the slot's history whenever it is found);
// 1 for a fatal runtime error.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cdc/catalog_facts.h"
#include "common/crash_report.h"
#include "common/http/metrics_server.h"
#include "common/log.h"
#include "common/process_environment.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/kafka/transactional_sink_factory.h"
#include "publisher/operations/metrics.h"
#include "publisher/postgres/pg_session.h"
#include "publisher/postgres/slot_watcher.h"
#include "publisher/program/check.h"
#include "publisher/program/config.h"
#include "publisher/program/options.h"
#include "publisher/program/versions.h"
#include "publisher/relay/external_fault.h"
#include "publisher/relay/relay.h"
#include "publisher/relay/supervisor.h"

namespace publisher {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

void InstallSignalHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int Fail(common::Logger& log, int code, absl::string_view what,
         const absl::Status& status) {
  log.Error(what, {{"error", std::string(status.message())},
                   {"code", std::string(absl::StatusCodeToString(status.code()))},
                   {"exit_code", int64_t{code}}});
  return code;
}

// The build_info metric's labels: the versions of the publisher and its libraries.
std::vector<std::pair<std::string, std::string>> VersionInfo() {
  std::vector<std::pair<std::string, std::string>> info;
  for (const auto& [k, v] : VersionFields())
    info.emplace_back(k, std::get<std::string>(v));
  return info;
}

// The labels of every metric: the slot, and the shard with --shard.
std::vector<std::pair<std::string, std::string>> MetricLabels(const Config& config) {
  std::vector<std::pair<std::string, std::string>> labels = {{"slot", config.slot}};
  if (config.shard) {
    labels.emplace_back("shard",
                        absl::StrCat(config.shard->index, "/", config.shard->count));
  }
  return labels;
}

// /metrics, /healthz, /readyz and /livez with --metrics-port; null without.
absl::StatusOr<std::unique_ptr<common::MetricsServer>> StartMetricsServer(
    const Config& config, Metrics& metrics, common::Logger& log) {
  if (config.metrics_port == 0) return nullptr;
  absl::StatusOr<std::unique_ptr<common::MetricsServer>> server =
      common::MetricsServer::Start(
          config.metrics_address, config.metrics_port,
          {[&metrics] { return metrics.RenderPrometheus(absl::Now()); },
           [&metrics] {
             HealthVerdict v = metrics.Health(absl::Now());
             return v.ok ? std::string() : v.reason;
           },
           [&metrics] {
             HealthVerdict v = metrics.Readiness(absl::Now());
             return std::make_pair(v.ok, v.reason);
           }});
  if (server.ok()) {
    log.Info(
        "serving /metrics and /healthz (and /readyz, /livez)",
        {{"address", config.metrics_address}, {"port", int64_t{config.metrics_port}}});
  }
  return server;
}

// The exit code of a run that ended on an error, logged.
int FailedRun(common::Logger& log, const SupervisorResult& result) {
  // A gap in the slot's history, even one found at a reconnect after a failover,
  // is the operator's to decide (--on-slot-gap).
  if (cdc::IsSlotGap(result.status)) {
    return Fail(log, kExitConfig, "stopped: a gap in the slot's history", result.status);
  }
  return result.started
             ? Fail(log, kExitRuntime, "stopped on an error", result.status)
             : Fail(log, kExitConfig, "cannot start: fix the environment and restart",
                    result.status);
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<Config> config = ParseConfig(args, common::ProcessEnvironment());
  if (!config.ok()) {
    common::Logger log(common::LogFormat::kJson, common::LogLevel::kInfo);
    return Fail(log, kExitConfig, "invalid configuration", config.status());
  }
  if (config->help) {
    std::cout << Usage();
    return kExitOk;
  }
  if (config->version) {
    std::cout << VersionLine() << "\n";
    return kExitOk;
  }
  if (config->check) return RunChecks(*config, std::cout) ? kExitOk : kExitConfig;
  common::InstallCrashReport(argv[0]);  // Before InstallSignalHandlers.
  common::Logger log(config->log_format, config->log_level);
  std::vector<common::Field> fields = VersionFields();
  for (common::Field& f : DescribeConfig(*config)) fields.push_back(std::move(f));
  log.Info("starting outbox-publisher", fields);
  for (const std::string& warning : config->warnings) log.Warn(warning);
  InstallSignalHandlers();

  Metrics metrics(VersionInfo(), MetricLabels(*config));
  metrics.SetMaxRetainedWal(config->max_retained_wal);
  absl::StatusOr<std::unique_ptr<common::MetricsServer>> server =
      StartMetricsServer(*config, metrics, log);
  if (!server.ok()) return Fail(log, kExitConfig, "cannot start", server.status());

  // Kafka is created (and must answer) before PostgreSQL is touched, so a failed
  // start never leaves a new slot behind pinning WAL.
  KafkaSinkFactory at_least_once(KafkaOptionsFrom(*config), log, &metrics);
  TransactionalSinkFactory exactly_once(ExactlyOnceOptionsFrom(*config), log, &metrics);
  SinkFactory& sinks = config->delivery == DeliveryMode::kExactlyOnce
                           ? static_cast<SinkFactory&>(exactly_once)
                           : at_least_once;
  // A gap closed from the outbox table is re-published at least once, whatever
  // --delivery says: consumers deduplicate such rows on id.
  PgSessionSource sessions(PgSessionOptionsFrom(*config), log, &at_least_once);
  Relay relay(RelayOptionsFrom(*config, ""), log);
  ExternalFault fault;
  relay.set_monitor(&metrics);
  relay.set_external_fault(&fault);
  Supervisor supervisor(SupervisorOptions{}, sessions, sinks, relay, log,
                        InterruptibleSleep);
  supervisor.set_monitor(&metrics);
  SlotWatcher watcher(SlotWatcherOptionsFrom(*config), log, metrics, fault);
  SupervisorResult result = supervisor.Run(g_stop);
  if (!result.status.ok()) return FailedRun(log, result);
  log.Info("stopped: everything acknowledged was confirmed",
           {{"confirmed_lsn", relay.stats().confirmed.ToString()}});
  return kExitOk;
}

}  // namespace
}  // namespace publisher

int main(int argc, char** argv) { return publisher::Main(argc, argv); }
