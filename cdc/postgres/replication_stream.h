// The libpq shell around a logical replication connection: everything that talks to
// the walsender lives here, and nothing else does. Parsing is cdc/framing.h's job and
// decoding cdc/pgoutput.h's; this class only moves bytes and runs commands.
//
// Lifecycle: Connect -> IdentifySystem (and catalog work through sql(), see
// cdc/postgres/catalog.h) -> Start -> Read/SendStatus ... -> Stop. One thread at a time.
//
// Status codes: kUnavailable = connection trouble, retrying later may work;
// kFailedPrecondition = the server or its objects need fixing (wal_level, a slot of
// another plugin, a missing publication); kInvalidArgument = bad names or conninfo;
// kDataLoss = the server sent bytes that do not parse.
#ifndef CDC_POSTGRES_REPLICATION_STREAM_H_
#define CDC_POSTGRES_REPLICATION_STREAM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cdc/framing.h"
#include "cdc/lsn.h"
#include "cdc/pgoutput.h"
#include "cdc/wal_stream.h"
#include "common/postgres/sql_connection.h"

typedef void (*PQnoticeReceiver)(void* arg, const PGresult* res);

namespace cdc {

// IDENTIFY_SYSTEM's answer.
struct SystemIdentity {
  std::string system_id;
  uint32_t timeline = 0;
  Lsn xlog_pos;  // Current WAL flush position.
  std::string database;
};

// START_REPLICATION options for pgoutput.
struct StartOptions {
  std::string slot;
  std::vector<std::string> publications;
  Lsn start_lsn;  // 0/0 (or anything below the slot) = the slot's confirmed_flush_lsn.
  int proto_version = 1;   // 2 allows `streaming`.
  bool messages = false;   // Send pg_logical_emit_message() messages.
  bool streaming = false;  // Stream large in-progress transactions (protocol 2, PG14+).
  bool binary = false;     // Binary column values (PG14+).
};

class ReplicationStream : public WalStream {
 public:
  // How long Read naps when the socket is empty, so that small messages are read
  // in batches; after a read that filled libpq's buffer it reads again at once
  // (docs/tuning.md).
  static constexpr absl::Duration kDefaultReadCoalesce = absl::Microseconds(100);

  // Connects with `conninfo` (key=value string or URI; "" = PG* environment), adding
  // replication=database. Fails with kUnavailable when the server cannot be reached
  // and kFailedPrecondition when it refuses (authentication, no replication role).
  // `setup_timeout` bounds the connection attempt (libpq's connect_timeout, unless
  // the conninfo sets one) and every statement until Start has returned (the
  // SqlConnection's answer timeout): a connection that goes silent during set-up
  // fails instead of waiting forever. Once streaming, the caller watches silence.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReplicationStream>> Connect(
      const std::string& conninfo,
      absl::Duration setup_timeout = absl::InfiniteDuration());

  // Where the server's notices and warnings go (severity, as PostgreSQL names it
  // in English, and the message with its detail and hint): the caller's log, so
  // that its lines stay its format. Without one, libpq's default prints them raw
  // on stderr. A PostgreSQL 17 walsender whose failover slot waits for an absent
  // standby warns about it over and over.
  using NoticeHandler =
      std::function<void(const std::string& severity, const std::string& message)>;
  void OnServerNotice(NoticeHandler handler) { notice_handler_ = std::move(handler); }

  ~ReplicationStream() override;
  ReplicationStream(const ReplicationStream&) = delete;
  ReplicationStream& operator=(const ReplicationStream&) = delete;

  int server_version() const;  // e.g. 150004.

  [[nodiscard]] absl::StatusOr<SystemIdentity> IdentifySystem();

  // TIMELINE_HISTORY: the content of `timeline`'s history file (timeline 2 and
  // later; timeline 1 has none). See cdc/timeline.h.
  [[nodiscard]] absl::StatusOr<std::string> TimelineHistory(uint32_t timeline);

  // START_REPLICATION SLOT ... LOGICAL; the connection is in copy-both mode after.
  // kUnavailable when the slot is active in another connection ("replication slot
  // ... is active for PID ...": wait and retry) or the server is going away.
  [[nodiscard]] absl::Status Start(const StartOptions& options);

  // Waits until `deadline` for the next server message. kUnavailable when the
  // connection breaks or the server ends it for a transient reason (shutdown,
  // pg_terminate_backend); kFailedPrecondition when it ends the stream for a
  // lasting one (a dropped publication, WAL the slot needs was removed). Returns nullopt
  // when none arrived in time. A keepalive that requests a reply is answered at once with
  // the last flush LSN given to SendStatus (otherwise wal_sender_timeout would end the
  // connection while the caller is busy), and still returned. An XLogData's payload
  // stays valid until the next call of Read or Stop.
  [[nodiscard]] absl::StatusOr<std::optional<ServerMessage>> Read(
      absl::Time deadline) override;

  // Sends a standby status update confirming `flush` (write and apply report the
  // same, or the highest WAL end received if that is larger for write). The flush
  // LSN never goes backwards: a smaller value re-sends the previous one.
  [[nodiscard]] absl::Status SendStatus(Lsn flush, bool reply_requested) override;

  // How long Read naps, once per call, when nothing is buffered, before it waits on
  // the socket (see Read's implementation for why). Zero wakes for every segment.
  void set_read_coalesce(absl::Duration d) { read_coalesce_ = d; }

  Lsn confirmed_flush() const { return flush_; }
  Lsn received_wal_end() const { return received_; }

  // Ends the copy (CopyDone), drains what the server still sends until `deadline`
  // and completes the command. The connection can then run commands again.
  [[nodiscard]] absl::Status Stop(absl::Time deadline) override;

  // The connection, for catalog reads and EnsureSlot/EnsurePublication before
  // Start (cdc/postgres/catalog.h). Not while streaming.
  common::SqlConnection& sql() { return *sql_; }

 private:
  explicit ReplicationStream(std::unique_ptr<common::SqlConnection> sql);

  absl::Status ConnectionError(absl::string_view what);
  // libpq's notice receiver. PostgreSQL 18 no longer ends the stream when a
  // publication it streams is dropped: it warns (cdc::SkippedPublication) and
  // streams on without its changes. That warning ends the stream here as the
  // error did before: confirming past it would skip every row meanwhile.
  static void OnNotice(void* self, const PGresult* notice);
  NoticeHandler notice_handler_;
  PQnoticeReceiver previous_receiver_ = nullptr;
  void* previous_receiver_arg_ = nullptr;
  std::vector<std::string> publications_;           // Those streamed for (Start).
  std::optional<std::string> skipped_publication_;  // Its name, once one came.
  absl::Status WaitSocket(absl::Time deadline, bool* ready);
  void FreeBuffer();
  // PQconsumeInput, noting that a read from the socket happened (since_read_).
  bool ConsumeInput();

  // Bytes of messages Read returned since the last read from the socket; at
  // kFullRead or more that read probably filled libpq's buffer.
  static constexpr size_t kFullRead = 8192;
  size_t since_read_ = 0;

  std::unique_ptr<common::SqlConnection> sql_;
  PGconn* conn_;            // sql_'s.
  char* buffer_ = nullptr;  // Last CopyData from PQgetCopyData, freed on next Read.
  bool streaming_ = false;
  Lsn flush_;
  Lsn received_;
  absl::Duration read_coalesce_ = kDefaultReadCoalesce;
};

}  // namespace cdc

#endif  // CDC_POSTGRES_REPLICATION_STREAM_H_
