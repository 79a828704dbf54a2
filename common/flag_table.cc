// The flag table's code: names, values, the command line and --help.
#include "common/flag_table.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace common {

std::string FlagEnvName(absl::string_view flag) {
  return absl::StrCat("OUTBOX_",
                      absl::AsciiStrToUpper(absl::StrReplaceAll(flag, {{"-", "_"}})));
}

absl::Status BadFlagValue(absl::string_view flag, absl::string_view value,
                          absl::string_view accepted) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value \"", value, "\" for --", flag, ": ", accepted));
}

absl::Status RefuseBlank(absl::string_view flag, absl::string_view value) {
  if (!absl::StripAsciiWhitespace(value).empty()) return absl::OkStatus();
  return BadFlagValue(flag, value, "must not be empty");
}

absl::StatusOr<bool> ParseFlagBool(absl::string_view flag, absl::string_view value) {
  std::string s = absl::AsciiStrToLower(value);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return BadFlagValue(flag, value, "expected true or false");
}

absl::StatusOr<int64_t> ParseFlagPositive(absl::string_view flag,
                                          absl::string_view value) {
  int64_t n;
  if (!absl::SimpleAtoi(value, &n) || n < 1)
    return BadFlagValue(flag, value, "expected a positive integer");
  return n;
}

absl::StatusOr<absl::Duration> ParseFlagInterval(absl::string_view flag,
                                                 absl::string_view value) {
  absl::Duration d;
  if (!absl::ParseDuration(value, &d) || d <= absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return BadFlagValue(flag, value,
                        "expected a positive duration such as 500ms, 10s or 1m");
  }
  return d;
}

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  size_t digits = 0;
  while (digits < t.size() && absl::ascii_isdigit(static_cast<unsigned char>(t[digits])))
    ++digits;
  int64_t n = 0;
  if (digits == 0 || !absl::SimpleAtoi(t.substr(0, digits), &n)) {
    return absl::InvalidArgumentError("expected a size such as 512MB, 1GB or 1073741824");
  }
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(t.substr(digits)));
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  if (shift < 0) {
    return absl::InvalidArgumentError(
        "expected a size such as 512MB, 1GB or 1073741824 (units B, kB, MB, GB, TB)");
  }
  if (n > (std::numeric_limits<int64_t>::max() >> shift)) {
    return absl::InvalidArgumentError("size too large");
  }
  return n << shift;
}

std::string ShowBool(bool value) { return value ? "true" : "false"; }

std::string ShowBytes(int64_t bytes) {
  // The largest unit that divides it exactly, so the text reads back the same.
  for (auto [shift, unit] :
       {std::pair{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}}) {
    int64_t size = int64_t{1} << shift;
    if (bytes != 0 && bytes % size == 0) return absl::StrCat(bytes / size, unit);
  }
  return absl::StrCat(bytes, "B");
}

std::string ShowDuration(absl::Duration value) { return absl::FormatDuration(value); }

void FlagValues::Give(std::string flag, std::string value, std::string source) {
  given_[std::move(flag)] = {std::move(value), std::move(source)};
}

const std::pair<std::string, std::string>* FlagValues::Find(
    absl::string_view flag) const {
  auto it = given_.find(flag);
  return it == given_.end() ? nullptr : &it->second;
}

absl::StatusOr<bool> TakeFlagArgument(const std::vector<FlagShape>& flags,
                                      const std::vector<std::string>& args, size_t* i,
                                      FlagValues& values) {
  absl::string_view arg = args[*i];
  if (!absl::ConsumePrefix(&arg, "--")) return false;
  std::optional<std::string> value;
  if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
    value = std::string(arg.substr(eq + 1));
    arg = arg.substr(0, eq);
  }
  auto flag = std::find_if(flags.begin(), flags.end(),
                           [&](const FlagShape& f) { return f.name == arg; });
  if (flag == flags.end()) return false;
  if (!value) {
    bool next_is_value = *i + 1 < args.size() && !absl::StartsWith(args[*i + 1], "--");
    if (flag->is_bool) {
      // A boolean's value is optional: the next argument is it only if it reads
      // as one.
      bool next_is_bool = next_is_value && ParseFlagBool(flag->name, args[*i + 1]).ok();
      value = next_is_bool ? args[++*i] : "true";
    } else if (next_is_value) {
      value = args[++*i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", flag->name, " needs a value"));
    }
  }
  values.Give(flag->name, *std::move(value), "");
  return true;
}

namespace {

// Help starts in this column (a longer usage puts it on the next line), and lines
// wrap before this width.
constexpr size_t kHelpColumn = 30;
constexpr size_t kWidth = 90;

// `text` in lines of at most kWidth - kHelpColumn characters (a longer word
// alone on its line), each but the first indented to kHelpColumn.
std::string Wrap(absl::string_view text) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > kWidth - kHelpColumn) {
      absl::StrAppend(&out, line, "\n", std::string(kHelpColumn, ' '));
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  return out + line;
}

}  // namespace

std::string RenderFlagHelp(const std::vector<FlagHelpLine>& lines) {
  std::vector<std::string> groups;
  for (const FlagHelpLine& l : lines) {
    if (std::find(groups.begin(), groups.end(), l.group) == groups.end())
      groups.push_back(l.group);
  }
  std::string out;
  for (const std::string& group : groups) {
    absl::StrAppend(&out, out.empty() ? "" : "\n", group, ":\n");
    for (const FlagHelpLine& l : lines) {
      if (l.group != group) continue;
      std::string usage = absl::StrCat("  ", l.usage);
      absl::StrAppend(&out, usage,
                      usage.size() < kHelpColumn
                          ? std::string(kHelpColumn - usage.size(), ' ')
                          : absl::StrCat("\n", std::string(kHelpColumn, ' ')),
                      Wrap(l.shown_default.empty()
                               ? l.help
                               : absl::StrCat(l.help, " [", l.shown_default, "]")),
                      "\n");
    }
  }
  return out;
}

}  // namespace common
