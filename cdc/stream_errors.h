// How a server error that ends (or refuses) a replication stream is taken: one
// that may pass on its own, after which the publisher connects again, or one that
// needs an operator (the publisher stops); and the warning that stands for such an
// error on PostgreSQL 18. Pure.
//
// Told by the SQLSTATE; where a code is too broad, by the name of a setting the
// message quotes (names are never translated); never by the words, which follow
// the server's lc_messages.
#ifndef CDC_STREAM_ERRORS_H_
#define CDC_STREAM_ERRORS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cdc {

// 55006 (object_in_use): another connection streams the slot.
inline constexpr char kObjectInUse[] = "55006";

// Transient: no code (the connection broke), connection exceptions (08),
// operator intervention such as a shutdown or pg_terminate_backend (57),
// insufficient resources (53), a slot in use by another connection (55006, e.g.
// the other half of a hot-standby pair), and PostgreSQL 17's failover-slot wait
// cut short by a shutdown. A walsender whose failover slot waits for a standby
// named in synchronized_standby_slots warns while that standby is not streaming;
// told to stop meanwhile, it ends the stream with the same words as an ERROR
// (55000 when the standby's slot is inactive or invalidated, 22023 when it does not
// exist or is not physical) instead of a clean end. The server is going down,
// the slot is where it was, and the next primary (or this one, restarted)
// streams it. Those codes name many other errors (55000 an invalidated logical
// slot too), so the setting's name tells these apart.
bool IsTransientStreamError(absl::string_view sqlstate, absl::string_view message);

// PostgreSQL 18 no longer ends the stream when a publication it streams for does
// not exist at a point of the WAL: its walsender sends a WARNING ("skipped
// loading publication "NAME"", 55000 object_not_in_prerequisite_state) and
// streams on without that publication's changes. Which of `publications` a
// notice says was skipped, or nullopt for any other notice. Told by the
// severity's untranslated name, the code and the publication's name in the
// message, so in any server language (the English words also count, whatever
// the code). PostgreSQL 17's failover-slot wait also warns with 55000; it names
// synchronized_standby_slots and is not taken for one.
std::optional<std::string> SkippedPublication(
    absl::string_view severity, absl::string_view sqlstate, absl::string_view message,
    const std::vector<std::string>& publications);

}  // namespace cdc

#endif  // CDC_STREAM_ERRORS_H_
