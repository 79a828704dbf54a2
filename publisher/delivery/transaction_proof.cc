// TransactionProof: counting proven deliveries of the open Kafka transaction.
#include "publisher/delivery/transaction_proof.h"

#include "absl/strings/str_cat.h"

namespace publisher {

void TransactionProof::Report(uint64_t generation, const absl::Status& status) {
  if (generation != generation_) return;  // Of an earlier, aborted transaction.
  if (status.ok()) {
    ++proven_;
  } else if (failure_.ok()) {
    failure_ = status;
  }
}

absl::Status TransactionProof::Verdict() const {
  if (!failure_.ok()) {
    return absl::UnavailableError(
        absl::StrCat("a record of the Kafka transaction has no proof of storage, so the "
                     "transaction is aborted and produced again: ",
                     failure_.message()));
  }
  if (proven_ < expected_) {
    return absl::UnavailableError(
        absl::StrCat(expected_ - proven_, " of ", expected_,
                     " record(s) of the Kafka transaction have no delivery report yet"));
  }
  return absl::OkStatus();
}

}  // namespace publisher
