// One vendor collective library (NCCL, or RCCL: same API) opened by path with dlopen, and its function
// table. The adaptor never links the library and never looks a symbol up in the global scope: every
// function pointer comes from dlsym on the handle this class opened, so an LD_PRELOADed hetccl drop-in
// (which exports the same names) cannot be called by mistake.
#pragma once

#include <memory>
#include <string>

#include "domain/nccl/nccl_abi.hpp"

namespace hetccl::domain::nccl {

/// What differs between the members of the NCCL API family (NCCL for CUDA devices, RCCL for HIP devices:
/// one API, one adaptor): names in messages, the variable naming the library, the file names the search
/// tries, and where the vendor's toolkit and runtime put it (library_search.hpp).
struct Flavor {
  const char* name;            ///< "NCCL", "RCCL"
  const char* libVariable;     ///< "HETCCL_NCCL_LIB" (declared in src/core/config.cc)
  const char* fileName;        ///< "libnccl.so.2", "librccl.so.1": the name applications link
  const char* altFileName;     ///< another name to try after fileName ("librccl.so"), or nullptr
  const char* runtimeStem;     ///< the vendor runtime's file name ("libcudart.so", "libamdhip64.so"): the
                               ///< library is looked for next to a loaded one
  const char* homeVariable;    ///< the toolkit's variable ("CUDA_HOME", "ROCM_PATH")
  const char* homeLibDir;      ///< its library folder ("lib64", "lib")
  const char* defaultHome;     ///< the toolkit's usual place ("/usr/local/cuda", "/opt/rocm")
};
inline constexpr Flavor kNcclFlavor{"NCCL",         "HETCCL_NCCL_LIB", "libnccl.so.2", nullptr,
                                    "libcudart.so", "CUDA_HOME",       "lib64",        "/usr/local/cuda"};
inline constexpr Flavor kRcclFlavor{"RCCL",           "HETCCL_RCCL_LIB", "librccl.so.1", "librccl.so",
                                    "libamdhip64.so", "ROCM_PATH",       "lib",          "/opt/rocm"};

/// The function table. Required entries are never null after NcclLibrary::open; optional ones (marked)
/// are null when the library lacks them.
struct NcclApi {
  decltype(&abi::ncclGetVersion) getVersion = nullptr;
  decltype(&abi::ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&abi::ncclGetErrorString) getErrorString = nullptr;
  decltype(&abi::ncclGetLastError) getLastError = nullptr;  ///< optional
  decltype(&abi::ncclCommInitRank) commInitRank = nullptr;
  decltype(&abi::ncclCommInitRankConfig) commInitRankConfig = nullptr;  ///< optional
  decltype(&abi::ncclCommFinalize) commFinalize = nullptr;              ///< optional
  decltype(&abi::ncclCommDestroy) commDestroy = nullptr;
  decltype(&abi::ncclCommAbort) commAbort = nullptr;
  decltype(&abi::ncclCommGetAsyncError) commGetAsyncError = nullptr;  ///< optional
  decltype(&abi::ncclRedOpCreatePreMulSum) redOpCreatePreMulSum = nullptr;  ///< optional, with redOpDestroy
  decltype(&abi::ncclRedOpDestroy) redOpDestroy = nullptr;                  ///< optional, with the above
  decltype(&abi::ncclAllReduce) allReduce = nullptr;
  decltype(&abi::ncclReduceScatter) reduceScatter = nullptr;
  decltype(&abi::ncclAllGather) allGather = nullptr;
  decltype(&abi::ncclBroadcast) broadcast = nullptr;
  decltype(&abi::ncclReduce) reduce = nullptr;
  decltype(&abi::ncclSend) send = nullptr;
  decltype(&abi::ncclRecv) recv = nullptr;
  decltype(&abi::ncclGroupStart) groupStart = nullptr;
  decltype(&abi::ncclGroupEnd) groupEnd = nullptr;
};

class NcclLibrary {
 public:
  /// dlopen(path, RTLD_NOW | RTLD_LOCAL), resolves the table on that handle, reads the version.
  /// `selfAddress` is an address inside hetccl's own code (nullptr: this adaptor's object); when the
  /// library's ncclGetVersion lives in that same object, the path resolved to hetccl itself and open
  /// throws InvalidUsage telling to set the flavor's variable to the real library.
  /// Throws SystemError when dlopen fails (with dlerror's text), InvalidUsage naming every missing
  /// required symbol, and the library's error when ncclGetVersion fails.
  /// The handle is never closed: vendor libraries keep helper threads and exit handlers.
  static std::shared_ptr<const NcclLibrary> open(const Flavor& flavor, const std::string& path,
                                                 const void* selfAddress = nullptr);

  const NcclApi& api() const noexcept { return api_; }
  const Flavor& flavor() const noexcept { return flavor_; }
  /// The path given to open().
  const std::string& path() const noexcept { return path_; }
  /// The file the loader actually mapped (dladdr of ncclGetVersion), e.g. after symlinks or a bare name.
  const std::string& loadedFrom() const noexcept { return loadedFrom_; }
  /// ncclGetVersion's code; versionString() decodes it ("2.23.4"; codes below 10000 use NCCL's old
  /// major*1000 + minor*100 + patch form).
  int versionCode() const noexcept { return version_; }
  std::string versionString() const;
  /// "NCCL 2.23.4 from /path/libnccl.so.2".
  std::string describe() const;

  /// Throws the hetccl::Error for `result` returned by `call` (see nccl_error.hpp), with the library's
  /// last-error text; does nothing for ncclSuccess. `where` is appended (e.g. "domain rank 1 of 2").
  void check(abi::ncclResult_t result, const char* call, const std::string& where = {}) const;

 private:
  NcclLibrary(const Flavor& flavor, std::string path) : flavor_(flavor), path_(std::move(path)) {}

  Flavor flavor_;
  std::string path_;
  std::string loadedFrom_;
  int version_ = 0;
  NcclApi api_;
};

}  // namespace hetccl::domain::nccl
