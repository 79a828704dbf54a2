// The example service of the consumer kit: it applies OrderPaid events to its own
// tables, once each, however often Kafka delivers them.
//
//   payment_log     one row per applied OrderPaid event (event id, order, amount),
//                   in the order they were applied (seq);
//   order_payments  per order: how many payments, and their sum.
//
// The effect is deliberately not idempotent on its own (payments = payments + 1):
// applied twice, it would show. The kit is what makes it exactly once.
// Events of other types are recorded as processed and have no effect.
#ifndef EXAMPLES_PAID_ORDERS_PAID_ORDERS_H_
#define EXAMPLES_PAID_ORDERS_PAID_ORDERS_H_

#include "absl/status/status.h"
#include "consumer/database.h"
#include "consumer/handler.h"

namespace paid_orders {

// CREATE TABLE IF NOT EXISTS for both tables.
[[nodiscard]] absl::Status CreateTables(consumer::Database& db);

// The handler: an OrderPaid event's payload is {"order": "...", "amount": 12.50}.
// A payload without them is a permanent error (its record is dead-lettered).
[[nodiscard]] absl::Status Apply(const consumer::Event& event, consumer::Transaction& tx);

}  // namespace paid_orders

#endif  // EXAMPLES_PAID_ORDERS_PAID_ORDERS_H_
