// ConfirmationSampler: confirmed_flush_lsn, then the partitions' high watermarks.
#include "tools/chaos/sampler.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdc/lsn.h"
#include "tools/harness/fatal.h"

namespace chaos {

ConfirmationSampler::ConfirmationSampler(std::string pg, std::string brokers,
                                         std::string topic, int partitions,
                                         absl::Duration interval)
    : pg_(std::move(pg)),
      brokers_(std::move(brokers)),
      topic_(std::move(topic)),
      partitions_(partitions),
      interval_(interval) {
  Reconnect();
  thread_ = std::thread([this] { Loop(); });
}

ConfirmationSampler::~ConfirmationSampler() { Stop(); }

void ConfirmationSampler::Reconnect() {
  rk_.reset();
  // What the partition stores, not what a read_committed consumer may read yet: a
  // consumer's ListOffsets answers the last stable offset under read_committed
  // (librdkafka's default), which an open Kafka transaction holds back.
  absl::StatusOr<common::KafkaConf> conf =
      common::NewKafkaConf({{"bootstrap.servers", brokers_},
                            {"log_level", "2"},
                            {"isolation.level", "read_uncommitted"}},
                           {});
  if (!conf.ok()) harness::Die(absl::StrCat("sampler: ", conf.status().message()));
  absl::StatusOr<common::KafkaClient> rk =
      common::NewKafkaClient(RD_KAFKA_CONSUMER, *std::move(conf), {}, "the sampler's client");
  if (!rk.ok()) harness::Die(absl::StrCat("sampler: ", rk.status().message()));
  rk_ = *std::move(rk);
}

void ConfirmationSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<ConfirmationSample> ConfirmationSampler::samples() {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

void ConfirmationSampler::Loop() {
  while (!stop_) {
    absl::Time next = absl::Now() + interval_;
    ConfirmationSample s;
    if (Sample(&s)) {
      std::lock_guard<std::mutex> lock(mu_);
      samples_.push_back(std::move(s));
    } else {
      ++dropped_;
    }
    while (!stop_ && absl::Now() < next) absl::SleepFor(absl::Milliseconds(10));
  }
}

bool ConfirmationSampler::Sample(ConfirmationSample* out) {
  if (!sql_) {
    auto s = harness::ConnectTo(pg_);
    if (!s.ok()) return false;
    sql_ = *std::move(s);
  }
  // With shards (outbox-chaos --shards), the slowest slot: rows below it are in the
  // broker for every shard. An early confirmation in a faster shard shows as a
  // loss instead, under no-pg-restart's kill -9.
  auto confirmed = sql_->Value(
      "SELECT coalesce(min(confirmed_flush_lsn), '0/0')::text FROM pg_replication_slots "
      "WHERE slot_type = 'logical'");
  if (!confirmed.ok()) {
    sql_.reset();  // Reconnect next time (the server may have restarted).
    return false;
  }
  auto lsn = cdc::Lsn::Parse(*confirmed);
  if (!lsn.ok()) return false;
  out->at = absl::Now();
  out->confirmed = lsn->value();
  // Only after the LSN was read: anything stored before that confirmation sits
  // below these watermarks.
  for (int32_t p = 0; p < partitions_; ++p) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk_.get(), topic_.c_str(), p, &low, &high, 2000);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // librdkafka (2.0.2, at least) does not refresh its leader cache on NOT_LEADER here:
      // a fresh handle learns where the partition moved.
      if (err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION) Reconnect();
      return false;
    }
    out->high_watermarks[p] = high;
  }
  return true;
}

}  // namespace chaos
