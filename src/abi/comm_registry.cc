#include "abi/comm_registry.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
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

// This process's id, read once and again in a forked child (the atfork handler below): every handle
// lookup compares it with the creator's, and getpid() is a system call per call (glibc caches no pid).
std::atomic<pid_t> processId{0};

Registry& registry() {
  static auto* r = [] {
    auto* reg = new Registry;  // never destroyed: handles may be used from atexit handlers
    processId.store(getpid(), std::memory_order_relaxed);
    // A fork() while another thread holds the mutex would leave it locked for ever in the child.
    pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                   [] {
                     processId.store(getpid(), std::memory_order_relaxed);
                     registry().mu.unlock();
                   });
    return reg;
  }();
  return *r;
}

thread_local std::vector<CommRef> groupHolds;

uint64_t key(hetcclComm_t comm) { return reinterpret_cast<uintptr_t>(comm); }

/// Whether this process created the communicator (not a child that inherited it through fork()).
bool createdHere(const CommCore& core) { return core.pid == processId.load(std::memory_order_relaxed); }

/// A handle inherited through fork(): its threads, connections and peers belong to the parent (the
/// child's copies of its sockets were replaced by /dev/null at fork, see net/socket.cc).
void requireCreator(const CommCore& core) {
  if (createdHere(core)) return;
  throw InvalidUsage(concat("comm was created by process ", core.pid, " and this process (", getpid(),
                            ") is a child it forked: a communicator cannot be used, aborted or destroyed across fork(); "
                            "create a new one in the child (its peers still talk to the parent)"));
}

[[noreturn]] void notLive(hetcclComm_t comm) {
  if (!comm) throw InvalidArgument("comm is null");
  throw InvalidUsage(
      "comm is not a live communicator (it was destroyed or aborted, or was never returned by hetccl)");
}

}  // namespace

hetcclComm_t registerComm(std::unique_ptr<Communicator> impl) {
  auto core = std::make_shared<CommCore>();
  core->impl = std::move(impl);
  core->pid = getpid();
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
  return it == r.live.end() || !createdHere(*it->second) ? nullptr : it->second;
}

CommRef lookup(hetcclComm_t comm) {
  if (!comm) notLive(comm);
  CommRef ref;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.live.find(key(comm));
    if (it != r.live.end()) ref = it->second;
  }
  if (!ref) notLive(comm);
  requireCreator(*ref);
  return ref;
}

CommRef unregister(hetcclComm_t comm) {
  if (!comm) notLive(comm);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(key(comm));
  if (it == r.live.end()) notLive(comm);
  requireCreator(*it->second);
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
