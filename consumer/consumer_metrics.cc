#include "consumer/consumer_metrics.h"

#include "absl/strings/str_cat.h"
#include "common/prometheus_text.h"

namespace consumer {
namespace {

constexpr char kPrefix[] = "outbox_consumer_";

void Family(std::string* out, const char* name, const char* type, const char* help,
            double value) {
  common::AppendMetricFamily(out, kPrefix, name, type, help, value);
}

}  // namespace

void ConsumerMetrics::Publish(const ConsumerStats& stats, size_t held, absl::Time at) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_ = stats;
  held_ = held;
  last_step_ = at;
}

std::string ConsumerMetrics::UnhealthyReason(absl::Time now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_step_ == absl::InfinitePast()) return "starting: no step taken yet";
  if (now - last_step_ > kStuckAfter) {
    return absl::StrCat("the consumer loop has not finished a step for ",
                        absl::FormatDuration(absl::Trunc(now - last_step_, absl::Seconds(1))),
                        " (a handler or the database does not answer)");
  }
  return "";
}

std::string ConsumerMetrics::RenderPrometheus(absl::Time now) const {
  bool up = UnhealthyReason(now).empty();
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Family(&out, "up", "gauge", "1 while /healthz would answer 200", up);
  Family(&out, "applied_total", "counter", "events whose effect committed", stats_.applied);
  Family(&out, "duplicates_total", "counter",
         "records whose id was already processed: skipped", stats_.duplicates);
  Family(&out, "retries_total", "counter", "records held back for a retry",
         stats_.retries);
  Family(&out, "dead_lettered_total", "counter", "records sent to the dead-letter topic",
         stats_.dead_lettered);
  Family(&out, "dropped_total", "counter",
         "records behind a held one, dropped to be read again", stats_.dropped);
  Family(&out, "pruned_total", "counter", "processed ids deleted after the retention",
         stats_.pruned);
  Family(&out, "held_records", "gauge", "records waiting for a retry (one per partition)",
         static_cast<double>(held_));
  return out;
}

}  // namespace consumer
