// KafkaTransactions: librdkafka's transactional API (init/begin/commit/abort).
#include "publisher/kafka/kafka_transactions.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "publisher/kafka/kafka_sink.h"

namespace publisher {
namespace {

int Ms(absl::Duration d) {
  return static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(d)));
}

}  // namespace

void KafkaTransactions::OnLog(const rd_kafka_t* rk, int level, const char* fac,
                              const char* buf) {
  auto* self = static_cast<KafkaTransactions*>(rd_kafka_opaque(rk));
  if (ReportLibrdkafkaLog(level, fac, buf, self->log_, self->metrics_).has_value()) {
    self->request_timed_out_ = true;
  }
}

void KafkaTransactions::OnError(rd_kafka_t* rk, int err, const char* reason,
                                void* opaque) {
  auto* self = static_cast<KafkaTransactions*>(opaque);
  ReportLibrdkafkaError(rk, err, reason, self->log_, self->metrics_);
  if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) self->request_timed_out_ = true;
}

void KafkaTransactions::OnDeliveryReport(rd_kafka_t*, const rd_kafka_message_t* m,
                                         void* opaque) {
  // The message's opaque is the generation of the transaction it was queued in.
  static_cast<KafkaTransactions*>(opaque)->proof_.Report(
      reinterpret_cast<uintptr_t>(m->_private),
      common::DeliveryReportStatus(m->err, m->offset, rd_kafka_message_status(m),
                                   rd_kafka_topic_name(m->rkt), m->partition));
}

KafkaTransactions::KafkaTransactions(common::Logger& log, std::string id,
                                     std::string topic)
    : log_(log), transactional_id_(std::move(id)), checkpoint_topic_(std::move(topic)) {}

std::vector<std::pair<std::string, std::string>> TransactionalProducerProperties(
    const KafkaOptions& options, const std::string& transactional_id) {
  auto properties = DefaultProducerProperties(options);
  // A transaction that fails is aborted and produced again from the checkpoint, so
  // a message may time out (it must, within transaction.timeout.ms).
  properties.insert(properties.end(), {{"transactional.id", transactional_id},
                                       {"transaction.timeout.ms", "60000"},
                                       {"message.timeout.ms", "55000"}});
  // Inside a PostgreSQL transaction larger than the in-flight limits the relay
  // keeps reading (TransactionalSink), so this queue is what bounds memory there:
  // the in-flight limits themselves, plus the checkpoint. (A rewind destroys this
  // producer, so no earlier session's records share the queue.)
  properties.insert(
      properties.end(),
      {{"queue.buffering.max.messages",
        std::to_string(std::min<int64_t>(options.max_in_flight + 1,
                                         std::numeric_limits<int32_t>::max()))},
       {"queue.buffering.max.kbytes",
        std::to_string(std::min<int64_t>(options.max_in_flight_bytes / 1024 + 1024,
                                         std::numeric_limits<int32_t>::max()))}});
  // No lingering: a record is invisible until its Kafka transaction commits, so
  // what lingering saves (requests) is all it does here, and it cost throughput
  // (docs/tuning.md).
  properties.emplace_back("linger.ms", "0");
  return properties;
}

absl::StatusOr<std::unique_ptr<KafkaTransactions>> KafkaTransactions::Create(
    const KafkaOptions& options, common::Logger& log, std::string transactional_id,
    std::string checkpoint_topic) {
  std::unique_ptr<KafkaTransactions> t(new KafkaTransactions(
      log, std::move(transactional_id), std::move(checkpoint_topic)));
  auto properties = TransactionalProducerProperties(options, t->transactional_id_);
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf(std::move(properties), options.properties);
  if (!conf.ok()) return conf.status();
  absl::StatusOr<common::KafkaClient> rk =
      common::NewKafkaClient(RD_KAFKA_PRODUCER, *std::move(conf),
                             {.opaque = t.get(),
                              .log = &KafkaTransactions::OnLog,
                              .error = &KafkaTransactions::OnError,
                              .delivery = &KafkaTransactions::OnDeliveryReport},
                             "the transactional Kafka producer");
  if (!rk.ok()) return rk.status();
  t->rk_ = *std::move(rk);
  return t;
}

KafkaTransactions::~KafkaTransactions() {
  if (commit_.valid()) {
    cancel_commit_ = true;
    commit_.wait();  // Within a slice of its waits.
  }
  if (rk_ == nullptr) return;
  // An open transaction is left to the broker: the next instance's Init aborts it.
  rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
}

absl::Status KafkaTransactions::Fatal(int code, absl::string_view message) {
  if (code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
      code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH) {
    return absl::AbortedError(absl::StrCat(
        message,
        "; another instance with this transactional id took over (it fenced this "
        "one): stop this one, or give each publisher its own --transactional-id"));
  }
  return absl::InternalError(
      absl::StrCat(message, "; the producer failed fatally and is recreated"));
}

absl::Status KafkaTransactions::FromError(rd_kafka_error_t* error,
                                          absl::string_view what) {
  if (error == nullptr) return absl::OkStatus();
  std::string message =
      absl::StrCat(what, " (transactional id ", transactional_id_,
                   "): ", rd_kafka_error_name(error), ": ", rd_kafka_error_string(error));
  absl::Status s;
  if (rd_kafka_error_is_fatal(error)) {
    s = Fatal(rd_kafka_error_code(error), message);
  } else if (rd_kafka_error_txn_requires_abort(error) ||
             rd_kafka_error_is_retriable(error)) {
    s = absl::UnavailableError(message);
  } else if (rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__TIMED_OUT) {
    s = absl::DeadlineExceededError(message);
  } else {
    s = absl::FailedPreconditionError(message);
  }
  rd_kafka_error_destroy(error);
  return s;
}

