// Relay: what outlives a session; each run is a RelayRun (relay_run.cc).
#include "publisher/relay/relay.h"

#include <utility>

#include "publisher/relay/relay_run.h"

namespace publisher {

Relay::Relay(RelayOptions options, common::Logger& log, Clock clock)
    : options_(std::move(options)),
      log_(log),
      clock_(std::move(clock)),
      dead_letters_(options_.on_error, options_.dead_letter_topic) {}

absl::Status Relay::Run(cdc::WalStream& stream, Sink& sink,
                        const std::atomic<bool>& stop) {
  if (!options_.message_prefix.empty() && !messages_) {
    absl::StatusOr<MessageEvents> m =
        MessageEvents::Bind(options_.columns, options_.topic, options_.value_format);
    if (!m.ok()) return m.status();
    messages_ = std::move(*m);
  }
  RelayContext context{
      options_, log_,     clock_,   dead_letters_, messages_ ? &*messages_ : nullptr,
      stats_,   tracker_, monitor_, fault_};
  RelayRun run(context, stream, sink, stop);
  absl::Status s = run.Execute();
  // A session that ends aborted is a rewind, whatever ended it (a delivery without
  // proof of storage, a Kafka transaction that failed): the supervisor recreates the
  // producer and reads again from the slot.
  if (absl::IsAborted(s)) ++stats_.rewinds;
  return s;
}

}  // namespace publisher
