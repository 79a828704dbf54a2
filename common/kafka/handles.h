// The one owner of every librdkafka object the product makes, and the one way to
// make a configured client.
//
// Each librdkafka type that is destroyed by a function of its own gets a
// std::unique_ptr alias here (KafkaClient, KafkaConf, KafkaQueue, ...). Code that
// makes such an object puts it into its alias at once, so it is freed on every way
// out, and never calls the destroy function itself. A client is made by
// NewKafkaClient: a configuration from NewKafkaConf, the callbacks, rd_kafka_new.
// Upgrading librdkafka touches these two headers first.
#ifndef COMMON_KAFKA_HANDLES_H_
#define COMMON_KAFKA_HANDLES_H_

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// CMake pins the release (packaging/librdkafka.env). Another rdkafka.h here means a
// target reads the machine's header but links the pinned library.
#if defined(OUTBOX_PINNED_RD_KAFKA_VERSION) && RD_KAFKA_VERSION != OUTBOX_PINNED_RD_KAFKA_VERSION
#error "rdkafka.h is not the pinned release's: link the target to PkgConfig::RDKAFKA"
#endif

namespace common {

template <typename T, void (*Destroy)(T*)>
struct KafkaDestroyer {
  void operator()(T* handle) const {
    if (handle != nullptr) Destroy(handle);
  }
};

// A librdkafka object owned through its own destroy function.
template <typename T, void (*Destroy)(T*)>
using KafkaHandle = std::unique_ptr<T, KafkaDestroyer<T, Destroy>>;

using KafkaClient = KafkaHandle<rd_kafka_t, rd_kafka_destroy>;
using KafkaConf = KafkaHandle<rd_kafka_conf_t, rd_kafka_conf_destroy>;
using KafkaTopicConf = KafkaHandle<rd_kafka_topic_conf_t, rd_kafka_topic_conf_destroy>;
using KafkaQueue = KafkaHandle<rd_kafka_queue_t, rd_kafka_queue_destroy>;
using KafkaTopic = KafkaHandle<rd_kafka_topic_t, rd_kafka_topic_destroy>;
using KafkaPartitionList =
    KafkaHandle<rd_kafka_topic_partition_list_t, rd_kafka_topic_partition_list_destroy>;
using KafkaEvent = KafkaHandle<rd_kafka_event_t, rd_kafka_event_destroy>;
using KafkaMessage = KafkaHandle<rd_kafka_message_t, rd_kafka_message_destroy>;
using KafkaAdminOptions = KafkaHandle<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>;
using KafkaNewTopic = KafkaHandle<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy>;
using KafkaHeaders = KafkaHandle<rd_kafka_headers_t, rd_kafka_headers_destroy>;
using KafkaError = KafkaHandle<rd_kafka_error_t, rd_kafka_error_destroy>;
// Metadata is const when librdkafka hands it out, and freed through a const pointer.
struct KafkaMetadataDestroyer {
  void operator()(const rd_kafka_metadata_t* md) const {
    if (md != nullptr) rd_kafka_metadata_destroy(md);
  }
};
using KafkaMetadata = std::unique_ptr<const rd_kafka_metadata_t, KafkaMetadataDestroyer>;

// What a configured property list does with a property librdkafka refuses.
enum class RefusedProperty {
  kFail,  // The configuration fails, naming the property (RefusedPropertyMessage).
  kSkip,  // It is left out: a one-shot consumer given the producer's -X properties.
};

// A client configuration: `properties`, then `overrides` (the user's -X) on top.
// With kFail, kInvalidArgument naming a property librdkafka refuses and why, never
// its value (RefusedPropertyMessage).
absl::StatusOr<KafkaConf> NewKafkaConf(
    std::vector<std::pair<std::string, std::string>> properties,
    const std::vector<std::pair<std::string, std::string>>& overrides,
    RefusedProperty refused = RefusedProperty::kFail);

// The callbacks a client is made with; those left null are librdkafka's defaults.
// `opaque` is what each callback gets as its opaque (rd_kafka_opaque() for log).
struct KafkaCallbacks {
  void* opaque = nullptr;
  void (*log)(const rd_kafka_t* rk, int level, const char* facility,
              const char* line) = nullptr;
  void (*error)(rd_kafka_t* rk, int err, const char* reason, void* opaque) = nullptr;
  void (*delivery)(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) = nullptr;
  void (*rebalance)(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                    rd_kafka_topic_partition_list_t* partitions, void* opaque) = nullptr;
  // Logs wait on the client's main queue for its poll instead of coming from
  // librdkafka's threads (log.queue plus rd_kafka_set_log_queue).
  bool logs_on_poll = false;
};

// A client of `type` made from `conf` with `callbacks`. kInvalidArgument saying
// "cannot create <what>: ..." when librdkafka refuses.
absl::StatusOr<KafkaClient> NewKafkaClient(rd_kafka_type_t type, KafkaConf conf,
                                           const KafkaCallbacks& callbacks,
                                           absl::string_view what);

}  // namespace common

#endif  // COMMON_KAFKA_HANDLES_H_
