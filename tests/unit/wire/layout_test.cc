// Layout assumptions of every structure that is copied raw between processes (shared memory) or between
// objects built by different compilers (the GPU plugin interface): sizes, offsets and byte order, checked
// at compile time. A CUDA build and a HIP build (gcc, clang, hipcc) must lay these out identically; this
// file is compiled by both unit_wire (the project's compiler) and unit_wire_clang (clang-14, fuzz build).
//
// Formats written field by field in little-endian (unique id, descriptor, frames, handshake, call stamps,
// tcp and ucx pieces/hellos/handles) do not depend on the host's byte order or padding; their vectors check them.
// The formats below are written in HOST byte order (both ends on one host): shm handle, shm ring header
// and slot info, GPU ring header and slot headers (64-bit words written by GPU stream operations). Every
// supported host (x86-64, aarch64) and GPU (NVIDIA, AMD) is little-endian; the vectors assume it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "bootstrap/descriptor.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/unique_id.hpp"
#include "device/base/gpu_plugin.h"
#include "exec/pipeline/gpu_ring.hpp"
#include "transport/base/call_stamp.hpp"
#include "transport/base/transport.hpp"
#include "transport/shm/shm_segment.hpp"
#include "transport/tcp/tcp_hello.hpp"
#include "transport/tcp/tcp_piece.hpp"
#include "transport/ucx/ucx_wire.hpp"

namespace {

using hetccl::stream_exec::GpuRingHeader;
using hetccl::transport::shm::RingHeader;
using hetccl::transport::shm::SlotInfo;

// Host byte order formats need a little-endian host.
static_assert(std::endian::native == std::endian::little,
              "shm rings, GPU rings and the shm handle are written in host byte order: only little-endian hosts");

// Sizes of the explicitly encoded formats (each has a vector).
static_assert(hetccl::bootstrap::kUniqueIdBytes == 128, "unique id = sizeof(ncclUniqueId)");
static_assert(hetccl::bootstrap::kSecretBytes == 32);
static_assert(hetccl::bootstrap::kDescriptorBytes == 140);
static_assert(hetccl::bootstrap::kDescriptorPrefixBytes == 12);
static_assert(hetccl::bootstrap::kFrameHeaderBytes == 16);
static_assert(hetccl::bootstrap::kClientHelloBytes == 44 && hetccl::bootstrap::kServerHelloBytes == 76 &&
              hetccl::bootstrap::kProofBytes == 32);
static_assert(hetccl::transport::kCallStampBytes == 32);
static_assert(hetccl::transport::tcp::PieceHeader::kWireBytes == 72);
static_assert(hetccl::transport::tcp::Hello::kWireBytes == 26);
static_assert(hetccl::transport::ucx::PieceHeader::kWireBytes == 80);
static_assert(hetccl::transport::ucx::Hello::kWireBytes == 24);
static_assert(sizeof(hetccl::transport::Handle) == 128, "NCCL_NET_HANDLE_MAXSIZE");

// shm ring segment (src/transport/shm/shm_segment.hpp), shared by two processes of one host.
static_assert(sizeof(std::atomic<uint64_t>) == 8 && alignof(std::atomic<uint64_t>) == 8);
static_assert(sizeof(std::atomic<uint32_t>) == 4);
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "atomics in shared memory must be lock-free (address-free)");
// The header every such segment begins with (src/transport/shm/segment_header.hpp): shm rings, GPU rings
// and RMA windows.
using hetccl::transport::shm::SegmentHeader;
static_assert(std::is_standard_layout_v<SegmentHeader> && sizeof(SegmentHeader) == 40 && alignof(SegmentHeader) == 8);
static_assert(offsetof(SegmentHeader, magic) == 0);
static_assert(offsetof(SegmentHeader, version) == 8);
static_assert(offsetof(SegmentHeader, slots) == 12);
static_assert(offsetof(SegmentHeader, slotBytes) == 16);
static_assert(offsetof(SegmentHeader, totalBytes) == 24);
static_assert(offsetof(SegmentHeader, fromRank) == 32);
static_assert(offsetof(SegmentHeader, toRank) == 36);
static_assert(std::is_standard_layout_v<RingHeader> && std::is_standard_layout_v<SlotInfo>);
static_assert(alignof(RingHeader) == 64 && sizeof(RingHeader) == 256);
static_assert(offsetof(RingHeader, segment) == 0);
static_assert(offsetof(RingHeader, token) == 40);
static_assert(offsetof(RingHeader, head) == 64);
static_assert(offsetof(RingHeader, tail) == 128);
static_assert(offsetof(RingHeader, senderClosed) == 192);
static_assert(offsetof(RingHeader, receiverClosed) == 196);
static_assert(sizeof(SlotInfo) == 56 && alignof(SlotInfo) == 8);
static_assert(offsetof(SlotInfo, message) == 0);
static_assert(offsetof(SlotInfo, bytes) == 8);
static_assert(offsetof(SlotInfo, crc) == 16);
static_assert(offsetof(SlotInfo, flags) == 20);
static_assert(offsetof(SlotInfo, stamp) == 24);
static_assert(hetccl::transport::shm::kRingVersion == 3, "ring version changed: regenerate shm_ring.hex");

