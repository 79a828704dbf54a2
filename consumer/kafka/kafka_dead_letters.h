// KafkaDeadLetters: DeadLetterSink producing to one topic with an idempotent
// producer (acks=all), each dead letter waited for until the broker stored it.
// The librdkafka shell for dead letters. Dead letters are rare, so one round trip
// each costs nothing that matters.
#ifndef CONSUMER_KAFKA_KAFKA_DEAD_LETTERS_H_
#define CONSUMER_KAFKA_KAFKA_DEAD_LETTERS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/handles.h"
#include "common/log.h"
#include "consumer/failures/dead_letters.h"

namespace consumer {

class KafkaDeadLetters : public DeadLetterSink {
 public:
  // With `log`, librdkafka's own lines are written as its log lines
  // ("component":"librdkafka"); without, librdkafka prints them on stderr.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<KafkaDeadLetters>> Create(
      const std::string& brokers, std::string topic,
      const std::vector<std::pair<std::string, std::string>>& properties = {},
      common::Logger* log = nullptr);
  ~KafkaDeadLetters() override;

  // Waits up to message.timeout.ms (30 s) for the broker; kUnavailable when it
  // did not store the dead letter.
  absl::Status Send(const DeadLetter& d) override;

 private:
  KafkaDeadLetters(std::string topic, common::Logger* log)
      : topic_(std::move(topic)), log_(log) {}
  static void OnLog(const rd_kafka_t* rk, int level, const char* facility,
                    const char* line);
  std::string topic_;
  common::Logger* log_;
  common::KafkaClient rk_;
};

}  // namespace consumer

#endif  // CONSUMER_KAFKA_KAFKA_DEAD_LETTERS_H_
