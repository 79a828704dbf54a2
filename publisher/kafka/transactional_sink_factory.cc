// TransactionalSinkFactory: init the transactional producer, then read the checkpoint.
#include "publisher/kafka/transactional_sink_factory.h"

#include "absl/strings/str_cat.h"
#include "publisher/delivery/transactional_sink.h"
#include "publisher/kafka/checkpoint_reader.h"
#include "publisher/kafka/kafka_admin.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/kafka/kafka_transactions.h"

namespace publisher {
namespace {

constexpr absl::Duration kKafkaTimeout = absl::Seconds(15);
constexpr absl::Duration kCreateTimeout = absl::Seconds(5);

// The latest committed checkpoint of `id`, creating the topic when it is missing.
absl::StatusOr<std::optional<Checkpoint>> ReadLatest(const ExactlyOnceOptions& config,
                                                     common::Logger& log) {
  const std::string& id = config.transactional_id;
  absl::StatusOr<std::vector<CheckpointRecord>> records =
      ReadCheckpointTopic(config.kafka, config.checkpoint_topic, kKafkaTimeout);
  if (absl::IsNotFound(records.status())) {
    if (!config.create) {
      return absl::FailedPreconditionError(
          absl::StrCat(records.status().message(), ", or run with --create=true"));
    }
    absl::Status created =
        CreateCompactedTopic(config.kafka, config.checkpoint_topic, kCreateTimeout);
    // No streaming without a place for checkpoints. Streaming on and
    // letting the first checkpoint auto-create the topic gave it the cluster's
    // default policy (delete: the checkpoint vanishes after retention.ms, and the
    // next start publishes again what consumers already have), and a cluster that
    // cannot create a topic on request is no place to trust with the only record of
    // what was committed.
    if (!created.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "exactly-once needs the checkpoint topic ", config.checkpoint_topic,
          ", which does not exist and could not be created (", created.message(),
          "): create it compacted with one partition (kafka-topics.sh --create --topic ",
          config.checkpoint_topic,
          " --partitions 1 --config cleanup.policy=compact), then start again"));
    }
    log.Info("created the checkpoint topic (compacted, one partition)",
             {{"topic", config.checkpoint_topic}});
    return std::nullopt;  // Nothing was committed before.
  }
  if (!records.ok()) return records.status();
  return LatestCheckpoint(*records, id);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Sink>> TransactionalSinkFactory::Create(bool first) {
  const std::string& id = options_.transactional_id;
  if (first) {
    // Before PostgreSQL is touched: the brokers answer and the checkpoint topic is
    // there (or made). The transactional producer itself is made once the slot is
    // held (null here): initializing it fences every other instance of the id, so
    // a standby must not.
    absl::StatusOr<std::unique_ptr<Sink>> probe =
        plain_.Create(true);
    if (!probe.ok()) return probe.status();
    absl::StatusOr<std::optional<Checkpoint>> latest = ReadLatest(options_, log_);
    if (!latest.ok()) return latest.status();
    return std::unique_ptr<Sink>();
  }
  absl::StatusOr<std::unique_ptr<KafkaTransactions>> txn =
      KafkaTransactions::Create(options_.kafka, log_, id, options_.checkpoint_topic);
  if (!txn.ok()) return txn.status();
  (*txn)->set_metrics(metrics_);
  absl::Status s = (*txn)->Init(kKafkaTimeout);
  if (!s.ok()) {
    if (absl::IsAborted(s)) return absl::FailedPreconditionError(s.message());
    return absl::UnavailableError(absl::StrCat(
        "cannot initialize Kafka transactions with the brokers ", options_.kafka.brokers,
        " (check --brokers, that the cluster is up and that it supports transactions): ",
        s.message()));
  }
  absl::StatusOr<std::optional<Checkpoint>> latest = ReadLatest(options_, log_);
  if (!latest.ok()) return latest.status();
  if (*latest) {
    log_.Info("exactly-once: resuming after the latest committed checkpoint",
              {{"transactional_id", id},
               {"checkpoint_lsn", (*latest)->end_lsn.ToString()},
               {"checkpoint_xid", static_cast<uint64_t>((*latest)->xid)}});
  } else {
    log_.Info("exactly-once: no checkpoint committed yet for this transactional id",
              {{"transactional_id", id}, {"topic", options_.checkpoint_topic}});
  }
  TransactionalSinkOptions options;
  options.interval = options_.transaction_interval;
  options.max_messages = options_.kafka.max_in_flight;
  options.max_bytes = options_.kafka.max_in_flight_bytes;
  // Longer than one request's timeout: a request stalled on a silent connection
  // then fails inside the commit's wait and is sent again on a fresh connection
  // (after at most a reconnect backoff), and the commit succeeds. With equal
  // timeouts the commit could give up first and abort, then wait as long again
  // for the abort: 60 s for a black hole that costs 31 s (KafkaBlackholeTest,
  // measured once).
  options.commit_timeout = RequestTimeout(options_.kafka) + kCommitTimeoutMargin;
  auto sink =
      std::make_unique<TransactionalSink>(std::move(*txn), *latest, options, log_);
  sink->set_transaction_counter(metrics_);
  return std::unique_ptr<Sink>(std::move(sink));
}

}  // namespace publisher
