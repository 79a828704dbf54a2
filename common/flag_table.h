// A program's flags as data, and the code that reads that data: parsing the
// command line, the environment (every flag is also OUTBOX_<FLAG>, the command
// line winning) and --help. Both programs (the publisher, the consumer kit's
// example service) keep a table of FlagDef and hand it here. Pure.
//
//   --name value, --name=value; a boolean flag takes true/false/yes/no/on/off/1/0
//   or nothing ("--create" is "--create=true").
//   --help groups the flags under their headings and shows each default in units a
//   person reads: 1GiB, 10s, true.
#ifndef COMMON_FLAG_TABLE_H_
#define COMMON_FLAG_TABLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/kafka_properties.h"

namespace common {

// One flag. `Options` is the struct the program's flags fill.
template <typename Options>
struct FlagDef {
  const char* name;   // "max-in-flight": --max-in-flight, OUTBOX_MAX_IN_FLIGHT.
  const char* group;  // Its heading in --help ("Kafka").
  const char* value;  // The value's name in --help ("N"); "" for a boolean flag.
  const char* help;
  // Sets the flag from `value`; a refusal is one sentence naming the value and
  // what is accepted (BadFlagValue).
  std::function<absl::Status(Options&, absl::string_view value)> set;
  // The flag's value in `options`, as --help shows a default; null: none shown.
  std::function<std::string(const Options&)> show = nullptr;

  bool is_bool() const { return value[0] == '\0'; }
};

// BadFlagValue's sentence for an empty or blank value.
absl::Status RefuseBlank(absl::string_view flag, absl::string_view value);

// A flag whose value is text kept in `member` (and shown as its default), refused
// when blank unless `may_be_blank`.
template <typename Options>
FlagDef<Options> TextFlag(const char* name, const char* group, const char* value,
                          const char* help, std::string Options::*member,
                          bool may_be_blank = false) {
  return {name,
          group,
          value,
          help,
          [=](Options& o, absl::string_view v) -> absl::Status {
            if (!may_be_blank) {
              absl::Status blank = RefuseBlank(name, v);
              if (!blank.ok()) return blank;
            }
            o.*member = std::string(v);
            return absl::OkStatus();
          },
          [member](const Options& o) { return o.*member; }};
}

// OUTBOX_<FLAG>: metrics-port -> OUTBOX_METRICS_PORT.
std::string FlagEnvName(absl::string_view flag);

// The refusal of a value: invalid value "x" for --flag: what is accepted.
absl::Status BadFlagValue(absl::string_view flag, absl::string_view value,
                          absl::string_view accepted);

// Values of the common kinds, refused with BadFlagValue.
absl::StatusOr<bool> ParseFlagBool(absl::string_view flag, absl::string_view value);
absl::StatusOr<int64_t> ParseFlagPositive(absl::string_view flag,
                                          absl::string_view value);
// A positive duration: 500ms, 10s, 1m.
absl::StatusOr<absl::Duration> ParseFlagInterval(absl::string_view flag,
                                                 absl::string_view value);
// "1GB", "512MB", "64kB", "1048576": a byte size with an optional unit (B, kB, MB,
// GB, TB, 1024-based as in PostgreSQL; KiB, MiB, GiB, TiB also accepted).
[[nodiscard]] absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// Defaults as --help shows them.
std::string ShowBool(bool value);                // "true"
std::string ShowBytes(int64_t bytes);            // "1GiB", "16MiB", "1500B"
std::string ShowDuration(absl::Duration value);  // "10s", "168h"

// A flag whose value is a positive duration (ParseFlagInterval) kept in `member`,
// shown as ShowDuration does.
template <typename Options>
FlagDef<Options> IntervalFlag(const char* name, const char* group, const char* help,
                              absl::Duration Options::*member) {
  return {name,
          group,
          "DURATION",
          help,
          [=](Options& o, absl::string_view v) -> absl::Status {
            absl::StatusOr<absl::Duration> d = ParseFlagInterval(name, v);
            if (!d.ok()) return d.status();
            o.*member = *d;
            return absl::OkStatus();
          },
          [member](const Options& o) { return ShowDuration(o.*member); }};
}

// The values given for a table's flags, each with where it came from; a flag given
// on the command line replaces its environment variable, even one whose value
// would be refused.
class FlagValues {
 public:
  void Give(std::string flag, std::string value, std::string source);
  // nullptr when the flag was not given.
  const std::pair<std::string, std::string>* Find(absl::string_view flag) const;

