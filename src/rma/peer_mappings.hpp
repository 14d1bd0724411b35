// The device allocations of one peer that this rank has mapped (the vendor's IPC handles), for the RMA
// transfers it copies itself (peer_copy.cc). Only the progress thread uses it. A handle names one
// allocation for the allocation's lifetime (a new allocation at the same address gets a new handle), so
// a mapping is kept and reused; at most kMaxMappings per peer stay open, the least recently used is
// closed first, one is closed when the peer deregisters a registration in it (Unmap, wire.hpp), and
// every one is closed when the channel to the peer closes.
#pragma once

#include <cstdint>
#include <list>

#include "device/gpu_runtime.hpp"

namespace hetccl::rma {

class PeerMappings {
 public:
  static constexpr size_t kMaxMappings = 64;

  explicit PeerMappings(device::GpuRuntime& gpu) : gpu_(gpu) {}
  ~PeerMappings() { closeAll(); }
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  /// The mapping of the allocation `handle` names: reused, or opened now (throws what the runtime says).
  device::GpuRuntime::IpcMapping map(const device::GpuRuntime::IpcHandle& handle);
  /// Closes the mapping of the allocation `handle` names, if one is open; false when none was.
  bool close(const device::GpuRuntime::IpcHandle& handle) noexcept;
  void closeAll() noexcept;
  size_t open() const { return entries_.size(); }

 private:
  struct Entry {
    device::GpuRuntime::IpcHandle handle;
    device::GpuRuntime::IpcMapping mapping;
  };
  device::GpuRuntime& gpu_;
  std::list<Entry> entries_;  ///< most recently used first
};

}  // namespace hetccl::rma
