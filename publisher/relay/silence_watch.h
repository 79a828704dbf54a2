// SilenceWatch: how long the replication server has said nothing. Pure:
// the relay tells it when it heard the server and when it could not listen.
//
// A connection can go quiet without closing: a NAT or firewall that dropped its
// state, a paused VM, a half-open socket. Neither side sees a FIN or RST, and a
// read waits forever. The server speaks at least every wal_sender_timeout / 2
// (30 s by default) on its own, and at once when a status update asks it to
// (reply requested), so silence for --replication-timeout means the path is
// gone: the relay then drops the connection and reconnects, as PostgreSQL's
// walreceiver does after wal_receiver_timeout.
//
// While the relay does not read (backpressure), messages wait in the socket and
// silence proves nothing: Pause() holds the clock until reading resumes.
#ifndef PUBLISHER_RELAY_SILENCE_WATCH_H_
#define PUBLISHER_RELAY_SILENCE_WATCH_H_

#include "absl/time/time.h"

namespace publisher {

class SilenceWatch {
 public:
  // `timeout` <= 0: never expires.
  explicit SilenceWatch(absl::Duration timeout = absl::ZeroDuration())
      : timeout_(timeout) {}

  // A session starts listening at `now`.
  void Start(absl::Time now) { last_heard_ = now; }
  // A message from the server arrived at `now`.
  void Heard(absl::Time now) { last_heard_ = now; }
  // The relay is not reading at `now` (paused): nothing can be heard, so nothing
  // counts as silence.
  void Pause(absl::Time now) { last_heard_ = now; }

  // How long the server has been silent at `now`.
  absl::Duration silent(absl::Time now) const {
    return now > last_heard_ ? now - last_heard_ : absl::ZeroDuration();
  }
  // Whether it has been silent for the whole timeout.
  bool Expired(absl::Time now) const {
    return timeout_ > absl::ZeroDuration() && silent(now) >= timeout_;
  }
  absl::Time last_heard() const { return last_heard_; }
  absl::Duration timeout() const { return timeout_; }

 private:
  absl::Duration timeout_;
  absl::Time last_heard_ = absl::InfinitePast();
};

}  // namespace publisher

#endif  // PUBLISHER_RELAY_SILENCE_WATCH_H_
