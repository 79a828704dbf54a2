// Versions: the publisher's own, and those of the librdkafka and libpq it runs
// with (the shared libraries loaded at run time, which may differ from the headers
// it was built against). For --version and the startup log line.
#ifndef PUBLISHER_PROGRAM_VERSIONS_H_
#define PUBLISHER_PROGRAM_VERSIONS_H_

#include <string>
#include <vector>

#include "common/log.h"

namespace publisher {

// "outbox-publisher 0.4.0 (librdkafka 2.0.2, libpq 15.5)".
std::string VersionLine();

// The same as log fields: version, librdkafka_version, libpq_version.
std::vector<common::Field> VersionFields();

}  // namespace publisher

#endif  // PUBLISHER_PROGRAM_VERSIONS_H_
