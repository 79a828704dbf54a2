#include "tools/chaos/writer.h"

#include <algorithm>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tools/harness/pg_cluster.h"

namespace chaos {

using harness::PgSession;

void Writer::Run(std::atomic<bool>& stop) {
  std::vector<int64_t> next_seq(options_.aggregates, 0);
  int64_t next_id = 0;
  std::unique_ptr<PgSession> sql;
  absl::Time due = absl::Now();
  while (!stop && written_ < options_.rows) {
    if (!sql) {
      auto s = harness::ConnectTo(pg_);
      if (!s.ok()) {
        absl::SleepFor(absl::Milliseconds(200));
        continue;
      }
      sql = std::move(*s);
    }
    int n = std::uniform_int_distribution<int>(1, options_.max_tx_rows)(rng_);
    n = static_cast<int>(std::min<int64_t>(n, options_.rows - written_));
    absl::Status s = sql->Exec(Transaction(n, next_id, next_seq)).status();
    absl::Time now = absl::Now();
    if (!s.ok()) {
      // Lost the connection mid-statement: it may or may not have committed. The
      // table is the history, so nothing needs remembering here.
      sql.reset();
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      commit_us_.resize(static_cast<size_t>(next_id), 0);
      for (int64_t id = next_id - n; id < next_id; ++id)
        commit_us_[static_cast<size_t>(id)] = absl::ToUnixMicros(now);
    }
    written_ += n;
    ++transactions_;
    // By the clock: a slow commit does not lower the rate, and a stall is made up
    // for by a second's worth of transactions at most.
    due = std::max(due + pace_, now - absl::Seconds(1));
    absl::SleepFor(due - absl::Now());
  }
  done_ = true;
}

// One transaction of `n` events (ids from `next_id`, numbered per aggregate), as
// table rows in one INSERT; or, with messages, one statement per event in order,
// each also noted in chaos_history (the history, as the table is for rows).
std::string Writer::Transaction(int n, int64_t& next_id, std::vector<int64_t>& next_seq) {
  std::vector<std::string> values, statements;
  for (int i = 0; i < n; ++i) {
    int agg = std::uniform_int_distribution<int>(0, options_.aggregates - 1)(rng_);
    std::string id = absl::StrCat("r", next_id++);
    int64_t seq = next_seq[agg]++;
    // The soak's events are the consumer kit's example's: OrderPaid, one unit paid
    // for the order of the aggregate.
    std::string value =
        options_.soak
            ? absl::StrCat("('", id, "', 'chaos', 'a", agg, "', ", seq,
                           ", 'OrderPaid', '{\"order\": \"a", agg, "\", \"amount\": 1, "
                           "\"n\": ", i, "}')")
            : absl::StrCat("('", id, "', 'chaos', 'a", agg, "', ", seq, ", 'E', '{\"n\": ", i,
                           "}')");
    if (options_.writer == Options::WriterMode::kTable) {
      values.push_back(value);
      continue;
    }
    bool message = options_.writer == Options::WriterMode::kMessage ||
                   std::uniform_int_distribution<int>(0, 1)(rng_) == 1;
    statements.push_back(absl::StrCat("INSERT INTO chaos_history VALUES ('", id, "', 'a",
                                      agg, "', ", seq, ")"));
    if (message) {
      statements.push_back(
          absl::StrCat("SELECT pg_logical_emit_message(true, 'outbox', '{\"id\": \"", id,
                       "\", \"aggregate_type\": \"chaos\", \"aggregate_id\": \"a", agg,
                       "\", \"event_type\": \"E\", \"payload\": {\"n\": ", i, "}}')"));
    } else {
      statements.push_back(
          absl::StrCat("INSERT INTO outbox (id, aggregate_type, "
                       "aggregate_id, seq, event_type, payload) VALUES ",
                       value));
    }
  }
  if (options_.writer == Options::WriterMode::kTable) {
    return absl::StrCat(
        "INSERT INTO outbox (id, aggregate_type, aggregate_id, seq, event_type, "
        "payload) "
        "VALUES ",
        absl::StrJoin(values, ", "));
  }
  // One simple-query string runs as one transaction.
  return absl::StrJoin(statements, "; ");
}

std::optional<absl::Time> Writer::CommitTime(const std::string& id) {
  int64_t number = 0;
  if (id.empty() || !absl::SimpleAtoi(id.substr(1), &number) || number < 0)
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<size_t>(number) >= commit_us_.size()) return std::nullopt;
  int64_t us = commit_us_[static_cast<size_t>(number)];
  if (us == 0) return std::nullopt;
  return absl::FromUnixMicros(us);
}

std::vector<absl::Time> Writer::CommitTimes() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<absl::Time> out(commit_us_.size(), absl::InfinitePast());
  for (size_t i = 0; i < commit_us_.size(); ++i)
    if (commit_us_[i] != 0) out[i] = absl::FromUnixMicros(commit_us_[i]);
  return out;
}

}  // namespace chaos
