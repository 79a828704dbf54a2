// Encoding of pgoutput: the write half of cdc/pgoutput.h, following PostgreSQL's
// logicalrep_write_* functions in proto.c, which keeps each writer beside its
// reader as this pair does. Every message decodes to what was written
// (tests/cdc/pgoutput_roundtrip_test.cc). The publisher only reads pgoutput: the
// tests, the fuzzer, the benchmarks and the fake servers write it. Pure.
#ifndef CDC_PGOUTPUT_ENCODER_H_
#define CDC_PGOUTPUT_ENCODER_H_

#include <string>

#include "cdc/pgoutput.h"

namespace cdc::pgoutput {

// Encodes `message`. A message's optional xid is written when present, which is
// what the server does inside a stream block.
std::string Encode(const PgOutputMessage& message);

}  // namespace cdc::pgoutput

#endif  // CDC_PGOUTPUT_ENCODER_H_
