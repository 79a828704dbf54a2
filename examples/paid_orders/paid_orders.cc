// paid_orders: the example handler, in SQL (PostgreSQL parses the JSON payload).
#include "examples/paid_orders/paid_orders.h"

#include "absl/strings/str_cat.h"

namespace paid_orders {

absl::Status CreateTables(consumer::Database& db) {
  return db.Command(
      "CREATE TABLE IF NOT EXISTS payment_log ("
      " seq bigserial PRIMARY KEY, event_id text NOT NULL, order_id text NOT NULL,"
      " amount numeric NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());"
      " CREATE TABLE IF NOT EXISTS order_payments ("
      " order_id text PRIMARY KEY, payments integer NOT NULL, paid numeric NOT NULL)");
}

absl::Status Apply(const consumer::Event& event, consumer::Transaction& tx) {
  const outbox::v1::Envelope& e = event.envelope;
  if (e.event_type() != "OrderPaid") return absl::OkStatus();
  if (e.content_type() != "application/json") {
    return consumer::PermanentError(
        absl::StrCat("an OrderPaid payload must be JSON, not ", e.content_type()));
  }
  // A payload without "order" or "amount" fails the NOT NULL constraints, and one
  // whose amount is no number fails the cast: both are permanent errors.
  absl::StatusOr<consumer::Rows> logged = tx.Query(absl::StrCat(
      "INSERT INTO payment_log (event_id, order_id, amount)"
      " SELECT ",
      tx.Literal(e.id()), ", j->>'order', (j->>'amount')::numeric FROM", " (SELECT ",
      tx.Literal(e.payload()), "::jsonb AS j) AS p", " RETURNING order_id, amount"));
  if (!logged.ok()) return logged.status();
  const auto& row = logged->at(0);
  return tx.Command(
      absl::StrCat("INSERT INTO order_payments AS o (order_id, payments, paid) VALUES (",
                   tx.Literal(*row[0]), ", 1, ", *row[1],
                   ") ON CONFLICT (order_id) DO UPDATE SET payments = o.payments + 1,"
                   " paid = o.paid + EXCLUDED.paid"));
}

}  // namespace paid_orders
