// Pins the envelope's field numbers and types to docs/design.md: consumers depend
// on them.
#include "gtest/gtest.h"
#include "outbox/v1/envelope.pb.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

void ExpectField(const Descriptor* d, const char* name, int number,
                 FieldDescriptor::Type type) {
  const FieldDescriptor* f = d->FindFieldByName(name);
  ASSERT_NE(f, nullptr) << d->full_name() << "." << name;
  EXPECT_EQ(f->number(), number) << name;
  EXPECT_EQ(f->type(), type) << name;
}

TEST(EnvelopeTest, FieldNumbersMatchTheSpec) {
  const Descriptor* d = outbox::v1::Envelope::descriptor();
  EXPECT_EQ(d->full_name(), "outbox.v1.Envelope");
  ExpectField(d, "id", 1, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "aggregate_type", 2, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "aggregate_id", 3, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "event_type", 4, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "payload", 5, FieldDescriptor::TYPE_BYTES);
  ExpectField(d, "headers", 6, FieldDescriptor::TYPE_MESSAGE);
  EXPECT_TRUE(d->FindFieldByName("headers")->is_map());
  ExpectField(d, "created_at", 7, FieldDescriptor::TYPE_MESSAGE);
  EXPECT_EQ(d->FindFieldByName("created_at")->message_type()->full_name(),
            "google.protobuf.Timestamp");
  ExpectField(d, "source", 8, FieldDescriptor::TYPE_MESSAGE);
  ExpectField(d, "content_type", 9, FieldDescriptor::TYPE_STRING);
}

TEST(EnvelopeTest, SourceFieldsMatchTheSpec) {
  const Descriptor* d = outbox::v1::Source::descriptor();
  ExpectField(d, "lsn", 1, FieldDescriptor::TYPE_UINT64);
  ExpectField(d, "commit_lsn", 2, FieldDescriptor::TYPE_UINT64);
  ExpectField(d, "xid", 3, FieldDescriptor::TYPE_UINT32);
  ExpectField(d, "commit_time", 4, FieldDescriptor::TYPE_MESSAGE);
  ExpectField(d, "database", 5, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "schema", 6, FieldDescriptor::TYPE_STRING);
  ExpectField(d, "table", 7, FieldDescriptor::TYPE_STRING);
}

TEST(EnvelopeTest, SerializesAndParses) {
  outbox::v1::Envelope e;
  e.set_id("0b7e1a50-3c5d-4f0e-9a55-5d1f2b9d8e01");
  e.set_payload(std::string("\x00\xff", 2));
  (*e.mutable_headers())["trace"] = "abc";
  e.mutable_source()->set_lsn(42);
  std::string wire = e.SerializeAsString();
  outbox::v1::Envelope back;
  ASSERT_TRUE(back.ParseFromString(wire));
  EXPECT_EQ(back.id(), e.id());
  EXPECT_EQ(back.payload(), e.payload());
  EXPECT_EQ(back.headers().at("trace"), "abc");
  EXPECT_EQ(back.source().lsn(), 42u);
}

}  // namespace
