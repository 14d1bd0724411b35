#include "exec/pipeline/gpu_ring.hpp"

#include <algorithm>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/error.hpp"
#include "core/log.hpp"
#include "exec/pipeline/gpu_stamp.hpp"
#include "exec/pipeline/segment_tag.hpp"

namespace hetccl::stream_exec {
namespace {

using transport::shm::ShmSegment;

constexpr size_t kPageBytes = 4096;

size_t headersEnd(uint32_t slots) { return GpuRing::headerOffset() + size_t{slots} * kGpuSlotHeaderBytes; }
size_t dataOffset(uint32_t slots) { return (headersEnd(slots) + kPageBytes - 1) / kPageBytes * kPageBytes; }

using NameTag = SegmentTag;

std::string ringName(const NameTag& receiverTag, int from, int to) {
  return concat("/hetccl-gpu-", receiverTag.hex, "-", from, "-", to);
}

/// The GPU ring as a kind of shared-memory segment (slots bounded by the piece tokens, kMaxTokenSlots).
const transport::shm::SegmentKind kGpuRingKind{"GPU ring", kGpuRingMagic, kGpuRingVersion, kMaxTokenSlots,
                                               uint64_t{1} << 32, &dataOffset};

ShmSegment createRing(const std::string& name, int from, int to, uint32_t slots, uint64_t slotBytes) {
  ShmSegment seg = ShmSegment::create(name, kGpuRingKind.totalBytes(slots, slotBytes));
  auto* h = new (seg.data()) GpuRingHeader{};
  transport::shm::describeSegment(h->segment, kGpuRingKind, slots, slotBytes, from, to);
  for (uint64_t& w : h->report) w = 0;
  h->expect = 0;
  for (GpuGroupLogEntry& e : h->sentGroups) e = GpuGroupLogEntry{};
  for (GpuGroupLogEntry& e : h->expectedGroups) e = GpuGroupLogEntry{};
  std::memset(static_cast<char*>(seg.data()) + GpuRing::headerOffset(), 0, size_t{slots} * kGpuSlotHeaderBytes);  // empty
  transport::shm::publishSegment(h->segment, kGpuRingKind);
  return seg;
}

ShmSegment openRing(const std::string& name, const PeerInfo& peer, int self) {
  std::optional<ShmSegment> seg = ShmSegment::tryOpen(name, sizeof(GpuRingHeader));
  ShmSegment::unlink(name);
  auto bad = [&](const std::string& why) {
    return PeerError(peer.rank, peer.hostId, concat("GPU ring from rank ", peer.rank, ": segment ", name, " ", why));
  };
  if (!seg) throw bad("does not exist (did that rank fail while creating it?)");
  const auto* h = static_cast<const GpuRingHeader*>(seg->data());
  const std::string problem = transport::shm::segmentProblem(h->segment, kGpuRingKind, seg->size(), peer.rank, self);
  if (!problem.empty()) throw bad(problem);
  return std::move(*seg);
}

}  // namespace

size_t GpuRing::headerOffset() { return (sizeof(GpuRingHeader) + 63) / 64 * 64; }

GpuRing::GpuRing(ShmSegment segment, const hetcclGpuPlugin_t& gpu) : segment_(std::move(segment)), gpu_(gpu) {
  if (gpu_.hostRegister(segment_.data(), segment_.size()) != HETCCL_GPU_OK)
    throw Error(Result::UnhandledCudaError, concat("registering GPU ring ", segment_.name(), " (", segment_.size(),
                                                   " bytes) with ", gpu_.name, ": ", gpu_.lastError()));
  data_ = static_cast<char*>(segment_.data()) + dataOffset(slots());
  void* dev = nullptr;
  if (gpu_.devicePointer(segment_.data(), &dev) != HETCCL_GPU_OK) {
    const std::string why = gpu_.lastError();
    gpu_.hostUnregister(segment_.data());
    throw Error(Result::UnhandledCudaError, concat("device address of GPU ring ", segment_.name(), ": ", why));
  }
  dev_ = static_cast<char*>(dev);
}

uint64_t* GpuRing::tokenHeader(uint64_t token) const {
  return token != 0 && tokenSlot(token) < slots() ? slotHeader(tokenSlot(token)) : nullptr;
}

void GpuRing::recordMismatch(const uint64_t words[8]) const {
  uint64_t* r = report();
  if (__atomic_load_n(r, __ATOMIC_ACQUIRE) != 0) return;
  for (int w = 0; w < 8; ++w) __atomic_store_n(r + 1 + w, words[w], __ATOMIC_RELAXED);
  __atomic_store_n(r, 1, __ATOMIC_RELEASE);
}

namespace {

GpuGroupLogEntry* logOf(GpuRingHeader* h, GroupLog log) {
  return log == GroupLog::Sent ? h->sentGroups : h->expectedGroups;
}

}  // namespace

// An entry is rewritten tag 0 first and its tag last, so a monitor that reads the same tag before and after
// the words has read one group's words.
void GpuRing::logGroup(GroupLog log, uint64_t word0, uint64_t word1, uint64_t word2) const {
  GpuGroupLogEntry& e = logOf(header(), log)[word1 % kGpuGroupLogEntries];
  __atomic_store_n(&e.tag, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&e.words[0], word0, __ATOMIC_RELEASE);
  __atomic_store_n(&e.words[1], word1, __ATOMIC_RELEASE);
  __atomic_store_n(&e.words[2], word2, __ATOMIC_RELEASE);
  __atomic_store_n(&e.tag, groupTag(word0, word1, word2) + 1, __ATOMIC_RELEASE);
}

bool GpuRing::findGroup(GroupLog log, uint64_t token, uint64_t stamp[4]) const {
  const uint64_t want = tokenTag(token) + 1;
  for (size_t i = 0; i < kGpuGroupLogEntries; ++i) {
    GpuGroupLogEntry& e = logOf(header(), log)[i];
    if (__atomic_load_n(&e.tag, __ATOMIC_ACQUIRE) != want) continue;
    for (int w = 0; w < 3; ++w) stamp[w] = __atomic_load_n(&e.words[w], __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e.tag, __ATOMIC_ACQUIRE) != want) continue;
    stamp[3] = tokenPiece(token);
    return true;
  }
  return false;
}

