#include "abi/comm_registry.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"

namespace hetccl::abi {
namespace {

// Handle values: a tag in the top bits (non-canonical on x86-64 and AArch64, so a program that
// dereferences one faults at once instead of reading someone's memory) and a serial number below.
constexpr uint64_t kHandleTag = 0x4843ull << 48;  // "HC"

struct Registry {
  std::mutex mu;
  uint64_t nextSerial = 1;
  std::unordered_map<uint64_t, CommRef> live;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: handles may be used from atexit handlers
  return *r;
}

thread_local std::vector<CommRef> groupHolds;

uint64_t key(hetcclComm_t comm) { return reinterpret_cast<uintptr_t>(comm); }

[[noreturn]] void notLive(hetcclComm_t comm) {
  if (!comm) throw InvalidArgument("comm is null");
  throw InvalidUsage(
      "comm is not a live communicator (it was destroyed or aborted, or was never returned by hetccl)");
}

}  // namespace

hetcclComm_t registerComm(std::unique_ptr<Communicator> impl) {
  auto core = std::make_shared<CommCore>();
  core->impl = std::move(impl);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  uint64_t k = kHandleTag | r.nextSerial++;
  r.live.emplace(k, std::move(core));
  return reinterpret_cast<hetcclComm_t>(static_cast<uintptr_t>(k));
}

CommRef tryLookup(hetcclComm_t comm) noexcept {
  if (!comm) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(key(comm));
  return it == r.live.end() ? nullptr : it->second;
}

CommRef lookup(hetcclComm_t comm) {
  CommRef ref = tryLookup(comm);
  if (!ref) notLive(comm);
  return ref;
}

CommRef unregister(hetcclComm_t comm) {
  if (!comm) notLive(comm);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(key(comm));
  if (it == r.live.end()) notLive(comm);
  CommRef ref = std::move(it->second);
  r.live.erase(it);
  return ref;
}

void hold(CommRef ref) {
  for (const auto& h : groupHolds)
    if (h == ref) return;
  groupHolds.push_back(std::move(ref));
}

void releaseHolds() noexcept { groupHolds.clear(); }

void dropHold(const CommCore* core) noexcept {
  std::erase_if(groupHolds, [&](const CommRef& h) { return h.get() == core; });
}

bool waitSoleOwner(const CommRef& ref, std::chrono::steady_clock::time_point until) {
  // use_count is exact enough here: it only falls once the handle left the registry, and the
  // shared_ptr itself keeps the communicator alive for whoever still holds it.
  while (ref.use_count() > 1) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace hetccl::abi
