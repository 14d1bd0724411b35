#include "rma/peer_mappings.hpp"

namespace hetccl::rma {

device::GpuRuntime::IpcMapping PeerMappings::map(const device::GpuRuntime::IpcHandle& handle) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->handle == handle) {
      entries_.splice(entries_.begin(), entries_, it);
      return it->mapping;
    }
  const device::GpuRuntime::IpcMapping m = gpu_.openMemory(handle);
  entries_.push_front({handle, m});
  if (entries_.size() > kMaxMappings) {
    gpu_.closeMemory(entries_.back().mapping.base);
    entries_.pop_back();
  }
  return m;
}

bool PeerMappings::close(const device::GpuRuntime::IpcHandle& handle) noexcept {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->handle == handle) {
      gpu_.closeMemory(it->mapping.base);
      entries_.erase(it);
      return true;
    }
  return false;
}

void PeerMappings::closeAll() noexcept {
  for (const Entry& e : entries_) gpu_.closeMemory(e.mapping.base);
  entries_.clear();
}

}  // namespace hetccl::rma
