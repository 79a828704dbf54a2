// Versions: compiled-in for the publisher, asked of the loaded libraries for the rest.
#include "publisher/program/versions.h"

#include <libpq-fe.h>
#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"

namespace publisher {
namespace {

// PQlibVersion() is major * 10000 + minor from PostgreSQL 10 on.
std::string LibpqVersion() {
  int v = PQlibVersion();
  return absl::StrCat(v / 10000, ".", v % 10000);
}

// The linked librdkafka's version, and a warning when it is not the release that
// ships (packaging/librdkafka.env): a build for comparisons (OUTBOX_LIBRDKAFKA=system).
std::string LibrdkafkaVersion() {
  std::string linked = rd_kafka_version_str();
  if (linked == OUTBOX_LIBRDKAFKA_PIN) return linked;
  return absl::StrCat(linked, ", not the pinned ", OUTBOX_LIBRDKAFKA_PIN);
}

}  // namespace

std::string VersionLine() {
  return absl::StrCat("outbox-publisher ", OUTBOX_PUBLISHER_VERSION, " (librdkafka ",
                      LibrdkafkaVersion(), ", libpq ", LibpqVersion(), ")");
}

std::vector<common::Field> VersionFields() {
  return {{"version", std::string(OUTBOX_PUBLISHER_VERSION)},
          {"librdkafka_version", std::string(rd_kafka_version_str())},
          {"libpq_version", LibpqVersion()}};
}

}  // namespace publisher
