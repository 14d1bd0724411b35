// The device allocations of one peer that this rank has mapped (the vendor's IPC handles), for the RMA
// transfers it copies itself (peer_copy.cc). Only the progress thread uses it. A handle names one
// allocation for the allocation's lifetime (a new allocation at the same address gets a new handle), so
// a mapping is kept and reused; at most kMaxMappings per peer stay open, the least recently used is
// closed first, and every one is closed when the channel to the peer closes. While mapped here, the
// peer's freed allocation stays allocated (the vendor runtime keeps it for the mapping).
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
