// Writers for every pgoutput message, mirroring proto.c's logicalrep_write_*.
#include "cdc/pgoutput_encoder.h"

#include "cdc/byte_writer.h"

namespace cdc::pgoutput {
namespace {

void WriteXid(ByteWriter& out, const std::optional<uint32_t>& xid) {
  if (xid) out.BE32(*xid);
}

void WriteTuple(ByteWriter& out, const Tuple& tuple) {
  out.BE16(static_cast<uint16_t>(tuple.size()));
  for (const Value& v : tuple) {
    out.U8(static_cast<uint8_t>(v.kind));
    if (v.kind == Value::Kind::kText || v.kind == Value::Kind::kBinary) {
      out.BE32(static_cast<uint32_t>(v.data.size())).Bytes(v.data);
    }
  }
}

struct Writer {
  ByteWriter& out;

  void operator()(const Begin& m) {
    out.U8('B').BE64(m.final_lsn.value()).BE64(m.commit_time).BE32(m.xid);
  }
  void operator()(const Commit& m) {
    out.U8('C').U8(m.flags).BE64(m.commit_lsn.value()).BE64(m.end_lsn.value());
    out.BE64(m.commit_time);
  }
  void operator()(const Origin& m) {
    out.U8('O').BE64(m.commit_lsn.value()).CString(m.name);
  }
  void operator()(const Relation& m) {
    out.U8('R');
    WriteXid(out, m.xid);
    out.BE32(m.oid).CString(m.schema).CString(m.name).U8(m.replica_identity);
    out.BE16(static_cast<uint16_t>(m.columns.size()));
    for (const Column& c : m.columns) {
      out.U8(c.flags).CString(c.name).BE32(c.type_oid);
      out.BE32(static_cast<uint32_t>(c.type_modifier));
    }
  }
  void operator()(const Type& m) {
    out.U8('Y');
    WriteXid(out, m.xid);
    out.BE32(m.oid).CString(m.schema).CString(m.name);
  }
  void operator()(const Insert& m) {
    out.U8('I');
    WriteXid(out, m.xid);
    out.BE32(m.relation_oid).U8('N');
    WriteTuple(out, m.new_tuple);
  }
  void operator()(const Update& m) {
    out.U8('U');
    WriteXid(out, m.xid);
    out.BE32(m.relation_oid);
    if (m.old_kind != 0) {
      out.U8(m.old_kind);
      WriteTuple(out, m.old_tuple);
    }
    out.U8('N');
    WriteTuple(out, m.new_tuple);
  }
  void operator()(const Delete& m) {
    out.U8('D');
    WriteXid(out, m.xid);
    out.BE32(m.relation_oid).U8(m.old_kind);
    WriteTuple(out, m.old_tuple);
  }
  void operator()(const Truncate& m) {
    out.U8('T');
    WriteXid(out, m.xid);
    out.BE32(static_cast<uint32_t>(m.relation_oids.size())).U8(m.options);
    for (uint32_t oid : m.relation_oids) out.BE32(oid);
  }
  void operator()(const Message& m) {
    out.U8('M');
    WriteXid(out, m.xid);
    out.U8(m.flags).BE64(m.lsn.value()).CString(m.prefix);
    out.BE32(static_cast<uint32_t>(m.content.size())).Bytes(m.content);
  }
  void operator()(const StreamStart& m) { out.U8('S').BE32(m.xid).U8(m.first_segment); }
  void operator()(const StreamStop&) { out.U8('E'); }
  void operator()(const StreamCommit& m) {
    out.U8('c').BE32(m.xid).U8(m.flags).BE64(m.commit_lsn.value());
    out.BE64(m.end_lsn.value()).BE64(m.commit_time);
  }
  void operator()(const StreamAbort& m) { out.U8('A').BE32(m.xid).BE32(m.subxid); }
};

}  // namespace

std::string Encode(const PgOutputMessage& message) {
  ByteWriter out;
  std::visit(Writer{out}, message);
  return out.Take();
}

}  // namespace cdc::pgoutput