// GPU ring segment (src/exec/pipeline/gpu_ring.hpp): mapped by both processes and registered with both
// GPU runtimes (an NVIDIA and an AMD GPU may share one ring).
static_assert(std::is_standard_layout_v<GpuRingHeader>);
static_assert(alignof(GpuRingHeader) == 64 && sizeof(GpuRingHeader) == 4352);
static_assert(offsetof(GpuRingHeader, segment) == 0);
static_assert(offsetof(GpuRingHeader, report) == 64);
static_assert(sizeof(GpuRingHeader::report) == 8 * HETCCL_GPU_REPORT_WORDS && HETCCL_GPU_REPORT_WORDS == 9);
static_assert(offsetof(GpuRingHeader, expect) == 192 && sizeof(GpuRingHeader::expect) == 8);
static_assert(offsetof(GpuRingHeader, sentGroups) == 256 && offsetof(GpuRingHeader, expectedGroups) == 2304);
static_assert(sizeof(hetccl::stream_exec::GpuGroupLogEntry) == 32 && hetccl::stream_exec::kGpuGroupLogEntries == 64);
static_assert(hetccl::stream_exec::kGpuSlotHeaderBytes == 64, "slot header: token + 4 stamp words + length + padding");
static_assert(hetccl::stream_exec::kGpuRingVersion == 4, "GPU ring version changed: regenerate gpu_ring.hex");

// The GPU plugin interface's stream operation (core and plugin may come from different compilers).
static_assert(sizeof(void*) == 8);
static_assert(offsetof(hetcclGpuStreamOp_t, kind) == 0);
static_assert(offsetof(hetcclGpuStreamOp_t, flags) == 4);
static_assert(offsetof(hetcclGpuStreamOp_t, word) == 8);
static_assert(offsetof(hetcclGpuStreamOp_t, value) == 16);
static_assert(offsetof(hetcclGpuStreamOp_t, expect) == 24);
static_assert(offsetof(hetcclGpuStreamOp_t, report) == 56);
static_assert(sizeof(hetcclGpuStreamOp_t) == 64);
static_assert(offsetof(hetcclGpuPlugin_t, version) == 0, "the core reads version first");

TEST(WireLayout, StaticAssertsHold) {
  // Everything above is checked at compile time; this records which compiler checked it.
#if defined(__clang__)
  RecordProperty("compiler", "clang " __clang_version__);
#else
  RecordProperty("compiler", "gcc " __VERSION__);
#endif
  SUCCEED();
}

}  // namespace

#include "wire_vectors.hpp"

namespace {

// Every format named in negative.txt has a decoder in one of the test files (a typo would otherwise
// leave its cases unrun).
TEST(WireVectors, EveryNegativeFormatHasADecoder) {
  const std::vector<std::string> known = {
      "unique_id", "descriptor", "descriptor_prefix", "frame", "handshake_server", "handshake_client", "call_stamp",
      "tcp_piece", "tcp_hello", "tcp_handle", "ucx_piece", "ucx_hello", "ucx_handle", "shm_handle", "shm_ring",
      "gpu_slot_header"};
  for (const std::string& f : hetccl::test::wire::negativeFormats())
    EXPECT_NE(std::find(known.begin(), known.end(), f), known.end()) << "negative.txt names unknown format '" << f << "'";
}

}  // namespace
