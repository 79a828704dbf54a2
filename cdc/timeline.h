// Timeline history: where a server's WAL history branched. Pure: the libpq shell
// reads the file with TIMELINE_HISTORY (ReplicationStream::TimelineHistory).
//
// A promotion starts a new timeline; its history file lists every earlier
// timeline and the LSN at which the next one branched off it, one per line:
//   <timeline> TAB <switch LSN> TAB <reason>
// (PostgreSQL docs, "Timelines"; src/backend/access/transam/timeline.c). WAL of an
// earlier timeline past its switch LSN is not in this server's history: a position
// there names WAL this server never had.
#ifndef CDC_TIMELINE_H_
#define CDC_TIMELINE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdc/lsn.h"

namespace cdc {

struct TimelineSwitch {
  uint32_t timeline = 0;  // An earlier timeline ...
  Lsn end;                // ... which this history follows only up to here.
  bool operator==(const TimelineSwitch&) const = default;
};

// Parses a history file's content; kDataLoss on a malformed line. Blank lines and
// '#' comments are skipped.
[[nodiscard]] absl::StatusOr<std::vector<TimelineSwitch>> ParseTimelineHistory(
    absl::string_view content);

}  // namespace cdc

#endif  // CDC_TIMELINE_H_
