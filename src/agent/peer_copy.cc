#include "agent/peer_copy.hpp"

#include "agent/byte_codec.hpp"
#include "agent/wire.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::agent {
namespace {

constexpr size_t kHeadBytes = 8;
constexpr size_t kAllocBytes = HETCCL_GPU_IPC_HANDLE_BYTES + 8;
constexpr size_t kPlaceBytes = 16;

}  // namespace

std::vector<unsigned char> encodeSource(const PeerSource& s) {
  ByteWriter w;
  w.put<uint32_t>(static_cast<uint32_t>(s.allocs.size()));
  w.put<uint32_t>(0);
  for (const SourceAlloc& a : s.allocs) {
    w.bytes(a.handle);
    w.put<uint64_t>(a.allocBytes);
  }
  for (const SourcePlace& p : s.places) {
    w.put<uint32_t>(p.alloc);
    w.put<uint32_t>(0);
    w.put<uint64_t>(p.offset);
  }
  return std::move(w.data());
}

PeerSource decodeSource(std::span<const unsigned char> bytes, uint64_t places) {
  ByteReader r(bytes, "device copy source");
  const uint32_t n = r.get<uint32_t>();
  if (r.get<uint32_t>() != 0) throw InvalidArgument("device copy source: reserved field set");
  if (n == 0 || n > std::max<uint64_t>(places, 1))
    throw InvalidArgument(concat("device copy source: ", n, " allocations for ", places, " ranges"));
  if (places > kMaxRanges) throw InvalidArgument(concat("device copy source: ", places, " ranges"));
  const uint64_t want = kHeadBytes + uint64_t{n} * kAllocBytes + places * kPlaceBytes;
  if (bytes.size() != want) throw InvalidArgument(concat("device copy source: ", bytes.size(), " bytes, expected ", want));
  PeerSource s;
  s.allocs.resize(n);
  for (SourceAlloc& a : s.allocs) {
    const auto h = r.bytes(a.handle.size());
    std::copy(h.begin(), h.end(), a.handle.begin());
    a.allocBytes = r.get<uint64_t>();
  }
  s.places.resize(places);
  for (uint64_t i = 0; i < places; ++i) {
    SourcePlace& p = s.places[i];
    p.alloc = r.get<uint32_t>();
    if (r.get<uint32_t>() != 0) throw InvalidArgument(concat("device copy source: range ", i, ": reserved field set"));
    p.offset = r.get<uint64_t>();
    if (p.alloc >= n) throw InvalidArgument(concat("device copy source: range ", i, " names allocation ", p.alloc, " of ", n));
  }
  return s;
}

PeerSource recvSource(const net::Socket& sock, uint64_t places, Deadline deadline, const std::string& peer) {
  std::vector<unsigned char> bytes(kHeadBytes);
  sock.recvAll(bytes.data(), kHeadBytes, deadline, peer);
  uint32_t n = 0;
  std::memcpy(&n, bytes.data(), sizeof n);  // checked by decodeSource; bounded here before anything is allocated
  if (n == 0 || n > std::max<uint64_t>(places, 1) || places > kMaxRanges)
    throw PeerError(-1, "", concat(peer, ": malformed device copy source (", n, " allocations for ", places, " ranges)"));
  bytes.resize(kHeadBytes + uint64_t{n} * kAllocBytes + places * kPlaceBytes);
  sock.recvAll(bytes.data() + kHeadBytes, bytes.size() - kHeadBytes, deadline, peer);
  try {
    return decodeSource(bytes, places);
  } catch (const InvalidArgument& e) {
    throw PeerError(-1, "", concat(peer, ": malformed request: ", e.what()));
  }
}

bool PeerCopier::copy(std::span<const Segment> ours, const PeerSource& theirs, bool intoOurs, const std::string& peer) {
  std::vector<device::GpuRuntime::IpcMapping> maps(theirs.allocs.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    try {
      maps[i] = mappings_.map(theirs.allocs[i].handle);
    } catch (const Error& e) {
      HETCCL_INFO(log::kNet, peer, ": cannot map its device memory (", e.what(), "): its transfers take the window or the socket");
      return false;
    }
  }
  std::vector<rma::MemoryAccess::Copy> copies;
  copies.reserve(ours.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    const SourcePlace& p = theirs.places[i];
    const device::GpuRuntime::IpcMapping& m = maps[p.alloc];
    const uint64_t bytes = ours[i].bytes;
    if (p.offset > m.bytes || bytes > m.bytes - p.offset)
      throw PeerError(-1, "", concat(peer, ": range ", i, " [", p.offset, ", +", bytes, ") lies outside its ", m.bytes,
                                     "-byte allocation"));
    unsigned char* there = static_cast<unsigned char*>(m.base) + p.offset;
    copies.push_back(intoOurs ? rma::MemoryAccess::Copy{ours[i].data, there, bytes}
                              : rma::MemoryAccess::Copy{there, ours[i].data, bytes});
  }
  // One batch where no two destinations overlap, else in order (the later range wins, as on every path).
  void* stream = engine_.stream();
  memory_.copyAllAsync(memory_.gpuKind(), copies, stream);
  memory_.gpu()->synchronize(stream);
  return true;
}

}  // namespace hetccl::agent
