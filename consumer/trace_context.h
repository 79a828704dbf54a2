// TraceContext: the W3C trace context a record carries (the writer's traceparent
// and tracestate, from the outbox row's headers column), for handlers to continue
// the trace and for the kit's logs. Pure.
#ifndef CONSUMER_TRACE_CONTEXT_H_
#define CONSUMER_TRACE_CONTEXT_H_

#include <string>

#include "consumer/inbound_record.h"

namespace consumer {

struct TraceContext {
  std::string traceparent;  // "" when the record carries none.
  std::string tracestate;
};

inline TraceContext TraceContextOf(const InboundRecord& r) {
  TraceContext t;
  if (const std::string* p = r.Header("traceparent")) t.traceparent = *p;
  if (const std::string* s = r.Header("tracestate")) t.tracestate = *s;
  return t;
}

}  // namespace consumer

#endif  // CONSUMER_TRACE_CONTEXT_H_
