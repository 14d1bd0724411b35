// Wire vectors of the transports: the call stamp, the tcp and ucx piece headers, hellos and listener
// handles, the shm listener handle and a whole shm ring segment (header, slot info, data) as the real
// sender writes it, read back by the real receiver.
#include <gtest/gtest.h>
#include <unistd.h>

#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/config.hpp"
#include "core/error.hpp"
#include "transport/base/call_stamp.hpp"
#include "transport/shm/shm_handle.hpp"
#include "transport/shm/shm_segment.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport/tcp/tcp_piece.hpp"
#include "transport/ucx/ucx_wire.hpp"
#include "wire_vectors.hpp"

namespace hetccl::test::wire {
namespace {

using namespace hetccl::transport;

template <typename C>
Bytes asBytes(const C& c) {
  return Bytes(c.begin(), c.end());
}

/// The error `decode` (a fixed-size record's decoder: wire, problem) gives for `b`, "" when it accepts
/// it. Bytes past a record are ignored and a short record is padded with zeros, so the decoder never
/// reads outside the buffer.
template <size_t N, typename Decode>
std::string recordProblem(const Bytes& b, Decode decode) {
  std::array<unsigned char, N> wire{};
  std::memcpy(wire.data(), b.data(), std::min(b.size(), N));
  std::string problem;
  return decode(wire.data(), problem) ? std::string() : problem;
}

/// The InvalidArgument text `decode` throws for the 128-byte Handle holding `b`, "" when it accepts it.
template <typename Decode>
std::string handleProblem(const Bytes& b, Decode decode) {
  Handle h;
  std::memcpy(h.bytes.data(), b.data(), std::min(b.size(), h.bytes.size()));
  try {
    decode(h);
    return "";
  } catch (const InvalidArgument& e) {
    return e.what();
  }
}

// ---------------------------------------------------------------- call stamp

std::vector<Field> stampFields(size_t at, const std::string& prefix) {
  return {{at + 0, 4, prefix + "word0 bits 0-31: magic 0x48435331 'HCS1'"},
          {at + 4, 1, prefix + "word0 bits 32-39: call kind"},
          {at + 5, 1, prefix + "word0 bits 40-47: data type (0xff none)"},
          {at + 6, 1, prefix + "word0 bits 48-55: reduction op (0xff none)"},
          {at + 7, 1, prefix + "word0 bits 56-63: flags (0)"},
          {at + 8, 8, prefix + "word1: call sequence number"},
          {at + 16, 8, prefix + "word2: message bytes"},
          {at + 24, 4, prefix + "word3 bits 0-31: piece number"},
          {at + 28, 4, prefix + "word3 bits 32-63: root + 1 (0: not rooted)"}};
}

CallStamp allReduceStamp() {
  CallStamp s;
  s.kind = 0;  // AllReduce
  s.type = 7;  // float32
  s.op = 0;    // sum
  s.seq = 12;
  s.bytes = 4096;
  s.piece = 3;
  s.root = -1;
  return s;
}

void checkStamp(const std::string& name, const CallStamp& s, const std::string& input, const std::string& described) {
  SCOPED_TRACE(name);
  Bytes encoded(kCallStampBytes);
  encodeCallStamp(s, encoded.data());
  Bytes committed = checkVector({name, "call stamp (src/transport/base/call_stamp.hpp): 4 little-endian u64 words",
                                 {"input: " + input}, stampFields(0, ""), encoded});
  if (committed.empty()) return;
  std::string why;
  auto back = decodeCallStamp(committed.data(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, s);
  EXPECT_EQ(describeCall(*back), described);
  // The word view (what a GPU writes with 64-bit stream operations) names the same stamp.
  auto words = callStampWords(s);
  EXPECT_EQ(decodeCallStampWords(words), s);
}

TEST(WireVectors, CallStamp) {
  checkStamp("call_stamp.allreduce", allReduceStamp(), "AllReduce float32 sum, seq 12, 4096 bytes, piece 3",
             "AllReduce #12 (4096 B, float32, sum, piece 3)");
  CallStamp b;
  b.kind = 1;  // Broadcast
  b.type = 9;  // bfloat16
  b.op = kNoOp;
  b.seq = 0x0102030405060708ull;
  b.bytes = 0x10000000000ull;
  b.piece = 0;
  b.root = 2;
  checkStamp("call_stamp.broadcast_root2", b, "Broadcast bfloat16, seq 0x0102030405060708, 2^40 bytes, piece 0, root 2",
             "Broadcast #72623859790382856 (1099511627776 B, bfloat16, root 2)");
  CallStamp g;  // a group of several operations, mixed types
  g.seq = 5;
  g.bytes = 0;
  checkStamp("call_stamp.group", g, "group (kind 0xfe, type 0xff, op 0xff), seq 5, 0 bytes", "group #5 (0 B)");
}

TEST(WireVectors, CallStampNegative) {
  runNegativeCases("call_stamp", [](const Bytes& b) -> std::string {
    if (b.size() != kCallStampBytes) return "call stamp of " + std::to_string(b.size()) + " bytes";  // fixed size
    std::string why;
    return decodeCallStamp(b.data(), &why) ? "" : why;
  });
}

// ---------------------------------------------------------------- tcp

TEST(WireVectors, TcpPieceHeader) {
  tcp::PieceHeader h;
  h.flags = kPieceHasCrc;
  h.number = 5;
  h.messageBytes = 1 << 20;
  h.pieceBytes = 65536;
  h.crc = 0xdeadbeef;
  h.stamp = callStampWords(allReduceStamp());
  std::vector<Field> fields = {{0, 4, "u32 magic 'HCTP'"},          {4, 4, "u32 flags (bit 0: crc present)"},
                               {8, 8, "u64 piece number"},          {16, 8, "u64 message bytes"},
                               {24, 8, "u64 piece bytes"},          {32, 4, "u32 crc32c of the payload"},
                               {36, 4, "u32 reserved (0)"}};
  for (const Field& f : stampFields(40, "call stamp ")) fields.push_back(f);
  Bytes committed = checkVector({"tcp_piece", "tcp piece header (src/transport/tcp/tcp_piece.hpp), tcp protocol (hello) version 2",
                                 {"input: piece 5 of a 1 MiB message, 65536 bytes, crc 0xdeadbeef (flag set), stamp = "
                                  "call_stamp.allreduce"},
                                 fields, asBytes(h.encode())});
  if (committed.empty()) return;
  std::string problem;
  auto back = tcp::PieceHeader::decode(committed.data(), problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->flags, h.flags);
  EXPECT_EQ(back->number, h.number);
  EXPECT_EQ(back->messageBytes, h.messageBytes);
  EXPECT_EQ(back->pieceBytes, h.pieceBytes);
  EXPECT_EQ(back->crc, h.crc);
  EXPECT_EQ(back->stamp, h.stamp);
  EXPECT_EQ(pieceMismatch(*back, 5, 1 << 20, 65536), "");
  EXPECT_EQ(decodeCallStampWords(back->stamp), allReduceStamp());
}

TEST(WireVectors, TcpHello) {
  tcp::Hello h;
  h.socketIndex = 1;
  h.socketCount = 4;
  h.fromRank = 0;
  h.toRank = 3;
  h.token = 0x0123456789abcdefull;
  Bytes committed = checkVector(
      {"tcp_hello", "tcp socket hello (src/transport/tcp/tcp_hello.hpp), version 2: 26 bytes, no padding",
       {"input: socket 1 of 4, rank 0 -> rank 3, token 0x0123456789abcdef"},
       {{0, 4, "u32 magic 'HCTH'"}, {4, 2, "u16 version (2)"}, {6, 2, "u16 socket index"}, {8, 2, "u16 socket count"},
        {10, 4, "i32 from rank"}, {14, 4, "i32 to rank"}, {18, 8, "u64 connection token"}},
       asBytes(h.encode())});
  if (committed.empty()) return;
  std::string problem;
  auto back = tcp::Hello::decode(committed.data(), problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->socketIndex, 1);
  EXPECT_EQ(back->socketCount, 4);
  EXPECT_EQ(back->fromRank, 0);
  EXPECT_EQ(back->toRank, 3);
  EXPECT_EQ(back->token, h.token);
}

TEST(WireVectors, TcpHandle) {
  const std::vector<Field> fields = {{0, 4, "u32 magic 'TCPH'"},   {4, 2, "u16 version (1)"},
                                     {6, 2, "u16 family (4 or 6)"}, {8, 2, "u16 port"},
                                     {10, 16, "address"},           {26, 4, "u32 IPv6 scope id"},
                                     {30, 98, "unused (0)"}};
  for (auto [name, text] : {std::pair<std::string, std::string>{"tcp_handle.ipv4", "10.20.30.40:45678"},
                            std::pair<std::string, std::string>{"tcp_handle.ipv6", "[fd00::abcd]:45679"}}) {
    SCOPED_TRACE(name);
    net::SocketAddress a = net::SocketAddress::parse(text);
    Bytes committed = checkVector({name, "tcp listener handle (src/transport/tcp/tcp_hello.hpp), 128 bytes published "
                                         "through the bootstrap",
                                   {"input: " + text}, fields, asBytes(tcp::encodeAddressHandle(a).bytes)});
    if (committed.empty()) continue;
    Handle h;
    std::memcpy(h.bytes.data(), committed.data(), h.bytes.size());
    EXPECT_EQ(tcp::decodeAddressHandle(h).toString(), a.toString());
  }
}

TEST(WireVectors, TcpNegative) {
  runNegativeCases("tcp_piece", [](const Bytes& b) {
    return recordProblem<tcp::PieceHeader::kWireBytes>(b, tcp::PieceHeader::decode);
  });
  runNegativeCases("tcp_hello",
                   [](const Bytes& b) { return recordProblem<tcp::Hello::kWireBytes>(b, tcp::Hello::decode); });
  runNegativeCases("tcp_handle", [](const Bytes& b) { return handleProblem(b, tcp::decodeAddressHandle); });
}

// ---------------------------------------------------------------- ucx

TEST(WireVectors, UcxPieceHeader) {
  ucx::PieceHeader h;
  h.flags = kPieceHasCrc;
  h.number = 9;
  h.messageBytes = 3 * ucx::kPieceBytes;
  h.pieceBytes = ucx::kPieceBytes;
  h.crc = 0xdeadbeef;
  h.token = 0x0123456789abcdefull;
  h.stamp = callStampWords(allReduceStamp());
  std::vector<Field> fields = {{0, 4, "u32 magic 'HCUP'"},
                               {4, 4, "u32 flags (bit 0: crc present)"},
                               {8, 8, "u64 piece number"},
                               {16, 8, "u64 message bytes"},
                               {24, 8, "u64 piece bytes (at most 1 MiB)"},
                               {32, 4, "u32 crc32c of the payload"},
                               {36, 4, "u32 reserved (0)"},
                               {40, 8, "u64 connection token"}};
  for (const Field& f : stampFields(48, "call stamp ")) fields.push_back(f);
  Bytes committed = checkVector({"ucx_piece",
                                 "ucx piece header (src/transport/ucx/ucx_wire.hpp), ucx protocol (hello) version 1",
                                 {"input: piece 9 of a 3 MiB message, 1 MiB (kPieceBytes), crc 0xdeadbeef (flag set),",
                                  "token 0x0123456789abcdef, stamp = call_stamp.allreduce"},
                                 fields, asBytes(h.encode())});
  if (committed.empty()) return;
  std::string problem;
  auto back = ucx::PieceHeader::decode(committed.data(), problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->flags, h.flags);
  EXPECT_EQ(back->number, h.number);
  EXPECT_EQ(back->messageBytes, h.messageBytes);
  EXPECT_EQ(back->pieceBytes, h.pieceBytes);
  EXPECT_EQ(back->crc, h.crc);
  EXPECT_EQ(back->token, h.token);
  EXPECT_EQ(back->stamp, h.stamp);
  EXPECT_EQ(pieceMismatch(*back, 9, 3 * ucx::kPieceBytes, ucx::kPieceBytes), "");
  EXPECT_EQ(decodeCallStampWords(back->stamp), allReduceStamp());
}

TEST(WireVectors, UcxHello) {
  ucx::Hello h;
  h.fromRank = 2;
  h.toRank = 5;
  h.token = 0x0123456789abcdefull;
  Bytes committed = checkVector(
      {"ucx_hello", "ucx endpoint hello (src/transport/ucx/ucx_wire.hpp), version 1: 24 bytes, no padding",
       {"input: rank 2 -> rank 5, token 0x0123456789abcdef"},
       {{0, 4, "u32 magic 'HCUH'"}, {4, 2, "u16 version (1)"}, {6, 2, "u16 reserved (0)"}, {8, 4, "i32 from rank"},
        {12, 4, "i32 to rank"}, {16, 8, "u64 connection token"}},
       asBytes(h.encode())});
  if (committed.empty()) return;
  std::string problem;
  auto back = ucx::Hello::decode(committed.data(), problem);
  ASSERT_TRUE(back) << problem;
  EXPECT_EQ(back->fromRank, 2);
  EXPECT_EQ(back->toRank, 5);
  EXPECT_EQ(back->token, h.token);
}

TEST(WireVectors, UcxHandle) {
  const std::vector<Field> fields = {{0, 4, "u32 magic 'UCXH'"},   {4, 2, "u16 version (1)"},
                                     {6, 2, "u16 family (4 or 6)"}, {8, 2, "u16 port"},
                                     {10, 16, "address"},           {26, 4, "u32 IPv6 scope id"},
                                     {30, 98, "unused (0)"}};
  struct Case {
    std::string name, text;
    uint32_t scope;
  };
  for (const Case& c :
       {Case{"ucx_handle.ipv4", "10.20.30.40:45678", 0}, Case{"ucx_handle.ipv6", "[fe80::abcd]:45679", 3}}) {
    SCOPED_TRACE(c.name);
    net::SocketAddress a = net::SocketAddress::parse(c.text);
    if (c.scope) reinterpret_cast<sockaddr_in6&>(a.storage).sin6_scope_id = c.scope;
    Bytes committed = checkVector({c.name, "ucx listener handle (src/transport/ucx/ucx_wire.hpp), 128 bytes published "
                                           "through the bootstrap",
                                   {"input: " + c.text + (c.scope ? ", scope id " + std::to_string(c.scope) : "")},
                                   fields, asBytes(ucx::encodeAddressHandle(a).bytes)});
    if (committed.empty()) continue;
    Handle h;
    std::memcpy(h.bytes.data(), committed.data(), h.bytes.size());
    const net::SocketAddress back = ucx::decodeAddressHandle(h);
    EXPECT_EQ(back.toString(), a.toString());
    if (c.scope) {
      EXPECT_EQ(reinterpret_cast<const sockaddr_in6&>(back.storage).sin6_scope_id, c.scope);
    }
  }
}

TEST(WireVectors, UcxNegative) {
  runNegativeCases("ucx_piece", [](const Bytes& b) {
    return recordProblem<ucx::PieceHeader::kWireBytes>(b, ucx::PieceHeader::decode);
  });
  runNegativeCases("ucx_hello",
                   [](const Bytes& b) { return recordProblem<ucx::Hello::kWireBytes>(b, ucx::Hello::decode); });
  runNegativeCases("ucx_handle", [](const Bytes& b) { return handleProblem(b, ucx::decodeAddressHandle); });
}

// ---------------------------------------------------------------- shm

const std::string kShmPrefix = "0123456789abcdef0123456789abcdef";

TEST(WireVectors, ShmHandle) {
  // encodeShmHandle copies a struct (HandleWire: 41 bytes of fields, sizeof 44) whose 3 bytes of tail
  // padding it zeroes (they once carried stack bytes to the peer).
  Bytes encoded = asBytes(shm::encodeShmHandle(kShmPrefix).bytes);
  Bytes committed = checkVector(
      {"shm_handle", "shm listener handle (src/transport/shm/shm_handle.hpp), version 1, HOST byte order (one host)",
       {"input: segment-name prefix " + kShmPrefix,
        "bytes 41..43 are struct padding, zeroed by the encoder"},
       {{0, 4, "u32 magic 'HSHM'"}, {4, 2, "u16 version (1)"}, {6, 2, "u16 prefix length (32)"},
        {8, 32, "prefix (lower-case hex)"}, {40, 1, "'\\0'"}, {41, 3, "struct padding (0)"},
        {44, 84, "unused (0)"}},
       encoded});
  if (committed.empty()) return;
  Handle h;
  std::memcpy(h.bytes.data(), committed.data(), h.bytes.size());
  EXPECT_EQ(shm::decodeShmHandle(h), kShmPrefix);
}

TEST(WireVectors, ShmHandleNegative) {
  runNegativeCases("shm_handle", [](const Bytes& b) { return handleProblem(b, shm::decodeShmHandle); });
}

// The shm ring: 2 slots of 4096 bytes (the smallest HETCCL_SHM_SLOT_BYTES), rank 0 -> rank 1, one
// 10-byte message "hello wire" stamped as
// call_stamp.allreduce (piece 0) published by the real sender.
constexpr uint64_t kShmToken = 0x1122334455667788ull;
const std::string kShmMessage = "hello wire";
constexpr size_t kShmSegmentBytes = 384 + 2 * 4096;  ///< header + slot infos (padded to 384), 2 slots
constexpr size_t kShmVectorBytes = 448;              ///< the vector: everything up to the first 64 data bytes

CallStamp shmStamp() {
  CallStamp s = allReduceStamp();
  s.piece = 0;
  s.bytes = kShmMessage.size();
  return s;
}

PeerInfo shmRank(int rank) {
  PeerInfo p;
  p.rank = rank;
  p.hostId = "wire-vector-host";
  p.domain = "d0";
  p.pid = static_cast<int32_t>(::getpid());
  return p;
}

/// Sets HETCCL_SHM_SLOTS / _SLOT_BYTES for the scope.
struct ShmGeometry {
  ShmGeometry() {
    setenv("HETCCL_SHM_SLOTS", "2", 1);
    setenv("HETCCL_SHM_SLOT_BYTES", "4096", 1);
    reloadConfig();
  }
  ~ShmGeometry() {
    unsetenv("HETCCL_SHM_SLOTS");
    unsetenv("HETCCL_SHM_SLOT_BYTES");
    reloadConfig();
  }
};

/// The segment name both ends derive (shm_transport.cc): /hetccl-<prefix>-<token %016x>-<from>-<to>.
std::string segmentName(const std::string& prefix, uint64_t token, int from, int to) {
  char tok[17];
  std::snprintf(tok, sizeof tok, "%016llx", static_cast<unsigned long long>(token));
  return "/hetccl-" + prefix + "-" + tok + "-" + std::to_string(from) + "-" + std::to_string(to);
}

/// The real receiver (accept + irecv expecting shmStamp()) on a segment of kShmSegmentBytes that starts
/// with `bytes` (the rest zero), created as the sender would: "" when the message arrives intact, else the
/// error.
std::string shmReceive(const Bytes& bytes) {
  ShmGeometry geometry;
  auto t = makeShmTransport();
  PeerInfo sender = shmRank(0), receiver = shmRank(1);
  auto listener = t->listen(receiver);
  const std::string name = segmentName(shm::decodeShmHandle(listener->handle()), kShmToken, 0, 1);
  auto seg = shm::ShmSegment::create(name, kShmSegmentBytes);
  std::memcpy(seg.data(), bytes.data(), std::min(bytes.size(), kShmSegmentBytes));
  try {
    auto recv = t->accept(*listener, ConnectInfo{receiver, sender, kShmToken, nullptr}, Deadline::afterMs(5000));
    std::string got(kShmMessage.size(), '\0');
    Request r = recv->irecv(got.data(), got.size(), nullptr, shmStamp());
    Deadline d = Deadline::afterMs(5000);
    while (!recv->test(r))
      if (d.expired()) return "the message never arrived";
    return got == kShmMessage ? "" : "received '" + got + "'";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(WireVectors, ShmRing) {
  ShmGeometry geometry;
  auto t = makeShmTransport();
  PeerInfo sender = shmRank(0), receiver = shmRank(1);
  auto listener = t->listen(receiver);
  auto send = t->connect(listener->handle(), ConnectInfo{sender, receiver, kShmToken, nullptr}, Deadline::afterMs(5000));
  // The segment exists under the name both ends derive (opened here as the receiver will).
  const std::string name = segmentName(shm::decodeShmHandle(listener->handle()), kShmToken, 0, 1);
  auto view = shm::ShmSegment::tryOpen(name, sizeof(shm::RingHeader));
  ASSERT_TRUE(view) << "no shm segment named " << name << ": the naming convention changed";
  Request r = send->isend(kShmMessage.data(), kShmMessage.size(), shmStamp());
  Deadline d = Deadline::afterMs(5000);
  while (!send->test(r)) ASSERT_FALSE(d.expired());
  const auto* base = static_cast<const unsigned char*>(view->data());
  ASSERT_EQ(view->size(), kShmSegmentBytes);
  Bytes segment(base, base + kShmVectorBytes);

  std::vector<Field> fields = {
      {0, 8, "RingHeader u64 magic 'hetcclSH' (stored last, release)"},
      {8, 4, "u32 ring version (3)"},
      {12, 4, "u32 slots"},
      {16, 8, "u64 slot bytes"},
      {24, 8, "u64 total bytes of the segment"},
      {32, 4, "i32 from rank (sender)"},
      {36, 4, "i32 to rank (receiver)"},
      {40, 8, "u64 connection token"},
      {48, 16, "(padding to the head's cache line)"},
      {64, 8, "u64 head: slots published by the sender"},
      {72, 56, "(padding)"},
      {128, 8, "u64 tail: slots released by the receiver"},
      {136, 56, "(padding)"},
      {192, 4, "u32 sender closed"},
      {196, 4, "u32 receiver closed"},
      {200, 56, "(padding to 256 = sizeof(RingHeader))"},
      {256, 8, "SlotInfo[0] u64 message number (from 1)"},
      {264, 8, "SlotInfo[0] u64 piece bytes"},
      {272, 4, "SlotInfo[0] u32 crc32c (0 without flag)"},
      {276, 4, "SlotInfo[0] u32 flags (bit 0: crc present)"}};
  for (const Field& f : stampFields(280, "SlotInfo[0] stamp ")) fields.push_back(f);
  fields.push_back({312, 56, "SlotInfo[1] (unused)"});
  fields.push_back({368, 16, "(padding to 384 = data offset)"});
  fields.push_back({384, 10, "slot 0 data 'hello wire'"});
  fields.push_back({394, 54, "slot 0 rest"});
  Bytes committed = checkVector(
      {"shm_ring", "shm ring segment (src/transport/shm/shm_segment.hpp), ring version 3, HOST byte order (one host)",
       {"input: HETCCL_SHM_SLOTS=2, HETCCL_SHM_SLOT_BYTES=4096, rank 0 -> rank 1, token 0x1122334455667788; the real",
        "sender (ShmTransport::connect, isend) published one 10-byte message 'hello wire' stamped AllReduce float32",
        "sum #12, 10 bytes, piece 0. Layout: header 0..255, SlotInfo[2] 256..367 (56 bytes each), slot 0 from 384,",
        "slot 1 from 4480, 8576 bytes in all; the vector holds bytes 0..447 (the rest of the segment is zero).",
        "Both ends derive the segment name /hetccl-<listener prefix>-<token %016x>-<from>-<to>."},
       fields, segment});
  // The real receiver takes the message the sender put there.
  auto recv = t->accept(*listener, ConnectInfo{receiver, sender, kShmToken, nullptr}, Deadline::afterMs(5000));
  std::string got(kShmMessage.size(), '\0');
  Request rr = recv->irecv(got.data(), got.size(), nullptr, shmStamp());
  d = Deadline::afterMs(5000);
  while (!recv->test(rr)) ASSERT_FALSE(d.expired());
  EXPECT_EQ(got, kShmMessage);
  if (committed.empty()) return;
  // And the committed segment, laid out by a "sender" that is just these bytes, through the real receiver.
  EXPECT_EQ(shmReceive(committed), "");
  shm::RingHeader h;
  std::memcpy(static_cast<void*>(&h), committed.data(), sizeof h);
  EXPECT_EQ(shm::ringHeaderProblem(h, {0, 1, kShmToken, kShmSegmentBytes}), "");
}

TEST(WireVectors, ShmRingNegative) { runNegativeCases("shm_ring", shmReceive); }

}  // namespace
}  // namespace hetccl::test::wire
