// Lsn parsing and formatting in PostgreSQL's "X/Y" notation.
#include "cdc/lsn.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cdc {
namespace {

// Parses 1-8 hex digits into a 32-bit half. Returns false on anything else.
bool ParseHexHalf(absl::string_view text, uint32_t* out) {
  if (text.empty() || text.size() > 8) return false;
  uint32_t value = 0;
  for (char c : text) {
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    value = (value << 4) | digit;
  }
  *out = value;
  return true;
}

}  // namespace

absl::StatusOr<Lsn> Lsn::Parse(absl::string_view text) {
  size_t slash = text.find('/');
  uint32_t hi, lo;
  if (slash == absl::string_view::npos || !ParseHexHalf(text.substr(0, slash), &hi) ||
      !ParseHexHalf(text.substr(slash + 1), &lo)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid LSN \"", text, "\": expected X/Y in hex, e.g. 0/16B3748"));
  }
  return Lsn((static_cast<uint64_t>(hi) << 32) | lo);
}

std::string Lsn::ToString() const {
  return absl::StrFormat("%X/%X", static_cast<uint32_t>(value_ >> 32),
                         static_cast<uint32_t>(value_));
}

std::ostream& operator<<(std::ostream& os, Lsn lsn) { return os << lsn.ToString(); }

}  // namespace cdc
