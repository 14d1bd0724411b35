#include "domain/nccl/nccl_library.hpp"

#include <dlfcn.h>

#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "domain/nccl/nccl_error.hpp"

// Why dlsym on our own handle, and not RTLD_DEEPBIND:
// hetccl's drop-in build exports ncclAllReduce & co. under libnccl.so.2's SONAME and is LD_PRELOADed, so
// a global lookup (RTLD_DEFAULT, RTLD_NEXT, or linking -lnccl) could land in hetccl itself and recurse.
// The adaptor never looks up globally: every pointer below comes from dlsym(handle, name), which
// searches only the opened library and its dependencies, and open() verifies with dladdr that the
// library is not hetccl's own object (a bare "libnccl.so.2" would match the preloaded drop-in by SONAME).
// That makes every call *we* make reach the real library. RTLD_DEEPBIND would additionally make the real
// library prefer its own definitions for calls it makes to its own exported names through the PLT; it
// is not used because it breaks symbol interposition the process relies on (sanitizers refuse it,
// LD_PRELOADed allocators and libstdc++'s single operator new / iostream state get split). What remains
// is the real library calling one of its *own public names* internally (NCCL's ncclBcast calls
// ncclBroadcast, for instance; the adaptor never calls ncclBcast): such an internal call would bind to
// the preloaded drop-in. It does (NCCL 2.28 calls its own ncclCommGetAsyncError, ncclGetVersion, ...
// through its PLT): the drop-in hands such calls back to the caller's own function, see
// src/nccl_abi/vendor_reentry.hpp (seen working on 2 x H200: bench/results/torch_dropin_h200x2_2026-11-22).

namespace hetccl::domain::nccl {
namespace {

/// A function of this object: dladdr of it names the object holding hetccl's code.
void hetcclAdaptorMarker() {}

template <typename Fn>
void resolve(void* handle, const char* name, Fn& slot, std::vector<std::string>* missingRequired) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!slot && missingRequired) missingRequired->push_back(name);
}

NcclApi resolveTable(void* handle, const Flavor& flavor, const std::string& path) {
  NcclApi a;
  std::vector<std::string> missing;
  resolve(handle, "ncclGetVersion", a.getVersion, &missing);
  resolve(handle, "ncclGetUniqueId", a.getUniqueId, &missing);
  resolve(handle, "ncclGetErrorString", a.getErrorString, &missing);
  resolve(handle, "ncclGetLastError", a.getLastError, nullptr);
  resolve(handle, "ncclCommInitRank", a.commInitRank, &missing);
  resolve(handle, "ncclCommInitRankConfig", a.commInitRankConfig, nullptr);
  resolve(handle, "ncclCommFinalize", a.commFinalize, nullptr);
  resolve(handle, "ncclCommDestroy", a.commDestroy, &missing);
  resolve(handle, "ncclCommAbort", a.commAbort, &missing);
  resolve(handle, "ncclCommGetAsyncError", a.commGetAsyncError, nullptr);
  resolve(handle, "ncclRedOpCreatePreMulSum", a.redOpCreatePreMulSum, nullptr);
  resolve(handle, "ncclRedOpDestroy", a.redOpDestroy, nullptr);
  resolve(handle, "ncclAllReduce", a.allReduce, &missing);
  resolve(handle, "ncclReduceScatter", a.reduceScatter, &missing);
  resolve(handle, "ncclAllGather", a.allGather, &missing);
  resolve(handle, "ncclBroadcast", a.broadcast, &missing);
  resolve(handle, "ncclReduce", a.reduce, &missing);
  resolve(handle, "ncclSend", a.send, &missing);
  resolve(handle, "ncclRecv", a.recv, &missing);
  resolve(handle, "ncclGroupStart", a.groupStart, &missing);
  resolve(handle, "ncclGroupEnd", a.groupEnd, &missing);
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    throw InvalidUsage(concat(flavor.name, " library '", path, "' lacks required symbols: ", names,
                              " (not a ", flavor.name, " 2.x library? set ", flavor.libVariable, ")"));
  }
  if (!a.redOpCreatePreMulSum != !a.redOpDestroy) {  // one without the other is unusable
    a.redOpCreatePreMulSum = nullptr;
    a.redOpDestroy = nullptr;
  }
  return a;
}

/// dladdr's object for `address`: its base address and file name.
Dl_info objectOf(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0) info = Dl_info{};
  return info;
}

}  // namespace

std::shared_ptr<const NcclLibrary> NcclLibrary::open(const Flavor& flavor, const std::string& path,
                                                     const void* selfAddress) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw SystemError(concat("cannot load ", flavor.name, " from '", path, "': ", why ? why : "unknown dlopen error",
                             " (set ", flavor.libVariable, " to the library's path)"));
  }
  std::shared_ptr<NcclLibrary> lib(new NcclLibrary(flavor, path));
  lib->api_ = resolveTable(handle, flavor, path);

  Dl_info theirs = objectOf(reinterpret_cast<const void*>(lib->api_.getVersion));
  Dl_info ours = objectOf(selfAddress ? selfAddress : reinterpret_cast<const void*>(&hetcclAdaptorMarker));
  lib->loadedFrom_ = theirs.dli_fname ? theirs.dli_fname : path;
  if (theirs.dli_fbase && theirs.dli_fbase == ours.dli_fbase)
    throw InvalidUsage(concat("'", path, "' resolved to hetccl itself (", lib->loadedFrom_, "), not to ", flavor.name,
                              ": set ", flavor.libVariable, " to the path of the real ", flavor.name, " library"));

  lib->check(lib->api_.getVersion(&lib->version_), "ncclGetVersion");
  HETCCL_INFO(log::kInit, "loaded ", lib->describe());
  return lib;
}

std::string NcclLibrary::versionString() const {
  int v = version_;
  if (v >= 10000) return concat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
  return concat(v / 1000, ".", (v / 100) % 10, ".", v % 100);
}

std::string NcclLibrary::describe() const {
  return concat(flavor_.name, " ", versionString(), " from ", loadedFrom_);
}

void NcclLibrary::check(abi::ncclResult_t result, const char* call, const std::string& where) const {
  if (result == abi::ncclSuccess) return;
  std::string text = concat(flavor_.name, " ", call, " failed: ", resultName(result));
  if (api_.getErrorString) {
    const char* s = api_.getErrorString(result);
    if (s && *s) text += concat(" (", s, ")");
  }
  if (api_.getLastError) {
    const char* last = api_.getLastError(nullptr);  // NCCL ignores the comm argument
    if (last && *last) text += concat(": ", last);
  }
  if (!where.empty()) text += concat(" [", where, "]");
  throwVendorError(result, text);
}

}  // namespace hetccl::domain::nccl
