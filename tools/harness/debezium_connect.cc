// DebeziumConnect: debezium.sh start and stop.
#include "tools/harness/debezium_connect.h"

#include <signal.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "tools/harness/shell.h"

namespace harness {

absl::StatusOr<std::unique_ptr<DebeziumConnect>> DebeziumConnect::Start(
    const Options& o) {
  absl::StatusOr<std::string> out = RunCommand(
      absl::StrCat(HarnessPath("../bench/debezium.sh"), " start --owner ", getpid(),
                   " --bootstrap ", o.bootstrap, " --pg-port ", o.pg_port, " --slot ",
                   o.slot, " --publication ", o.publication, " --table ", o.tables,
                   " --topic-prefix ", o.topic_prefix, " --value-converter ",
                   o.value_converter, " --type-header ", o.type_header ? "yes" : "no"));
  if (!out.ok()) return out.status();
  std::unique_ptr<DebeziumConnect> d(new DebeziumConnect());
  d->dir_ = OutputValue(*out, "DEBEZIUM_DIR");
  d->pid_ = std::stoi(OutputValue(*out, "DEBEZIUM_PID"));
  return d;
}

DebeziumConnect::~DebeziumConnect() {
  (void)RunCommand(absl::StrCat(HarnessPath("../bench/debezium.sh"), " stop ", dir_));
}

bool DebeziumConnect::running() const { return kill(pid_, 0) == 0; }

std::string DebeziumConnect::LogTail() const {
  absl::StatusOr<std::string> tail =
      RunCommand(absl::StrCat("tail -n 30 ", dir_, "/connect.log"));
  return tail.ok() ? *tail : std::string(tail.status().message());
}

}  // namespace harness
