// PublishedHorizon: offer, cover, record.
#include "publisher/recovery/horizon.h"

namespace publisher {

void PublishedHorizon::Offer(uint64_t xid, cdc::Lsn lsn, const RelayProgress& progress) {
  candidate_ = Candidate{xid, lsn, progress.session, progress.acknowledged};
}

std::optional<uint64_t> PublishedHorizon::Due(const RelayProgress& progress) {
  if (!candidate_) return std::nullopt;
  if (candidate_->session != progress.session) {
    candidate_.reset();  // Another session's server: its WAL positions mean nothing here.
    return std::nullopt;
  }
  if (progress.confirmed < candidate_->lsn) return std::nullopt;
  // Covered. Worth a write only if something was published since the last one;
  // an acknowledgement counted at the offer may belong to a transaction below X.
  bool published = !recorded_acknowledged_ ||
                   progress.acknowledged > *recorded_acknowledged_;
  if (!published) {
    candidate_.reset();
    return std::nullopt;
  }
  due_ = candidate_->xid;
  return due_;
}

void PublishedHorizon::Recorded() {
  if (candidate_) recorded_acknowledged_ = candidate_->acknowledged;
  candidate_.reset();
  due_.reset();
}

}  // namespace publisher
