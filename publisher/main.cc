// outbox-publisher: wires configuration, the PostgreSQL replication stream, the
// Kafka sink and the relay together. Everything that can be checked before
// streaming is checked here, so a bad flag or environment exits 2 with one log line
// naming the problem and the fix.
//
// Exit codes: 0 after SIGTERM/SIGINT with everything acknowledged and confirmed;
// 2 for invalid configuration or environment; 1 for a fatal runtime error.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cdc/replication_stream.h"
#include "publisher/config.h"
#include "publisher/kafka_sink.h"
#include "publisher/log.h"
#include "publisher/mapper.h"
#include "publisher/relay.h"

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

int Fail(Logger& log, int code, absl::string_view what, const absl::Status& status) {
  log.Error(what, {{"error", std::string(status.message())},
                   {"code", std::string(absl::StatusCodeToString(status.code()))},
                   {"exit_code", int64_t{code}}});
  return code;
}

std::vector<std::string> QualifiedTables(const Config& config) {
  std::vector<std::string> out;
  for (const TableName& t : config.tables)
    out.push_back(absl::StrCat(t.schema, ".", t.table));
  return out;
}

// Checks the server and prepares the publication and slot; returns the stream
// ready for START_REPLICATION and the database name.
absl::Status Prepare(const Config& config, cdc::ReplicationStream& stream,
                     std::string* database) {
  absl::StatusOr<cdc::SystemIdentity> id = stream.IdentifySystem();
  if (!id.ok()) return id.status();
  *database = id->database;
  if (absl::Status s = stream.CheckWalLevel(); !s.ok()) return s;
  for (const TableName& t : config.tables) {
    absl::StatusOr<cdc::pgoutput::Relation> shape =
        stream.DescribeTable(t.schema, t.table);
    if (!shape.ok()) return shape.status();
    absl::Status bound =
        BoundRelation::Bind(*shape, config.columns, config.topic).status();
    if (!bound.ok()) return bound;
  }
  if (absl::Status s = stream.EnsurePublication(config.publication,
                                                QualifiedTables(config), config.create);
      !s.ok()) {
    return s;
  }
  return stream.EnsureSlot(config.slot, config.create);
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<Config> config = ParseConfig(args, [](const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  });
  if (!config.ok()) {
    Logger log(LogFormat::kJson, LogLevel::kInfo);
    return Fail(log, kExitConfig, "invalid configuration", config.status());
  }
  if (config->help) {
    std::cout << Usage();
    return kExitOk;
  }
  Logger log(config->log_format, config->log_level);
  log.Info("starting outbox-publisher", DescribeConfig(*config));
  InstallSignalHandlers();

  // Kafka first: a failed start must not leave a new slot behind pinning WAL.
  auto sink = KafkaSink::Create(*config, log);
  if (!sink.ok())
    return Fail(log, kExitConfig, "invalid Kafka configuration", sink.status());
  if (absl::Status s = (*sink)->CheckReachable(absl::Seconds(15)); !s.ok()) {
    return Fail(log, kExitConfig,
                absl::StrCat("cannot reach the Kafka brokers ", config->brokers,
                             ": check --brokers and that the cluster is up"),
                s);
  }

  auto stream = cdc::ReplicationStream::Connect(config->pg);
  if (!stream.ok()) {
    return Fail(
        log, kExitConfig,
        "cannot connect to PostgreSQL: check --pg (or PG* variables) and that the "
        "server is running",
        stream.status());
  }
  std::string database;
  if (absl::Status s = Prepare(*config, **stream, &database); !s.ok()) {
    return Fail(log, kExitConfig, "PostgreSQL is not ready for publishing", s);
  }

  cdc::StartOptions start;
  start.slot = config->slot;
  start.publications = {config->publication};
  start.proto_version = 1;
  if (absl::Status s = (*stream)->Start(start); !s.ok()) {
    return Fail(log, kExitConfig, "cannot start streaming from the slot", s);
  }
  log.Info("streaming", {{"slot", config->slot},
                         {"database", database},
                         {"server_version", int64_t{(*stream)->server_version()}}});

  Relay relay(RelayOptions::FromConfig(*config, database), log);
  absl::Status result = relay.Run(**stream, **sink, g_stop);
  if (!result.ok()) return Fail(log, kExitRuntime, "stopped on an error", result);
  log.Info("stopped: everything acknowledged was confirmed",
           {{"confirmed_lsn", relay.stats().confirmed.ToString()}});
  return kExitOk;
}

}  // namespace
}  // namespace publisher

int main(int argc, char** argv) { return publisher::Main(argc, argv); }
