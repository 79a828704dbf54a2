// The publisher's flags as data: for each, its name, heading, help, how it sets
// Config and how --help shows its default. Parsing, the environment and --help
// read this table (common/flag_table.h; config.h's ParseConfig and Usage).
#ifndef PUBLISHER_PROGRAM_FLAGS_H_
#define PUBLISHER_PROGRAM_FLAGS_H_

#include "common/flag_table.h"
#include "publisher/program/config.h"

namespace publisher {

const common::FlagTable<Config>& ConfigFlags();

}  // namespace publisher

#endif  // PUBLISHER_PROGRAM_FLAGS_H_
