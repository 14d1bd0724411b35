#include "nccl_abi/vendor_reentry.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "core/log.hpp"

namespace hetccl::nccl_abi {
namespace {

/// One loaded object's address range and whether it is an NCCL-family library.
struct ObjectRange {
  uintptr_t lo = 0, hi = 0;
  void* vendorHandle = nullptr;  ///< dlopen handle of the NCCL-family library; nullptr: not one
};

constexpr int kMaxObjects = 64;
ObjectRange gRanges[kMaxObjects];
std::atomic<int> gCount{0};  // entries [0, gCount) are complete (published with release)
std::mutex gInsertMu;
std::atomic<void*> gFirstVendor{nullptr};  // the vendor whose twins the per-entry slots cache

void thisObjectMarker() {}

struct Found {
  uintptr_t address = 0;
  ObjectRange range;
  std::string name;
  bool found = false;
};

/// The loaded object whose PT_LOAD segments contain `found->address` (dl_iterate_phdr callback).
int findObject(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<Found*>(data);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
    lo = std::min(lo, start);
    hi = std::max(hi, end);
    if (f->address >= start && f->address < end) contains = true;
  }
  if (!contains) return 0;
  f->range.lo = lo;
  f->range.hi = hi;
  f->name = info->dlpi_name ? info->dlpi_name : "";
  f->found = true;
  return 1;
}

/// Opens (without loading) the object found and keeps the handle when it defines pncclGetVersion itself.
/// hetccl's own object defines it too and is never a vendor.
void classify(Found& f) {
  static const uintptr_t self = reinterpret_cast<uintptr_t>(&thisObjectMarker);
  if (f.name.empty() || (self >= f.range.lo && self < f.range.hi)) return;  // the executable, or us
  void* handle = dlopen(f.name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return;
  auto sym = reinterpret_cast<uintptr_t>(dlsym(handle, "pncclGetVersion"));
  if (sym >= f.range.lo && sym < f.range.hi) {
    f.range.vendorHandle = handle;  // kept open: its twins are looked up later
    HETCCL_INFO(log::kInit, "calls from ", f.name, " to its own NCCL names are routed back to it");
    return;
  }
  dlclose(handle);
}

/// Slow path: finds, classifies and (when there is room) caches the object holding `address`.
void* lookUp(uintptr_t address) {
  std::lock_guard<std::mutex> lock(gInsertMu);
  const int n = gCount.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (address >= gRanges[i].lo && address < gRanges[i].hi) return gRanges[i].vendorHandle;
  Found f;
  f.address = address;
  dl_iterate_phdr(&findObject, &f);
  if (!f.found) return nullptr;  // not in any object (generated code): not a vendor, not cached
  classify(f);
  if (n < kMaxObjects) {
    gRanges[n] = f.range;
    gCount.store(n + 1, std::memory_order_release);
  }
  return f.range.vendorHandle;
}

}  // namespace

void* vendorTwin(const void* caller, const char* name, std::atomic<void*>& slot) noexcept {
  const auto address = reinterpret_cast<uintptr_t>(caller);
  void* vendor = nullptr;
  bool cached = false;
  const int n = gCount.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (address >= gRanges[i].lo && address < gRanges[i].hi) {
      vendor = gRanges[i].vendorHandle;
      cached = true;
      break;
    }
  if (!cached) vendor = lookUp(address);
  if (!vendor) return nullptr;

  void* first = gFirstVendor.load(std::memory_order_acquire);
  if (!first && gFirstVendor.compare_exchange_strong(first, vendor)) first = vendor;
  const bool isFirst = first == vendor;
  if (isFirst)
    if (void* twin = slot.load(std::memory_order_acquire)) return twin;
  // dlsym on the vendor's handle searches that library first: its own definition of the name (in NCCL
  // a weak alias of the pnccl twin), never the preloaded drop-in.
  void* twin = dlsym(vendor, name);
  char twinName[96];
  if (!twin && std::snprintf(twinName, sizeof twinName, "p%s", name) < static_cast<int>(sizeof twinName))
    twin = dlsym(vendor, twinName);
  if (!twin) {
    HETCCL_WARN(log::kInit, "an NCCL-family library calls ", name, " but defines neither it nor p", name,
                "; the call is served by hetccl");
    return nullptr;
  }
  if (isFirst) {
    if (!slot.exchange(twin, std::memory_order_acq_rel))  // once per name: which calls were routed back
      HETCCL_INFO(log::kInit, "routing a vendor library's own call to ", name, " back to it");
  }
  return twin;
}

}  // namespace hetccl::nccl_abi
