// Each component's options, built from the one Config in one place: the relay,
// the Kafka shells and the PostgreSQL shells each take their own small struct, so
// none of them depends on the whole configuration.
#ifndef PUBLISHER_PROGRAM_OPTIONS_H_
#define PUBLISHER_PROGRAM_OPTIONS_H_

#include <string>

#include "publisher/kafka/kafka_options.h"
#include "publisher/operations/preflight.h"
#include "publisher/postgres/postgres_options.h"
#include "publisher/program/config.h"
#include "publisher/relay/relay_options.h"

namespace publisher {

// `database` goes into envelopes' source.database ("" until a session names it).
RelayOptions RelayOptionsFrom(const Config& config, std::string database);
KafkaOptions KafkaOptionsFrom(const Config& config);
ExactlyOnceOptions ExactlyOnceOptionsFrom(const Config& config);
PgSessionOptions PgSessionOptionsFrom(const Config& config);
SlotWatcherOptions SlotWatcherOptionsFrom(const Config& config);
PreflightOptions PreflightOptionsFrom(const Config& config);

}  // namespace publisher

#endif  // PUBLISHER_PROGRAM_OPTIONS_H_