absl::Status KafkaTransactions::Init(absl::Duration timeout) {
  return FromError(rd_kafka_init_transactions(rk_.get(), Ms(timeout)),
                   "initializing transactions");
}

absl::Status KafkaTransactions::Begin() {
  proof_.Begin();
  request_timed_out_ = false;
  return FromError(rd_kafka_begin_transaction(rk_.get()), "beginning a Kafka transaction");
}

absl::Status KafkaTransactions::Produce(const OutboxRecord& r) { return Queue(r); }

absl::Status KafkaTransactions::Queue(const OutboxRecord& r) {
  // Every record has a delivery report: a successful commit_transaction() is no
  // proof that each was stored (transaction_proof.h).
  absl::Status s =
      ProduceRecord(rk_.get(), topics_, r, reinterpret_cast<void*>(proof_.generation()));
  if (s.ok()) {
    proof_.Expect();
    return s;
  }
  if (!absl::IsAborted(s)) return s;
  char reason[512];
  int code = rd_kafka_fatal_error(rk_.get(), reason, sizeof(reason));
  return Fatal(code, absl::StrCat(s.message(), ": ", reason));
}

void KafkaTransactions::Poll(absl::Duration timeout) { rd_kafka_poll(rk_.get(), Ms(timeout)); }

absl::Status KafkaTransactions::FlushAndProve(absl::Duration timeout) {
  // rd_kafka_flush serves the delivery reports (OnDeliveryReport) and errors
  // (OnError) while it waits; in slices, to give up at the first request that
  // timed out. librdkafka notices a silent connection only when a request on it
  // times out, and a transaction's requests go out one after another (its
  // partitions are added before their records are produced): waiting on would
  // cost one socket.timeout.ms per silent connection. A new producer starts with
  // fresh connections instead.
  absl::Time deadline = absl::Now() + timeout;
  while (rd_kafka_flush(rk_.get(), Ms(std::min(kFlushSlice, deadline - absl::Now()))) !=
         RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (cancel_commit_) return absl::CancelledError("the producer is being destroyed");
    if (request_timed_out_ || absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "committing a Kafka transaction (transactional id ", transactional_id_,
          "): ", rd_kafka_outq_len(rk_.get()), " record(s) not delivered",
          request_timed_out_ ? ", and a request to a broker timed out (a silent path)"
                             : absl::StrCat(" within ", absl::FormatDuration(timeout))));
    }
  }
  absl::Status proven = proof_.Verdict();
  if (!proven.ok()) {
    return absl::UnavailableError(
        absl::StrCat("committing a Kafka transaction (transactional id ",
                     transactional_id_, "): ", proven.message()));
  }
  return proven;
}

void KafkaTransactions::StartCommit(const Checkpoint& checkpoint,
                                    absl::Duration timeout) {
  cancel_commit_ = false;
  commit_ = std::async(std::launch::async, [this, checkpoint, timeout] {
    return Commit(checkpoint, timeout);
  });
}

std::optional<absl::Status> KafkaTransactions::CommitOutcome(absl::Duration wait) {
  if (!commit_.valid()) return absl::FailedPreconditionError("no commit was started");
  auto chrono_wait = wait == absl::InfiniteDuration() ? std::chrono::hours(24 * 365)
                                                      : absl::ToChronoMilliseconds(wait);
  while (commit_.wait_for(chrono_wait) != std::future_status::ready) {
    if (wait != absl::InfiniteDuration()) return std::nullopt;
  }
  return commit_.get();
}

absl::Status KafkaTransactions::Commit(const Checkpoint& checkpoint,
                                       absl::Duration timeout) {
  // Every record of the transaction is proven stored before its checkpoint is
  // produced, so a stored checkpoint proves its records are stored even where no
  // transaction marker hides an unfinished transaction (a read_uncommitted reader,
  // librdkafka's mock cluster). The checkpoint is proven too before the commit.
  // Costs one round trip per Kafka transaction.
  absl::Time deadline = absl::Now() + timeout;
  absl::Status s = FlushAndProve(timeout);
  if (!s.ok()) return s;
  OutboxRecord c;
  c.topic = checkpoint_topic_;
  c.key = transactional_id_;
  c.value = EncodeCheckpoint(checkpoint, transactional_id_, absl::Now());
  c.timestamp_ms = absl::ToUnixMillis(absl::Now());
  s = Queue(c);
  if (!s.ok()) return s;
  s = FlushAndProve(deadline - absl::Now());
  if (!s.ok()) return s;
  return EndTransaction(deadline);
}

absl::Status KafkaTransactions::EndTransaction(absl::Time deadline) {
  // librdkafka resumes a commit_transaction that timed out where it left off.
  while (true) {
    rd_kafka_error_t* error = rd_kafka_commit_transaction(
        rk_.get(), Ms(std::min(kFlushSlice, deadline - absl::Now())));
    bool resumable = error != nullptr && rd_kafka_error_is_retriable(error) &&
                     rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__TIMED_OUT;
    if (!resumable) return FromError(error, "committing a Kafka transaction");
    rd_kafka_error_destroy(error);
    if (cancel_commit_) return absl::CancelledError("the producer is being destroyed");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "committing a Kafka transaction (transactional id ", transactional_id_,
          "): the transaction coordinator did not "
          "answer in time"));
    }
  }
}

absl::Status KafkaTransactions::Abort(absl::Duration timeout) {
  return FromError(rd_kafka_abort_transaction(rk_.get(), Ms(timeout)),
                   "aborting a Kafka transaction");
}

}  // namespace publisher
