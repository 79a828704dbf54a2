// mock-kafka: a Kafka-protocol broker for tests and the demo, on librdkafka's mock
// cluster (rdkafka_mock.h). Any Kafka client in any process can use it over loopback.
//
// Prints "bootstrap=HOST:PORT[,...]" as its first line on stdout, then takes one
// command per line on stdin and answers each with "ok" or "error: <why>":
//
//   topic NAME PARTITIONS [REPLICATION]   create a topic
//   down ID|all                          take a broker (or every broker) down
//   up ID|all                            bring it back
//   rtt ID|all MS                        delay the broker's responses by MS
//   errors API ERR [ERR ...]             fail the next requests of API (name such as
//                                        Produce, or number) with these errors (name
//                                        such as NOT_LEADER_FOR_PARTITION, or number)
//   clear-errors API                     drop queued request errors of API
//   topic-error NAME ERR                 metadata requests for topic NAME fail with
//                                        ERR (e.g. UNKNOWN_TOPIC_OR_PART: "missing")
//   leader NAME PARTITION ID|-1          move the partition's leader to broker ID
//                                        (-1: no leader), as a real cluster does in
//                                        a leader election; the old leader answers
//                                        NOT_LEADER_FOR_PARTITION from then on
//   quit                                 exit
//
// It exits on "quit", at end of stdin (so it dies with the process that started it)
// or on SIGTERM/SIGINT. Limits (docs/testing.md, "Testing against two brokers"): each partition keeps only its newest
// ~5 MiB, and auto-created topics get 4 partitions.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "common/kafka/handles.h"
#include "tools/harness/tool_flags.h"

ABSL_FLAG(int, brokers, 3, "brokers in the mock cluster (1..16)");

namespace {

struct ApiKeyName {
  const char* name;
  int16_t key;
};

// The request types worth failing in tests (Kafka protocol API keys).
constexpr ApiKeyName kApiKeys[] = {
    {"Produce", 0},          {"Fetch", 1},
    {"ListOffsets", 2},      {"Metadata", 3},
    {"OffsetCommit", 8},     {"OffsetFetch", 9},
    {"FindCoordinator", 10}, {"JoinGroup", 11},
    {"Heartbeat", 12},       {"SyncGroup", 14},
    {"ApiVersions", 18},     {"CreateTopics", 19},
    {"InitProducerId", 22},  {"AddPartitionsToTxn", 24},
    {"EndTxn", 26},
};

std::optional<int> ParseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (*end != '\0') return std::nullopt;
  return static_cast<int>(v);
}

std::optional<int16_t> ParseApiKey(const std::string& s) {
  for (const ApiKeyName& a : kApiKeys) {
    if (strcasecmp(a.name, s.c_str()) == 0) return a.key;
  }
  if (auto n = ParseInt(s); n && *n >= 0 && *n < 100) return static_cast<int16_t>(*n);
  return std::nullopt;
}

// Accepts a number or a librdkafka error name, with or without "RD_KAFKA_RESP_ERR_".
std::optional<rd_kafka_resp_err_t> ParseError(std::string s) {
  if (auto n = ParseInt(s)) return static_cast<rd_kafka_resp_err_t>(*n);
  const std::string prefix = "RD_KAFKA_RESP_ERR_";
  if (s.rfind(prefix, 0) == 0) s = s.substr(prefix.size());
  const rd_kafka_err_desc* descs;
  size_t count;
  rd_kafka_get_err_descs(&descs, &count);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].name != nullptr && strcasecmp(descs[i].name, s.c_str()) == 0) {
      return descs[i].code;
    }
  }
  return std::nullopt;
}

class MockKafka {
 public:
  MockKafka(rd_kafka_mock_cluster_t* cluster, int brokers)
      : cluster_(cluster), brokers_(brokers) {}

  // Runs one command line; returns "" on success or the reason it failed.
  std::string Run(const std::string& line, bool* quit) {
    std::istringstream in(line);
    std::vector<std::string> args;
    for (std::string word; in >> word;) args.push_back(word);
    if (args.empty()) return "empty command";
    const std::string& cmd = args[0];
    if (cmd == "quit") {
      *quit = true;
      return "";
    }
    if (cmd == "topic") return Topic(args);
    if (cmd == "down" || cmd == "up") return UpDown(args, cmd == "up");
    if (cmd == "rtt") return Rtt(args);
    if (cmd == "errors") return Errors(args);
    if (cmd == "clear-errors") return ClearErrors(args);
    if (cmd == "topic-error") return TopicError(args);
    if (cmd == "leader") return Leader(args);
    return "unknown command \"" + cmd +
           "\" (topic, down, up, rtt, errors, clear-errors, topic-error, leader, quit)";
  }

 private:
  static std::string FromErr(rd_kafka_resp_err_t err) {
    return err == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : rd_kafka_err2str(err);
  }

  // Broker ids are 1..brokers_; "all" means each of them.
  std::optional<std::vector<int32_t>> Brokers(const std::string& s) const {
    if (s == "all") {
      std::vector<int32_t> ids;
      for (int32_t id = 1; id <= brokers_; ++id) ids.push_back(id);
      return ids;
    }
    auto n = ParseInt(s);
    if (!n || *n < 1 || *n > brokers_) return std::nullopt;
    return std::vector<int32_t>{*n};
  }

