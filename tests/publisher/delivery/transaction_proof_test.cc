// TransactionProof: a Kafka transaction is covered only when every record's report
// proves storage.
#include "publisher/delivery/transaction_proof.h"

#include "gtest/gtest.h"

namespace publisher {
namespace {

TEST(TransactionProofTest, EveryRecordProvenIsOk) {
  TransactionProof proof;
  uint64_t g = proof.Begin();
  proof.Expect();
  proof.Expect();
  proof.Report(g, absl::OkStatus());
  proof.Report(g, absl::OkStatus());
  EXPECT_TRUE(proof.Verdict().ok());
}

TEST(TransactionProofTest, AnEmptyTransactionIsOk) {
  TransactionProof proof;
  proof.Begin();
  EXPECT_TRUE(proof.Verdict().ok());
}

TEST(TransactionProofTest, ARecordWithoutAReportIsUnproven) {
  TransactionProof proof;
  uint64_t g = proof.Begin();
  proof.Expect();
  proof.Expect();
  proof.Report(g, absl::OkStatus());
  absl::Status v = proof.Verdict();
  EXPECT_EQ(v.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(v.message().find("1 of 2"), absl::string_view::npos) << v;
}

TEST(TransactionProofTest, ASuccessWithoutProofFailsTheTransaction) {
  TransactionProof proof;
  uint64_t g = proof.Begin();
  proof.Expect();
  proof.Expect();
  proof.Report(g, absl::OkStatus());
  // What DeliveryReportStatus makes of offset -1 (a duplicate sequence number).
  proof.Report(g, absl::UnavailableError("reported success without proof of storage"));
  absl::Status v = proof.Verdict();
  EXPECT_EQ(v.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(v.message().find("without proof of storage"), absl::string_view::npos) << v;
}

TEST(TransactionProofTest, ALateReportOfAnAbortedTransactionDoesNotCount) {
  TransactionProof proof;
  uint64_t old = proof.Begin();
  proof.Expect();
  uint64_t g = proof.Begin();  // The first was aborted; its report comes late.
  proof.Expect();
  proof.Report(old, absl::OkStatus());
  EXPECT_FALSE(proof.Verdict().ok()) << "a report of another transaction counted";
  proof.Report(old, absl::UnavailableError("purged"));
  proof.Report(g, absl::OkStatus());
  EXPECT_TRUE(proof.Verdict().ok());
}

TEST(TransactionProofTest, BeginForgetsTheFailureOfThePreviousTransaction) {
  TransactionProof proof;
  uint64_t g = proof.Begin();
  proof.Expect();
  proof.Report(g, absl::UnavailableError("failed"));
  ASSERT_FALSE(proof.Verdict().ok());
  proof.Begin();
  EXPECT_TRUE(proof.Verdict().ok());
}

}  // namespace
}  // namespace publisher
