// ReplicationStream: the walsender conversation over libpq. See the PostgreSQL docs
// "Streaming Replication Protocol" for the commands and the CopyBoth sub-protocol.
#include "cdc/postgres/replication_stream.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cdc/catalog_facts.h"
#include "cdc/pg_time.h"
#include "cdc/postgres/catalog.h"
#include "cdc/stream_errors.h"
#include "common/status_macros.h"

namespace cdc {

absl::StatusOr<std::unique_ptr<ReplicationStream>> ReplicationStream::Connect(
    const std::string& conninfo, absl::Duration setup_timeout) {
  int connect_timeout = 0;  // libpq: wait forever.
  if (setup_timeout != absl::InfiniteDuration()) {
    connect_timeout = static_cast<int>(std::max<int64_t>(
        1, absl::ToInt64Seconds(absl::Ceil(setup_timeout, absl::Seconds(1)))));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<common::SqlConnection> sql,
      common::SqlConnection::Connect(conninfo, common::SqlConnection::Mode::kReplication,
                                     "outbox-publisher", connect_timeout));
  sql->set_answer_timeout(setup_timeout);
  return std::unique_ptr<ReplicationStream>(new ReplicationStream(std::move(sql)));
}

ReplicationStream::ReplicationStream(std::unique_ptr<common::SqlConnection> sql)
    : sql_(std::move(sql)), conn_(sql_->raw()) {
  // libpq's default receiver ignores its argument (there is no way to read it).
  previous_receiver_ = PQsetNoticeReceiver(conn_, &ReplicationStream::OnNotice, this);
}

void ReplicationStream::OnNotice(void* arg, const PGresult* notice) {
  auto* self = static_cast<ReplicationStream*>(arg);
  std::string message = common::TrimmedPgMessage(PQresultErrorMessage(notice));
  const char* severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
  const char* sqlstate = PQresultErrorField(notice, PG_DIAG_SQLSTATE);
  if (std::optional<std::string> skipped = SkippedPublication(
          severity != nullptr ? severity : "", sqlstate != nullptr ? sqlstate : "",
          message, self->publications_)) {
    if (!self->skipped_publication_) self->skipped_publication_ = std::move(skipped);
    return;
  }
  if (self->notice_handler_) {
    self->notice_handler_(severity != nullptr ? severity : "", message);
    return;
  }
  // Anything else as libpq would have it (its default prints to stderr).
  if (self->previous_receiver_ != nullptr) {
    self->previous_receiver_(self->previous_receiver_arg_, notice);
  }
}

ReplicationStream::~ReplicationStream() { FreeBuffer(); }

int ReplicationStream::server_version() const { return sql_->server_version(); }

void ReplicationStream::FreeBuffer() {
  if (buffer_ != nullptr) PQfreemem(buffer_);
  buffer_ = nullptr;
}

absl::Status ReplicationStream::ConnectionError(absl::string_view what) {
  return sql_->ConnectionError(what);
}

absl::StatusOr<SystemIdentity> ReplicationStream::IdentifySystem() {
  ASSIGN_OR_RETURN(common::SqlRows rows, sql_->Query("IDENTIFY_SYSTEM"));
  if (rows.size() != 1 || rows[0].size() < 4 || !rows[0][1] || !rows[0][2]) {
    return absl::DataLossError("IDENTIFY_SYSTEM returned an unexpected shape");
  }
  SystemIdentity id;
  id.system_id = rows[0][0].value_or("");
  id.timeline = static_cast<uint32_t>(std::strtoul(rows[0][1]->c_str(), nullptr, 10));
  ASSIGN_OR_RETURN(id.xlog_pos, Lsn::Parse(*rows[0][2]));
  id.database = rows[0][3].value_or("");
  return id;
}

absl::StatusOr<std::string> ReplicationStream::TimelineHistory(uint32_t timeline) {
  ASSIGN_OR_RETURN(common::SqlRows rows,
                   sql_->Query(absl::StrCat("TIMELINE_HISTORY ", timeline)));
  // filename, content.
  if (rows.size() != 1 || rows[0].size() != 2 || !rows[0][1]) {
    return absl::DataLossError("TIMELINE_HISTORY returned an unexpected shape");
  }
  return *rows[0][1];
}

absl::Status ReplicationStream::Start(const StartOptions& options) {
  RETURN_IF_ERROR(ValidateSlotName(options.slot));
  if (options.publications.empty()) {
    return absl::InvalidArgumentError("START_REPLICATION needs at least one publication");
  }
  publications_ = options.publications;
  std::vector<std::string> pubs;
  for (const std::string& p : options.publications) pubs.push_back(sql_->Quote(p));
  std::vector<std::string> opts = {
      absl::StrCat("proto_version '", options.proto_version, "'"),
      absl::StrCat("publication_names ", sql_->Literal(absl::StrJoin(pubs, ",")))};
  if (options.messages) opts.push_back("messages 'true'");
  if (options.streaming) opts.push_back("streaming 'on'");
  if (options.binary) opts.push_back("binary 'true'");
  std::string sql =
      absl::StrCat("START_REPLICATION SLOT ", sql_->Quote(options.slot), " LOGICAL ",
                   options.start_lsn.ToString(), " (", absl::StrJoin(opts, ", "), ")");
  ASSIGN_OR_RETURN(common::PgResult r, sql_->Execute(sql));
  if (PQresultStatus(r.get()) != PGRES_COPY_BOTH) {
    std::string message =
        absl::StrCat("START_REPLICATION failed: ",
                     common::TrimmedPgMessage(PQresultErrorMessage(r.get())));
    std::string state = common::ResultSqlState(r.get());
    // 55006 (object_in_use): another connection streams the slot. Told by the
    // code, never by the words, which follow the server's lc_messages.
    if (state == kObjectInUse) return SlotInUseError(message);
    if (PQstatus(conn_) != CONNECTION_OK || IsTransientStreamError(state, message)) {
      return absl::UnavailableError(message);
    }
    return absl::FailedPreconditionError(message);
  }
  streaming_ = true;
  flush_ = std::max(flush_, options.start_lsn);
  return absl::OkStatus();
}

bool ReplicationStream::ConsumeInput() {
  since_read_ = 0;
  return PQconsumeInput(conn_) != 0;
}

absl::Status ReplicationStream::WaitSocket(absl::Time deadline, bool* ready) {
  int fd = PQsocket(conn_);
  if (fd < 0) return ConnectionError("replication connection lost");
  while (true) {
    absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    pollfd p{fd, POLLIN, 0};
    int timeout_ms = static_cast<int>(
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
    int n = poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    *ready = n > 0;
    return absl::OkStatus();
  }
}

absl::StatusOr<std::optional<ServerMessage>> ReplicationStream::Read(
    absl::Time deadline) {
  if (!streaming_) return absl::FailedPreconditionError("Read before Start");
  bool napped = false;
  while (true) {
    FreeBuffer();
    int n = PQgetCopyData(conn_, &buffer_, /*async=*/1);
    // A warning read before this message: nothing after it may be confirmed.
    if (skipped_publication_) {
      // The same words as the error that earlier releases end the stream with.
      return absl::FailedPreconditionError(absl::StrCat(
          "server ended the replication stream: publication \"", *skipped_publication_,
          "\" does not exist at this point in the WAL (the server streamed on without "
          "it, skipping its changes): recreate the publication, or fix --publication"));
    }
    if (n > 0) {
      since_read_ += static_cast<size_t>(n);
      ASSIGN_OR_RETURN(ServerMessage m,
                       ParseServerMessage(absl::string_view(buffer_, n)));
      if (auto* x = std::get_if<XLogData>(&m)) {
        received_ = std::max(received_, x->wal_end);
      } else if (auto* k = std::get_if<Keepalive>(&m)) {
        received_ = std::max(received_, k->wal_end);
        if (k->reply_requested) RETURN_IF_ERROR(SendStatus(flush_, false));
      }
      return std::optional<ServerMessage>(m);
    }
    if (n == -1) {
      streaming_ = false;
      common::PgResult r(PQgetResult(conn_));
      std::string why = r ? common::TrimmedPgMessage(PQresultErrorMessage(r.get())) : "";
      std::string message = absl::StrCat("server ended the replication stream",
                                         why.empty() ? "" : ": ", why);
      // A dropped publication or removed WAL will not fix itself by reconnecting.
      if (r && !IsTransientStreamError(common::ResultSqlState(r.get()), why) &&
          PQstatus(conn_) == CONNECTION_OK) {
        return absl::FailedPreconditionError(message);
      }
      return absl::UnavailableError(message);
    }
    if (n == -2) return ConnectionError("replication stream read failed");
    // libpq holds no whole message. When the last read from the socket brought
    // about a buffer's worth (libpq's is 16 KiB at first), the socket probably holds
    // more: read it again at once (large rows would otherwise come one buffer per nap).
    if (since_read_ >= kFullRead) {
      if (!ConsumeInput()) return ConnectionError("replication stream read failed");
      continue;
    }
    // The socket is empty too. Mid-backlog the walsender sends every message as a
    // segment of its own; a reader that wakes for each one spends its time in the
    // kernel and, on a small machine, takes the CPU the walsender needs to send
    // more. A short nap lets a batch gather, read by one recv. Once per call, and
    // never past the deadline: it adds at most read_coalesce to a message's latency.
    if (!napped && read_coalesce_ > absl::ZeroDuration() &&
        absl::Now() + read_coalesce_ < deadline) {
      napped = true;
      absl::SleepFor(read_coalesce_);
      if (!ConsumeInput()) return ConnectionError("replication stream read failed");
      continue;
    }
    bool ready = false;
    RETURN_IF_ERROR(WaitSocket(deadline, &ready));
    if (!ready) return std::optional<ServerMessage>();
    if (!ConsumeInput()) return ConnectionError("replication stream read failed");
  }
}

absl::Status ReplicationStream::SendStatus(Lsn flush, bool reply_requested) {
  if (!streaming_) return absl::FailedPreconditionError("SendStatus before Start");
  flush_ = std::max(flush_, flush);
  std::string bytes = BuildStandbyStatus({std::max(received_, flush_), flush_, flush_,
                                          ToPgTimestamp(absl::Now()), reply_requested});
  if (PQputCopyData(conn_, bytes.data(), static_cast<int>(bytes.size())) != 1 ||
      PQflush(conn_) != 0) {
    return ConnectionError("sending standby status update failed");
  }
  return absl::OkStatus();
}

absl::Status ReplicationStream::Stop(absl::Time deadline) {
  FreeBuffer();
  if (!streaming_) return absl::OkStatus();
  streaming_ = false;
  if (PQputCopyEnd(conn_, nullptr) != 1 || PQflush(conn_) != 0) {
    return ConnectionError("ending the replication stream failed");
  }
  // Drain what the server sent before it saw our CopyDone, then its CopyDone.
  while (true) {
    int n = PQgetCopyData(conn_, &buffer_, /*async=*/1);
    FreeBuffer();
    if (n > 0) continue;
    if (n == -1) break;
    if (n == -2) return ConnectionError("ending the replication stream failed");
    bool ready = false;
    RETURN_IF_ERROR(WaitSocket(deadline, &ready));
    if (!ready)
      return absl::DeadlineExceededError("server did not end the replication stream");
    if (PQconsumeInput(conn_) == 0)
      return ConnectionError("ending the replication stream failed");
  }
  // Collect the command's results without blocking past the deadline.
  while (true) {
    while (PQisBusy(conn_)) {
      bool ready = false;
      RETURN_IF_ERROR(WaitSocket(deadline, &ready));
      if (!ready)
        return absl::DeadlineExceededError("server did not finish START_REPLICATION");
      if (PQconsumeInput(conn_) == 0)
        return ConnectionError("ending the replication stream failed");
    }
    common::PgResult r(PQgetResult(conn_));
    if (r == nullptr) return absl::OkStatus();
    ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      return absl::UnavailableError(
          absl::StrCat("replication stream ended with an error: ",
                       common::TrimmedPgMessage(PQresultErrorMessage(r.get()))));
    }
  }
}

}  // namespace cdc
