// --check: reads what the publisher depends on from PostgreSQL and Kafka, prints
// one line per check (publisher/program/preflight.h judges them) and a summary. Streams
// nothing and creates nothing: the slot, the publication and topics are only read.
#ifndef PUBLISHER_PROGRAM_CHECK_H_
#define PUBLISHER_PROGRAM_CHECK_H_

#include <ostream>

#include "publisher/program/config.h"

namespace publisher {

// Returns whether every check passed.
bool RunChecks(const Config& config, std::ostream& out);

}  // namespace publisher

#endif  // PUBLISHER_PROGRAM_CHECK_H_
