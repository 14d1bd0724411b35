// Wire vectors of the stream pipeline's GPU rings (src/exec/pipeline): the ring segment's header as the real
// GpuRingSet writes it, and the 64-byte slot headers with the piece token and the call stamp a sender's
// stream (between hosts: its proxy) writes. A CUDA process and a HIP process of one host share these rings;
// both read and write them with 64-bit words, and both compute the same tokens (pieceToken).
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>

#include "bootstrap_harness.hpp"
#include "bootstrap/unique_id.hpp"
#include "exec/pipeline/gpu_ring.hpp"
#include "exec/pipeline/gpu_stamp.hpp"
#include "transport/base/call_stamp.hpp"
#include "wire_vectors.hpp"

namespace hetccl::test::wire {
namespace {

using stream_exec::GpuRingHeader;

Bytes wordsToBytes(std::initializer_list<uint64_t> words, size_t total) {
  Bytes out(total, 0);
  size_t at = 0;
  for (uint64_t w : words) {
    for (int i = 0; i < 8; ++i) out[at + i] = static_cast<unsigned char>(w >> (8 * i));
    at += 8;
  }
  return out;
}

uint64_t wordAt(const Bytes& b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}

algo::CollOp op(algo::CollKind kind, DataType type, RedOpKind redop = RedOpKind::Sum, int peer = -1) {
  algo::CollOp o;
  o.kind = kind;
  o.type = type;
  o.op.kind = redop;
  o.peer = peer;
  return o;
}

const std::vector<Field> kSlotHeaderFields = {
    {0, 2, "slot state word (0 empty, else the piece token) bits 0-15: bits 0-10 slot + 1, bits 11-15 piece low bits"},
    {2, 2, "token bits 16-31: bits 16-26 piece number (word3) mod 2^16 continued, bits 27-31 group tag low bits"},
    {4, 4, "token bits 32-63: group tag (groupTag of stamp words 0-2, 37 bits) continued"},
    {8, 4, "stamp word0 bits 0-31: magic 'HCS1'"},
    {12, 1, "stamp word0 bits 32-39: call kind (send/recv groups: Send = 7)"},
    {13, 1, "stamp word0 bits 40-47: data type"},
    {14, 1, "stamp word0 bits 48-55: reduction op (0xff none)"},
    {15, 1, "stamp word0 bits 56-63: 0"},
    {16, 8, "stamp word1: the group's number among the groups using this ring"},
    {24, 8, "stamp word2: bytes the group moves on this ring"},
    {32, 8, "stamp word3: the piece's number on this ring in the group"},
    {40, 8, "the piece's length in bytes"},
    {48, 16, "unused (0)"}};

/// The header of a full slot holding the k-th piece of group `group` moving `bytes` on the ring, in slot
/// `slot`, `length` bytes, as a ring between hosts holds it (a ring of one host: the state word only):
/// word0 from the real groupStampWord0, the state word from the real pieceToken; words 1-3 and the length
/// composed here as stream_program.cc queues them (its stamp() is private).
void checkSlotHeader(const std::string& name, const std::vector<algo::CollOp>& ops, uint64_t group, uint64_t bytes,
                     uint64_t piece, uint32_t slot, uint64_t length, const std::string& input,
                     const std::string& described) {
  SCOPED_TRACE(name);
  const uint64_t word0 = stream_exec::groupStampWord0(ops);
  const uint64_t stamp[4] = {word0, group, bytes, piece};
  const uint64_t token = stream_exec::pieceToken(stamp, slot);
  Bytes encoded = wordsToBytes({token, word0, group, bytes, piece, length}, stream_exec::kGpuSlotHeaderBytes);
  Bytes committed = checkVector(
      {name, "GPU ring slot header (src/exec/pipeline/gpu_ring.hpp, gpu_stamp.hpp), GPU ring version 4, 64-bit words "
             "in host (little-endian) order",
       {"input: " + input, "word0 by groupStampWord0 and the state word by pieceToken (real); words 1-3 and the length "
                           "composed as stream_program.cc writes them"},
       kSlotHeaderFields, encoded});
  if (committed.empty()) return;
  uint64_t words[4] = {wordAt(committed, 8), wordAt(committed, 16), wordAt(committed, 24), wordAt(committed, 32)};
  EXPECT_EQ(stream_exec::describeStamp(words), described);
  // The token: what both runtimes' streams write and wait for; its fields decode back.
  const uint64_t committedToken = wordAt(committed, 0);
  EXPECT_EQ(committedToken, stream_exec::pieceToken(words, slot));
  EXPECT_EQ(stream_exec::tokenSlot(committedToken), slot);
  EXPECT_EQ(stream_exec::tokenPiece(committedToken), piece % 65536);
  EXPECT_EQ(stream_exec::tokenTag(committedToken), stream_exec::groupTag(words[0], words[1], words[2]));
  EXPECT_EQ(wordAt(committed, 40), length);
  // The GPU stamp is the host transports' call stamp format: the host decoder reads it too.
  std::string why;
  auto host = transport::decodeCallStampWords({words[0], words[1], words[2], words[3]}, &why);
  ASSERT_TRUE(host) << why;
  EXPECT_EQ(host->seq, group);
  EXPECT_EQ(host->bytes, bytes);
  EXPECT_EQ(host->piece, piece);
  EXPECT_EQ(host->root, -1);
}

TEST(WireVectors, GpuSlotHeader) {
  checkSlotHeader("gpu_slot_header.allreduce", {op(algo::CollKind::AllReduce, DataType::Float32)}, 3, 8 << 20, 2, 2,
                  4 << 20, "full slot 2, allreduce float32 sum, group 3, 8 MiB on this ring, piece 2 of 4 MiB",
                  "allreduce #3 (float32 sum), 8388608 bytes on this ring, piece 2");
  checkSlotHeader("gpu_slot_header.sendrecv",
                  {op(algo::CollKind::Send, DataType::Bfloat16, RedOpKind::Sum, 1),
                   op(algo::CollKind::Recv, DataType::Bfloat16, RedOpKind::Sum, 1)},
                  1, 4096, 0, 0, 4096,
                  "full slot 0, a group of Send + Recv bfloat16 (stamped as send), group 1, 4096 bytes, piece 0",
                  "send/recv #1 (bfloat16), 4096 bytes on this ring, piece 0");
  checkSlotHeader("gpu_slot_header.grouped_allgather",
                  {op(algo::CollKind::Send, DataType::Float16, RedOpKind::Sum, 1),
                   op(algo::CollKind::AllGather, DataType::Float16)},
                  7, 65536, 70000, 1023, 64, "full slot 1023, a group Send + AllGather float16 (stamped as its first "
                  "collective), group 7, 65536 bytes, piece 70000 (its token keeps 70000 mod 65536)",
                  "allgather #7 (float16), 65536 bytes on this ring, piece 70000");
}

TEST(WireVectors, GpuSlotHeaderNegative) {
  runNegativeCases("gpu_slot_header", [](const Bytes& b) -> std::string {
    uint64_t words[4] = {wordAt(b, 8), wordAt(b, 16), wordAt(b, 24), wordAt(b, 32)};
    std::string text = stream_exec::describeStamp(words);
    if (text.rfind("not a call stamp", 0) == 0) return text;
    std::string why;
    return transport::decodeCallStampWords({words[0], words[1], words[2], words[3]}, &why) ? "" : why;
  });
}

// A plugin that registers nothing: host memory is its own device address (enough for GpuRing).
hetcclGpuPlugin_t fakePlugin() {
  hetcclGpuPlugin_t p{};
  p.version = HETCCL_GPU_PLUGIN_VERSION;
  p.name = "wire-vector";
  p.lastError = [] { return ""; };
  p.hostRegister = [](void*, size_t) { return HETCCL_GPU_OK; };
  p.hostUnregister = [](void*) { return HETCCL_GPU_OK; };
  p.devicePointer = [](const void* ptr, void** dev) {
    *dev = const_cast<void*>(ptr);
    return HETCCL_GPU_OK;
  };
  return p;
}

TEST(WireVectors, GpuRing) {
  static const hetcclGpuPlugin_t plugin = fakePlugin();
  auto ranks = bootstrap::testing::joinAll(bootstrap::createUniqueId(), 2);
  for (auto& r : ranks) ASSERT_TRUE(r.bootstrap) << r.error;
  Bytes ring;
  size_t segmentBytes = 0;
  std::mutex mu;
  bootstrap::testing::onEveryRank(ranks, [&](int rank, bootstrap::Bootstrap& boot) {
    auto set = stream_exec::GpuRingSet::build(boot, plugin, 2, 64);
    boot.barrier();
    if (rank == 0) {  // the ring rank 0 -> rank 1, as its creator initialised it
      const auto* base = reinterpret_cast<const unsigned char*>(set.out[1]->slotHeader(0)) - stream_exec::GpuRing::headerOffset();
      std::lock_guard<std::mutex> lock(mu);
      ring.assign(base, base + stream_exec::GpuRing::headerOffset() + 2 * stream_exec::kGpuSlotHeaderBytes);
      segmentBytes = reinterpret_cast<const GpuRingHeader*>(base)->segment.totalBytes;
    }
    boot.barrier();
  });
  ASSERT_EQ(ring.size(), 4480u);
  EXPECT_EQ(segmentBytes, 8192u + 2 * 64);
  Bytes committed = checkVector(
      {"gpu_ring", "GPU ring segment header (src/exec/pipeline/gpu_ring.hpp), GPU ring version 4, HOST byte order",
       {"input: GpuRingSet::build(2 ranks, 2 slots of 64 bytes), the ring rank 0 -> rank 1 as created (nothing sent).",
        "Bytes 0..4479 of the segment: header, then the slot headers from GpuRing::headerOffset() = 4352; the slots",
        "start on the next 4 KiB page (8192), total 8192 + 2 x 64 bytes."},
       {{0, 8, "u64 magic 'hetcclSG' (stored last, release)"},
        {8, 4, "u32 GPU ring version (4)"},
        {12, 4, "u32 slots"},
        {16, 8, "u64 slot bytes"},
        {24, 8, "u64 total bytes of the segment"},
        {32, 4, "i32 from rank"},
        {36, 4, "i32 to rank"},
        {40, 24, "(padding)"},
        {64, 8, "report[0] mismatch found (0/1)"},
        {72, 32, "report[1..4] stamp found"},
        {104, 32, "report[5..8] stamp expected"},
        {136, 56, "(padding)"},
        {192, 8, "expect: the token the receiver's stream waits for (0 none)"},
        {200, 56, "(padding to 256)"},
        {256, 2048, "sentGroups[64]: per group number % 64 {u64 groupTag + 1 (0 none), stamp words 0-2}, sender's host"},
        {2304, 2048, "expectedGroups[64]: the same, written by the receiver's host"},
        {4352, 64, "slot header 0 (state, stamp, length: gpu_slot_header.*)"},
        {4416, 64, "slot header 1"}},
       ring});
  if (committed.empty()) return;
  GpuRingHeader h;
  std::memcpy(static_cast<void*>(&h), committed.data(), sizeof h);
  EXPECT_EQ(h.segment.magic.load(), stream_exec::kGpuRingMagic);
  EXPECT_EQ(h.segment.version, stream_exec::kGpuRingVersion);
  EXPECT_EQ(h.segment.slots, 2u);
  EXPECT_EQ(h.segment.slotBytes, 64u);
  EXPECT_EQ(h.segment.totalBytes, 8192u + 128);
  EXPECT_EQ(h.segment.fromRank, 0);
  EXPECT_EQ(h.segment.toRank, 1);
}

}  // namespace
}  // namespace hetccl::test::wire
