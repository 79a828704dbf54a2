// ParsePgTimestamp (a fast path for ISO DateStyle, absl::ParseTime otherwise) and
// DecodeByteaHex.
#include "publisher/mapping/pg_text.h"

#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace publisher {

namespace {

// `n` ASCII digits at text[at..] as a number, or -1.
int Digits(absl::string_view text, size_t at, size_t n) {
  if (at + n > text.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year >= 0):
// whole 400-year eras of 146097 days, then the day within the era, counting years
// from March so that February's leap day comes last.
int64_t DaysSinceEpoch(int year, int month, int day) {
  int y = month <= 2 ? year - 1 : year;
  int era = y / 400;  // y >= -1 here; the era of year -1 is irrelevant (year >= 1).
  int year_of_era = y - era * 400;
  int month_from_march = month > 2 ? month - 3 : month + 9;
  int day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
  int day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return int64_t{era} * 146097 + day_of_era - 719468;  // 719468: 0000-03-01 to 1970.
}

// The common shape of an ISO DateStyle date and time without its offset,
// "YYYY-MM-DD HH:MM:SS[.f{1,6}]", as UTC, by arithmetic rather than a time zone
// library: this runs once per row. nullopt for anything else (years past 9999,
// BC, infinity, ...).
std::optional<absl::Time> ParseIsoDateTimeFast(absl::string_view text) {
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' ||
      text[13] != ':' || text[16] != ':')
    return std::nullopt;
  int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2),
      second = Digits(text, 17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 59)
    return std::nullopt;
  if (day > DaysInMonth(year, month)) return std::nullopt;  // 31 April: not ours.
  int64_t micros = 0;
  if (text.size() > 19) {
    size_t digits = text.size() - 20;
    if (text[19] != '.' || digits == 0 || digits > 6) return std::nullopt;
    int fraction = Digits(text, 20, digits);
    if (fraction < 0) return std::nullopt;
    micros = fraction;
    for (; digits < 6; ++digits) micros *= 10;
  }
  int64_t seconds =
      DaysSinceEpoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return absl::FromUnixMicros(seconds * 1000000 + micros);
}

// A UTC offset after its sign: "hh", "hh:mm" or "hh:mm:ss", in seconds; nullopt
// otherwise.
std::optional<int> ParseOffset(absl::string_view off) {
  if (off.size() != 2 && off.size() != 5 && off.size() != 8) return std::nullopt;
  int seconds = 0;
  for (size_t at = 0, unit = 3600; at < off.size(); at += 3, unit /= 60) {
    if (at > 0 && off[at - 1] != ':') return std::nullopt;
    int v = Digits(off, at, 2);
    if (v < 0) return std::nullopt;
    seconds += v * static_cast<int>(unit);
  }
  return seconds;
}

}  // namespace

absl::StatusOr<absl::Time> ParsePgTimestamp(absl::string_view text) {
  // Split off a trailing "+hh[:mm[:ss]]" or "-hh..." offset after the time part.
  absl::string_view body = text;
  int offset_seconds = 0;
  size_t time_start = text.find(' ');
  size_t sign = text.find_first_of(
      "+-", time_start == absl::string_view::npos ? text.size() : time_start);
  if (time_start != absl::string_view::npos && sign != absl::string_view::npos) {
    body = text.substr(0, sign);
    std::optional<int> offset = ParseOffset(text.substr(sign + 1));
    if (!offset) {
      return absl::InvalidArgumentError(
          absl::StrCat("unrecognised timestamp \"", text, "\""));
    }
    offset_seconds = *offset * (text[sign] == '-' ? -1 : 1);
  }
  absl::Time t;
  std::string err;
  if (std::optional<absl::Time> fast = ParseIsoDateTimeFast(body)) {
    t = *fast;
  } else if (!absl::ParseTime("%Y-%m-%d %H:%M:%E*S", std::string(body),
                              absl::UTCTimeZone(), &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("unrecognised timestamp \"", text,
                                                   "\": expected ISO DateStyle output"));
  }
  return t - absl::Seconds(offset_seconds);
}

absl::StatusOr<std::string> DecodeByteaHex(absl::string_view text) {
  if (!absl::ConsumePrefix(&text, "\\x") || text.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        "bytea value is not in hex format: set bytea_output = 'hex' on the server");
  }
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("bytea value has a non-hex digit");
    }
  }
  return absl::HexStringToBytes(text);
}

}  // namespace publisher
