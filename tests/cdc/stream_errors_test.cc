#include "cdc/stream_errors.h"

#include "gtest/gtest.h"

namespace cdc {
namespace {

TEST(StreamErrorsTest, ABrokenConnectionAShutdownOrABusySlotPassesOnItsOwn) {
  EXPECT_TRUE(IsTransientStreamError("", "server closed the connection unexpectedly"));
  EXPECT_TRUE(IsTransientStreamError("08006", "connection failure"));
  EXPECT_TRUE(IsTransientStreamError("57P01", "terminating connection"));
  EXPECT_TRUE(IsTransientStreamError("53300", "too many connections"));
  EXPECT_TRUE(IsTransientStreamError("55006", "replication slot is active for PID 7"));
}

// PostgreSQL 17's walsender, told to stop while its failover slot waits for a
// standby that is not streaming, ends the stream with this error; the soak met it
// at a primary's restart, and the publisher stopped (exit 1) instead of following
// the primary.
TEST(StreamErrorsTest, TheFailoverSlotWaitCutShortByAShutdownPassesOnItsOwn) {
  // The standby's slot inactive (what the soak met) or invalidated: 55000.
  EXPECT_TRUE(IsTransientStreamError(
      "55000",
      "ERROR:  replication slot \"standby_9\" specified in parameter "
      "\"synchronized_standby_slots\" does not have active_pid"));
  EXPECT_TRUE(IsTransientStreamError(
      "55000",
      "ERROR:  physical replication slot \"standby_9\" specified in parameter "
      "\"synchronized_standby_slots\" has been invalidated"));
  // The slot named is gone, or logical: 22023.
  EXPECT_TRUE(IsTransientStreamError(
      "22023",
      "ERROR:  replication slot \"standby_9\" specified in parameter "
      "\"synchronized_standby_slots\" does not exist"));
  // Whatever the server's language: the setting's name is never translated.
  EXPECT_TRUE(IsTransientStreamError(
      "55000",
      "FEHLER:  Replikations-Slot »standby_9«, der im Parameter "
      "»synchronized_standby_slots« angegeben ist, hat keine active_pid"));
}

TEST(StreamErrorsTest, WhatNeedsAnOperatorStopsThePublisher) {
  // The same codes without the setting: not the failover-slot wait.
  EXPECT_FALSE(
      IsTransientStreamError("22023", "invalid value for parameter \"proto_version\""));
  EXPECT_FALSE(IsTransientStreamError("42704", "publication \"outbox\" does not exist"));
  EXPECT_FALSE(
      IsTransientStreamError("58P01", "requested WAL segment has already been removed"));
  EXPECT_FALSE(
      IsTransientStreamError("55000", "can no longer get changes from replication slot"));
  // The setting named under another code is not the wait either.
  EXPECT_FALSE(IsTransientStreamError("42P17", "synchronized_standby_slots"));
}

// PostgreSQL 18's warning for a publication missing at a point of the WAL.
TEST(StreamErrorsTest, ASkippedPublicationIsToldInAnyLanguage) {
  const std::vector<std::string> ours = {"outbox_publisher"};
  EXPECT_EQ(SkippedPublication(
                "WARNING", "55000",
                "WARNING:  skipped loading publication \"outbox_publisher\"", ours),
            "outbox_publisher");
  // Translated (the words, the quotes): the code and the name tell it.
  EXPECT_EQ(SkippedPublication("WARNING", "55000",
                               "WARNUNG:  Laden der Publikation »outbox_publisher« "
                               "übersprungen",
                               ours),
            "outbox_publisher");
  // The English words name it even without a code (or with one not expected).
  EXPECT_EQ(
      SkippedPublication("WARNING", "", "skipped loading publication \"other\"", ours),
      "other");
}

TEST(StreamErrorsTest, OtherNoticesAreNoSkippedPublication) {
  const std::vector<std::string> ours = {"outbox_publisher"};
  // PostgreSQL 17's failover-slot wait: also a 55000 warning.
  EXPECT_EQ(
      SkippedPublication("WARNING", "55000",
                         "WARNUNG:  Replikations-Slot »outbox_publisher« im Parameter "
                         "»synchronized_standby_slots« hat keine active_pid",
                         ours),
      std::nullopt);
  // A 55000 warning that does not name the publication, or names a longer name.
  EXPECT_EQ(SkippedPublication("WARNING", "55000", "WARNUNG:  etwas anderes", ours),
            std::nullopt);
  EXPECT_EQ(SkippedPublication("WARNING", "55000",
                               "WARNUNG:  »outbox_publisher_2« übersprungen", ours),
            std::nullopt);
  // The name under another severity or code.
  EXPECT_EQ(SkippedPublication("NOTICE", "55000", "»outbox_publisher«", ours),
            std::nullopt);
  EXPECT_EQ(SkippedPublication("WARNING", "01000", "»outbox_publisher«", ours),
            std::nullopt);
}

}  // namespace
}  // namespace cdc