  std::string Topic(const std::vector<std::string>& args) {
    if (args.size() < 3 || args.size() > 4)
      return "usage: topic NAME PARTITIONS [REPLICATION]";
    auto partitions = ParseInt(args[2]);
    auto replication = args.size() == 4 ? ParseInt(args[3]) : std::optional<int>(1);
    if (!partitions || *partitions < 1) return "PARTITIONS must be a positive number";
    if (!replication || *replication < 1 || *replication > brokers_) {
      return "REPLICATION must be between 1 and the number of brokers";
    }
    return FromErr(
        rd_kafka_mock_topic_create(cluster_, args[1].c_str(), *partitions, *replication));
  }

  std::string UpDown(const std::vector<std::string>& args, bool up) {
    if (args.size() != 2) return "usage: down|up ID|all";
    auto ids = Brokers(args[1]);
    if (!ids) return "no broker \"" + args[1] + "\"";
    for (int32_t id : *ids) {
      rd_kafka_resp_err_t err = up ? rd_kafka_mock_broker_set_up(cluster_, id)
                                   : rd_kafka_mock_broker_set_down(cluster_, id);
      if (err) return FromErr(err);
    }
    return "";
  }

  std::string Rtt(const std::vector<std::string>& args) {
    if (args.size() != 3) return "usage: rtt ID|all MS";
    auto ids = Brokers(args[1]);
    auto ms = ParseInt(args[2]);
    if (!ids) return "no broker \"" + args[1] + "\"";
    if (!ms || *ms < 0) return "MS must be a non-negative number";
    for (int32_t id : *ids) {
      if (auto err = rd_kafka_mock_broker_set_rtt(cluster_, id, *ms)) return FromErr(err);
    }
    return "";
  }

  std::string Errors(const std::vector<std::string>& args) {
    if (args.size() < 3) return "usage: errors API ERR [ERR ...]";
    auto api = ParseApiKey(args[1]);
    if (!api) return "unknown API \"" + args[1] + "\"";
    std::vector<rd_kafka_resp_err_t> errors;
    for (size_t i = 2; i < args.size(); ++i) {
      auto err = ParseError(args[i]);
      if (!err) return "unknown error \"" + args[i] + "\"";
      errors.push_back(*err);
    }
    rd_kafka_mock_push_request_errors_array(cluster_, *api, errors.size(), errors.data());
    return "";
  }

  std::string ClearErrors(const std::vector<std::string>& args) {
    if (args.size() != 2) return "usage: clear-errors API";
    auto api = ParseApiKey(args[1]);
    if (!api) return "unknown API \"" + args[1] + "\"";
    rd_kafka_mock_clear_request_errors(cluster_, *api);
    return "";
  }

  std::string TopicError(const std::vector<std::string>& args) {
    if (args.size() != 3) return "usage: topic-error NAME ERR";
    auto err = ParseError(args[2]);
    if (!err) return "unknown error \"" + args[2] + "\"";
    rd_kafka_mock_topic_set_error(cluster_, args[1].c_str(), *err);
    return "";
  }

  std::string Leader(const std::vector<std::string>& args) {
    if (args.size() != 4) return "usage: leader NAME PARTITION ID|-1";
    auto partition = ParseInt(args[2]);
    auto id = ParseInt(args[3]);
    if (!partition || *partition < 0) return "PARTITION must be a non-negative number";
    if (!id || *id == 0 || *id < -1 || *id > brokers_)
      return "no broker \"" + args[3] + "\"";
    return FromErr(
        rd_kafka_mock_partition_set_leader(cluster_, args[1].c_str(), *partition, *id));
  }

  rd_kafka_mock_cluster_t* cluster_;
  int brokers_;
};

void OnSignal(int) { std::_Exit(0); }

}  // namespace

int main(int argc, char** argv) {
  harness::ToolArgs args = harness::ParseToolFlags(
      argc, argv, "mock-kafka [--brokers N]   (commands on stdin; see the source)");
  int brokers = absl::GetFlag(FLAGS_brokers);
  if (!args.positional.empty() || !args.passed_on.empty() || brokers < 1 ||
      brokers > 16) {
    std::cerr << "mock-kafka: takes --brokers 1..16 only\n";
    return 2;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);

  absl::StatusOr<common::KafkaConf> conf = common::NewKafkaConf({{"log_level", "3"}}, {});
  absl::StatusOr<common::KafkaClient> rk =
      conf.ok() ? common::NewKafkaClient(RD_KAFKA_PRODUCER, *std::move(conf), {},
                                         "the mock cluster's client")
                : conf.status();
  if (!rk.ok()) {
    std::cerr << "mock-kafka: " << rk.status().message() << "\n";
    return 1;
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk->get(), brokers);
  if (cluster == nullptr) {
    std::cerr << "mock-kafka: could not create the mock cluster\n";
    return 1;
  }
  std::cout << "bootstrap=" << rd_kafka_mock_cluster_bootstraps(cluster) << std::endl;

  MockKafka mock(cluster, brokers);
  bool quit = false;
  for (std::string line; !quit && std::getline(std::cin, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::string error = mock.Run(line, &quit);
    std::cout << (error.empty() ? "ok" : "error: " + error) << std::endl;
  }
  rd_kafka_mock_cluster_destroy(cluster);  // Before its client goes.
  return 0;
}