 private:
  // flag -> (value, where: "" for the command line, " (from OUTBOX_X)").
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> given_;
};

// How one flag reads on the command line, whatever its table's Options.
struct FlagShape {
  std::string name;
  bool is_bool;
};

// Reads args[*i] when it is "--<name>" or "--<name>=<value>" of one of `flags`,
// with its value (the next argument, unless a boolean flag has none), into
// `values`, and moves *i to the last argument read. Returns false, reading
// nothing, when args[*i] is not such a flag; an error when it is one without its
// value.
absl::StatusOr<bool> TakeFlagArgument(const std::vector<FlagShape>& flags,
                                      const std::vector<std::string>& args, size_t* i,
                                      FlagValues& values);

// One line of --help's flags.
struct FlagHelpLine {
  std::string group;
  std::string usage;  // "--max-in-flight N".
  std::string help;
  std::string shown_default;  // "" = none shown.
};

// The lines under their group headings, in the order groups first appear.
std::string RenderFlagHelp(const std::vector<FlagHelpLine>& lines);

// A program's table.
template <typename Options>
class FlagTable {
 public:
  explicit FlagTable(std::vector<FlagDef<Options>> flags) : flags_(std::move(flags)) {
    for (const FlagDef<Options>& f : flags_) shapes_.push_back({f.name, f.is_bool()});
  }

  const std::vector<FlagDef<Options>>& flags() const { return flags_; }
  bool Has(absl::string_view name) const { return Find(name) != nullptr; }

  // OUTBOX_<FLAG> of every flag that `env` has.
  void TakeEnvironment(const EnvLookup& env, FlagValues& values) const {
    for (const FlagDef<Options>& f : flags_) {
      std::string var = FlagEnvName(f.name);
      if (std::optional<std::string> v = env(var))
        values.Give(f.name, *v, absl::StrCat(" (from ", var, ")"));
    }
  }

  // TakeFlagArgument for this table's flags.
  absl::StatusOr<bool> TakeArgument(const std::vector<std::string>& args, size_t* i,
                                    FlagValues& values) const {
    return TakeFlagArgument(shapes_, args, i, values);
  }

  // Sets every given flag in table order; a refusal says where its value came
  // from.
  absl::Status Apply(const FlagValues& values, Options& options) const {
    for (const FlagDef<Options>& f : flags_) {
      const std::pair<std::string, std::string>* given = values.Find(f.name);
      if (given == nullptr) continue;
      absl::Status s = f.set(options, given->first);
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat(s.message(), given->second));
      }
    }
    return absl::OkStatus();
  }

  // --help's lines for the flags, defaults from `defaults` (RenderFlagHelp).
  std::vector<FlagHelpLine> HelpLines(const Options& defaults) const {
    std::vector<FlagHelpLine> lines;
    for (const FlagDef<Options>& f : flags_) {
      lines.push_back({f.group,
                       f.is_bool() ? absl::StrCat("--", f.name)
                                   : absl::StrCat("--", f.name, " ", f.value),
                       f.help, f.show ? f.show(defaults) : ""});
    }
    return lines;
  }

 private:
  const FlagDef<Options>* Find(absl::string_view name) const {
    for (const FlagDef<Options>& f : flags_) {
      if (name == f.name) return &f;
    }
    return nullptr;
  }

  std::vector<FlagDef<Options>> flags_;
  std::vector<FlagShape> shapes_;
};

}  // namespace common

#endif  // COMMON_FLAG_TABLE_H_