GpuRing::~GpuRing() {
  if (segment_.data() && gpu_.hostUnregister(segment_.data()) != HETCCL_GPU_OK)
    HETCCL_WARN(log::kShm, "unregistering GPU ring ", segment_.name(), ": ", gpu_.lastError());
}

namespace {

/// A ring only this process maps: one end of a ring between hosts, mirrored by the proxy. Its name is
/// unlinked at once (nobody else opens it).
ShmSegment createPrivateRing(const NameTag& ownTag, int from, int to, uint32_t slots, uint64_t slotBytes) {
  const std::string name = concat(ringName(ownTag, from, to), "-net");
  ShmSegment seg = createRing(name, from, to, slots, slotBytes);
  ShmSegment::unlink(name);
  return seg;
}

}  // namespace

GpuRingSet GpuRingSet::build(bootstrap::Bootstrap& boot, const hetcclGpuPlugin_t& gpu, uint32_t slots,
                             uint64_t slotBytes) {
  const int n = boot.size(), self = boot.rank();
  if (slots == 0 || slots > kMaxTokenSlots || slotBytes == 0 || slotBytes % 64 != 0)
    throw InvalidArgument(concat("GPU ring geometry ", slots, " x ", slotBytes, " bytes is invalid"));
  std::vector<NameTag> tags(n);
  tags[self] = randomSegmentTag();
  boot.allGather(tags.data(), sizeof(NameTag));
  for (int p = 0; p < n; ++p)
    if (!validSegmentTag(tags[p]))
      throw PeerError(p, boot.peers()[p].hostId, concat("rank ", p, " published a malformed GPU ring name"));

  GpuRingSet set;
  set.out.resize(n);
  set.in.resize(n);
  set.remote.assign(n, false);
  const auto& peers = boot.peers();
  for (int p = 0; p < n; ++p) set.remote[p] = peers[p].hostId != peers[self].hostId;
  std::vector<std::string> created;
  try {
    for (int p = 0; p < n; ++p) {
      if (p == self) continue;
      if (set.remote[p]) {  // both ends here; the proxy moves the pieces (net_ring_proxy.hpp)
        set.out[p] = std::make_unique<GpuRing>(createPrivateRing(tags[self], self, p, slots, slotBytes), gpu);
        set.in[p] = std::make_unique<GpuRing>(createPrivateRing(tags[self], p, self, slots, slotBytes), gpu);
        continue;
      }
      created.push_back(ringName(tags[p], self, p));
      set.out[p] = std::make_unique<GpuRing>(createRing(created.back(), self, p, slots, slotBytes), gpu);
    }
    boot.barrier();  // every ring exists
    for (int p = 0; p < n; ++p)
      if (p != self && !set.remote[p]) set.in[p] = std::make_unique<GpuRing>(openRing(ringName(tags[self], p, self), boot.peers()[p], self), gpu);
  } catch (...) {
    for (const std::string& name : created) ShmSegment::unlink(name);  // a receiver that never came
    throw;
  }
  const auto remotes = std::count(set.remote.begin(), set.remote.end(), true);
  HETCCL_INFO(log::kShm, "rank ", self, ": GPU rings to ", n - 1, " peers (", remotes, " on other hosts, mirrored over the ",
              "network), ", slots, " x ", slotBytes, " bytes each way");
  return set;
}

}  // namespace hetccl::stream_exec
