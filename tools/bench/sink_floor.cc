// bench-sink-floor: what producing alone costs. It drives the publisher's own
// KafkaSink (librdkafka with the publisher's producer settings) with records shaped
// like the publisher's (a key, an envelope-sized value, the three fixed headers) and
// serves the delivery reports, as the relay does, without reading or mapping
// anything. Its CPU per message (all threads, getrusage) is a floor under the
// publisher's: scripts/bench.sh reports it beside the publisher's figure.
//
// With RATE it paces instead: RATE messages per second, each keyed by its number
// and carrying its produce time (header produced_us, microseconds since the
// epoch), so that a consumer can time what the broker and the producer's settings
// alone add to the steady state's latency (outbox-bench's latency floor).
//
//   bench-sink-floor BROKERS TOPIC MESSAGES VALUE_BYTES [RATE]
//
// Prints "cpu_us_per_msg=<x> msgs_per_s=<y>".
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "publisher/kafka/kafka_sink.h"
#include "publisher/mapping/mapper.h"
#include "publisher/program/options.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

int Main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr,
                 "usage: bench-sink-floor BROKERS TOPIC MESSAGES VALUE_BYTES [RATE]\n");
    return 2;
  }
  long rate = argc == 6 ? std::atol(argv[5]) : 0;
  publisher::Config config;
  config.brokers = argv[1];
  std::string topic = argv[2];
  long messages = std::atol(argv[3]);
  size_t value_bytes = static_cast<size_t>(std::atol(argv[4]));
  common::Logger log(common::LogFormat::kText, common::LogLevel::kError);
  auto sink = publisher::KafkaSink::Create(publisher::KafkaOptionsFrom(config), log);
  if (!sink.ok() || !(*sink)->CheckReachable(absl::Seconds(15)).ok()) {
    std::fprintf(stderr, "bench-sink-floor: no broker at %s\n", argv[1]);
    return 1;
  }
  // The in-flight window of the publisher's defaults (--max-in-flight).
  const long window = publisher::Config().max_in_flight;
  long produced = 0, acknowledged = 0, failed = 0;
  auto on_delivery = [&](publisher::Delivery d) {
    ++acknowledged;
    failed += !d.status.ok();
  };
  publisher::OutboxRecord r;
  r.topic = topic;
  r.value.assign(value_bytes, 'v');
  double cpu_start = CpuSeconds();
  absl::Time start = absl::Now();
  while (acknowledged < messages) {
    while (produced < messages && produced - acknowledged < window) {
      absl::Time now = absl::Now();
      if (rate > 0) {
        absl::Time due = start + absl::Seconds(1) * produced / rate;
        if (due > now) break;  // Poll until then.
      }
      r.key =
          rate > 0 ? absl::StrCat(produced) : absl::StrCat("aggregate-", produced % 1000);
      r.id = absl::StrCat("00000000-0000-4000-8000-", 100000000000 + produced);
      r.headers = {{"id", r.id},
                   {"event_type", "Created"},
                   {"content_type", publisher::kEnvelopeContentType}};
      if (rate > 0)
        r.headers.emplace_back("produced_us", absl::StrCat(absl::ToUnixMicros(now)));
      r.timestamp_ms = absl::ToUnixMillis(now);
      absl::Status s = (*sink)->Produce(r, publisher::MessageToken{0, r.value.size()},
                                        publisher::RecordKind::kEvent);
      if (absl::IsResourceExhausted(s)) break;
      if (!s.ok()) {
        std::fprintf(stderr, "bench-sink-floor: %s\n", std::string(s.message()).c_str());
        return 1;
      }
      ++produced;
      // The relay serves reports between WAL messages; so does this loop.
      (*sink)->Poll(absl::ZeroDuration(), on_delivery);
    }
    absl::Duration wait = absl::Milliseconds(10);
    if (rate > 0 && produced < messages) {
      absl::Time due = start + absl::Seconds(1) * produced / rate;
      wait = std::clamp(due - absl::Now(), absl::ZeroDuration(), wait);
      // librdkafka waits in whole milliseconds: sleep a shorter gap instead of
      // spinning through it.
      if (wait < absl::Milliseconds(1)) {
        absl::SleepFor(wait);
        wait = absl::ZeroDuration();
      }
    }
    (*sink)->Poll(wait, on_delivery);
  }
  double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  double cpu = CpuSeconds() - cpu_start;
  if (failed > 0) {
    std::fprintf(stderr, "bench-sink-floor: %ld deliveries failed\n", failed);
    return 1;
  }
  std::printf("cpu_us_per_msg=%.3f msgs_per_s=%.0f\n", cpu * 1e6 / messages,
              messages / seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
