// The running process's Environment (common/kafka_properties.h): its variables
// and the files it may read.
#ifndef COMMON_PROCESS_ENVIRONMENT_H_
#define COMMON_PROCESS_ENVIRONMENT_H_

#include "common/kafka_properties.h"

namespace common {

Environment ProcessEnvironment();

}  // namespace common

#endif  // COMMON_PROCESS_ENVIRONMENT_H_
