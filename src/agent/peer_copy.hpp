// Device-to-device copies between agents of one host and one vendor (wire.hpp: kOfferPeerCopy,
// kCopiedByTarget, Unmap): the initiator exports the allocations that hold its side of a transfer (the
// vendor's IPC handles, taken once at registration) and sends them with the transfer in a *source
// section*; the target maps them (kept open and reused, at most rma::PeerMappings::kMaxMappings per
// connection) and runs every copy itself on its connection's stream -- no window, no staging, no payload
// on the socket. The target keeps its own checks: its regions as for any transfer, and the initiator's
// ranges against the size of the mapping it opened, never against what the message claims. Mappings close
// when the initiator asks (Unmap: it deregistered the memory) and when the connection ends.
// Source section: u32 allocation count, u32 0, per allocation (handle, u64 allocation bytes), then per
// range (u32 allocation index, u32 0, u64 offset in that allocation).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/payload.hpp"
#include "core/deadline.hpp"
#include "device/gpu_runtime.hpp"
#include "net/socket.hpp"
#include "rma/memory_access.hpp"
#include "rma/peer_mappings.hpp"

namespace hetccl::agent {

struct SourceAlloc {
  device::GpuRuntime::IpcHandle handle{};
  uint64_t allocBytes = 0;
};

/// Where one range lies on the initiator's side.
struct SourcePlace {
  uint32_t alloc = 0;  ///< index into PeerSource::allocs
  uint64_t offset = 0;  ///< in that allocation
};

struct PeerSource {
  std::vector<SourceAlloc> allocs;
  std::vector<SourcePlace> places;  ///< one per range of the transfer (none in an Unmap)
  bool empty() const { return allocs.empty(); }
};

std::vector<unsigned char> encodeSource(const PeerSource& s);
/// Decodes a section of exactly `places` places. Throws InvalidArgument naming the first thing wrong: a
/// size that does not match, no allocation or more than places (1 for an Unmap), an index past them.
PeerSource decodeSource(std::span<const unsigned char> bytes, uint64_t places);
/// Receives and decodes a section of `places` places (a malformed one: PeerError naming `peer`).
PeerSource recvSource(const net::Socket& sock, uint64_t places, Deadline deadline, const std::string& peer);

/// The target's side: the initiator's allocations this connection mapped, and the copies. One thread.
class PeerCopier {
 public:
  /// `memory` has a GPU runtime with IPC; `engine` is the connection's (its stream runs the copies).
  PeerCopier(rma::MemoryAccess& memory, CopyEngine& engine) : memory_(memory), engine_(engine), mappings_(*memory.gpu()) {}

  /// Copies every range between `ours` (this agent's device memory, in table order) and the places of
  /// `theirs`: into ours for a write (`intoOurs`), out of ours for a read. Complete on return. False when
  /// an allocation cannot be mapped (said at INFO, nothing copied); PeerError naming `peer` for a range
  /// outside the allocation it names; what the runtime throws for a failed copy.
  bool copy(std::span<const Segment> ours, const PeerSource& theirs, bool intoOurs, const std::string& peer);
  /// Closes the mapping of `alloc` if one is open.
  void unmap(const SourceAlloc& alloc) noexcept { mappings_.close(alloc.handle); }
  size_t mapped() const { return mappings_.open(); }

 private:
  rma::MemoryAccess& memory_;
  CopyEngine& engine_;
  rma::PeerMappings mappings_;
};

}  // namespace hetccl::agent
