// KafkaCluster: kafka_cluster.sh for the processes, librdkafka's Admin API and
// metadata for topics and leaders (faster than a JVM tool per call).
#include "tools/harness/kafka_cluster.h"

#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/handles.h"
#include "tools/harness/shell.h"

namespace harness {
namespace {

using Client = common::KafkaClient;

absl::StatusOr<Client> NewClient(const std::string& bootstrap) {
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf({{"bootstrap.servers", bootstrap}, {"log_level", "2"}}, {});
  if (!conf.ok()) return conf.status();
  return common::NewKafkaClient(RD_KAFKA_PRODUCER, *std::move(conf), {}, "an admin client");
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaCluster>> KafkaCluster::Start(
    int brokers, const std::vector<std::pair<int, int>>& external, Jvm jvm,
    const std::string& sasl_plain) {
  std::string command = absl::StrCat(HarnessPath("kafka_cluster.sh"), " start --owner ",
                                     getpid(), " --brokers ", brokers, " --jvm ",
                                     jvm == Jvm::kAsShipped ? "as-shipped" : "small");
  if (!external.empty()) {
    absl::StrAppend(&command, " --external ",
                    absl::StrJoin(external, ",", [](std::string* out, const auto& p) {
                      absl::StrAppend(out, p.first, ":", p.second);
                    }));
  }
  if (!sasl_plain.empty()) absl::StrAppend(&command, " --sasl-plain ", sasl_plain);
  absl::StatusOr<std::string> out = RunCommand(command);
  if (!out.ok()) return out.status();
  std::string dir = OutputValue(*out, "KAFKA_CLUSTER_DIR");
  std::string bootstrap = OutputValue(*out, "KAFKA_BOOTSTRAP");
  if (dir.empty() || bootstrap.empty())
    return absl::InternalError("unexpected kafka_cluster.sh output: " + *out);
  std::unique_ptr<KafkaCluster> cluster(new KafkaCluster(dir, bootstrap, brokers));
  cluster->external_bootstrap_ = OutputValue(*out, "KAFKA_EXTERNAL_BOOTSTRAP");
  cluster->sasl_bootstrap_ = OutputValue(*out, "KAFKA_SASL_BOOTSTRAP");
  return cluster;
}

KafkaCluster::~KafkaCluster() { Script(absl::StrCat("stop ", dir_)).IgnoreError(); }

absl::Status KafkaCluster::Script(const std::string& args) {
  return RunCommand(absl::StrCat(HarnessPath("kafka_cluster.sh"), " ", args)).status();
}

absl::Status KafkaCluster::Kill(int broker) {
  return Script(absl::StrCat("kill ", dir_, " ", broker));
}
absl::Status KafkaCluster::Restart(int broker) {
  return Script(absl::StrCat("restart ", dir_, " ", broker));
}
absl::Status KafkaCluster::Freeze(int broker) {
  return Script(absl::StrCat("freeze ", dir_, " ", broker));
}
absl::Status KafkaCluster::Thaw(int broker) {
  return Script(absl::StrCat("thaw ", dir_, " ", broker));
}
absl::Status KafkaCluster::Heal() { return Script(absl::StrCat("heal ", dir_)); }
absl::Status KafkaCluster::MoveLeader(const std::string& topic, int partition,
                                      int broker) {
  return Script(absl::StrCat("leader ", dir_, " ", topic, " ", partition, " ", broker));
}

absl::Status KafkaCluster::CreateTopic(const std::string& name, int partitions,
                                       int replication,
                                       const std::map<std::string, std::string>& configs,
                                       const std::vector<std::vector<int>>& assignment) {
  absl::StatusOr<Client> client = NewClient(bootstrap_);
  if (!client.ok()) return client.status();
  char err[512];
  common::KafkaNewTopic topic(rd_kafka_NewTopic_new(
      name.c_str(), partitions, assignment.empty() ? replication : -1, err, sizeof(err)));
  if (topic == nullptr) return absl::InvalidArgumentError(err);
  for (const auto& [key, value] : configs)
    rd_kafka_NewTopic_set_config(topic.get(), key.c_str(), value.c_str());
  for (int p = 0; p < static_cast<int>(assignment.size()); ++p) {
    std::vector<int32_t> ids(assignment[p].begin(), assignment[p].end());
    if (rd_kafka_NewTopic_set_replica_assignment(topic.get(), p, ids.data(), ids.size(), err,
                                                 sizeof(err)) != 0) {
      return absl::InvalidArgumentError(err);
    }
  }
  common::KafkaQueue queue(rd_kafka_queue_new(client->get()));
  rd_kafka_NewTopic_t* topics[] = {topic.get()};
  rd_kafka_CreateTopics(client->get(), topics, 1, nullptr, queue.get());
  common::KafkaEvent event(rd_kafka_queue_poll(queue.get(), 60000));
  absl::Status status;
  if (event == nullptr) {
    status = absl::DeadlineExceededError("CreateTopics: no answer in 60 s");
  } else {
    rd_kafka_resp_err_t e = rd_kafka_event_error(event.get());
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      size_t n = 0;
      const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(
          rd_kafka_event_CreateTopics_result(event.get()), &n);
      if (n == 1) e = rd_kafka_topic_result_error(results[0]);
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = absl::InternalError(
          absl::StrCat("creating topic ", name, ": ", rd_kafka_err2str(e)));
    }
  }
  if (!status.ok()) return status;
  // Metadata lags creation: wait until every partition has a leader.
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (int p = 0; p < partitions; ++p) {
    while (true) {
      absl::StatusOr<int> leader = Leader(name, p, absl::Seconds(5));
      if (leader.ok() && *leader >= 0) break;
      if (absl::Now() > deadline)
        return absl::DeadlineExceededError(
            absl::StrCat(name, " [", p, "] has no leader"));
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> KafkaCluster::Leader(const std::string& topic, int partition,
                                         absl::Duration timeout) {
  absl::StatusOr<Client> client = NewClient(bootstrap_);
  if (!client.ok()) return client.status();
  common::KafkaTopic t(rd_kafka_topic_new(client->get(), topic.c_str(), nullptr));
  const struct rd_kafka_metadata* raw = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(
      client->get(), 0, t.get(), &raw, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  common::KafkaMetadata md(raw);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("metadata: ", rd_kafka_err2str(e)));
  }
  int leader = -1;
  if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < md->topics[0].partition_cnt; ++i) {
      const auto& p = md->topics[0].partitions[i];
      if (p.id == partition && p.err == RD_KAFKA_RESP_ERR_NO_ERROR) leader = p.leader;
    }
  }
  return leader;
}

}  // namespace harness
