// What --check reads from Kafka (publisher/operations/preflight.h judges it): whether
// a broker answers, how many, and which topics exist. Creates nothing.
#ifndef PUBLISHER_KAFKA_PREFLIGHT_READS_H_
#define PUBLISHER_KAFKA_PREFLIGHT_READS_H_

#include "publisher/kafka/kafka_options.h"
#include "publisher/operations/preflight.h"

namespace publisher {

KafkaFindings ReadKafkaFindings(const KafkaOptions& options);

}  // namespace publisher

#endif  // PUBLISHER_KAFKA_PREFLIGHT_READS_H_
