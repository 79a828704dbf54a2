// The outbox table of scripts/schema.sql as pgoutput describes it in a Relation
// message (OID 16384): test data for the mapper's tests and the codec's
// micro-benchmarks (tools/bench/codec_bench.cc).
#ifndef TOOLS_HARNESS_SCHEMA_OUTBOX_RELATION_H_
#define TOOLS_HARNESS_SCHEMA_OUTBOX_RELATION_H_

#include <cstdint>

#include "cdc/pgoutput.h"

namespace harness {

// `payload_type` is the payload column's type OID (jsonb by default).
inline cdc::pgoutput::Relation SchemaOutboxRelation(uint32_t payload_type = 3802) {
  return cdc::pgoutput::Relation{std::nullopt,
                                 16384,
                                 "public",
                                 "outbox",
                                 'd',
                                 {{1, "id", 2950, -1},
                                  {0, "aggregate_type", 25, -1},
                                  {0, "aggregate_id", 25, -1},
                                  {0, "event_type", 25, -1},
                                  {0, "payload", payload_type, -1},
                                  {0, "headers", 3802, -1},
                                  {0, "created_at", 1184, -1}}};
}

}  // namespace harness

#endif  // TOOLS_HARNESS_SCHEMA_OUTBOX_RELATION_H_
