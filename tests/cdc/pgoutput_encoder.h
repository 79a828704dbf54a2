// Test-only pgoutput encoder: the write half of cdc/pgoutput.h, following
// PostgreSQL's logicalrep_write_* functions in proto.c. Round-trip tests encode,
// decode and compare; fake servers use it to speak pgoutput.
#ifndef TESTS_CDC_PGOUTPUT_ENCODER_H_
#define TESTS_CDC_PGOUTPUT_ENCODER_H_

#include <string>

#include "cdc/pgoutput.h"

namespace cdc::pgoutput {

// Encodes `message`. A message's optional xid is written when present, which is
// what the server does inside a stream block.
std::string Encode(const PgOutputMessage& message);

}  // namespace cdc::pgoutput

#endif  // TESTS_CDC_PGOUTPUT_ENCODER_H_
