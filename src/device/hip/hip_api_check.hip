// Build-time check of hip_api.hpp against the real HIP headers (Debian's HIP 5.2 in /usr/include/hip):
// every PFN_<symbol> must be the header's decltype(&::symbol) with enums read as int and pointers to
// opaque handle structs as void*, and every constant must equal the header's value. Compiled with
// clang -x hip -fsyntax-only by src/device/hip/CMakeLists.txt; a wrong declaration fails the build.
// Values that changed after 5.2 (hipMemoryType in 6.0, gcnArchName's offset in hipDeviceProp_tR0600) are
// checked for the 5.x side only; their 6.x values cite the 6.x header in hip_api.hpp.
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

#include <cstddef>
#include <type_traits>

// Flags that the header defines as macros: their values are kept, the macros removed (hip_api.hpp declares
// constants of the same names).
constexpr unsigned kHeader_hipStreamNonBlocking = hipStreamNonBlocking;
#undef hipStreamNonBlocking
constexpr unsigned kHeader_hipEventDisableTiming = hipEventDisableTiming;
#undef hipEventDisableTiming
constexpr unsigned kHeader_hipHostMallocPortable = hipHostMallocPortable;
#undef hipHostMallocPortable
constexpr unsigned kHeader_hipHostMallocMapped = hipHostMallocMapped;
#undef hipHostMallocMapped
constexpr unsigned kHeader_hipHostRegisterPortable = hipHostRegisterPortable;
#undef hipHostRegisterPortable
constexpr unsigned kHeader_hipHostRegisterMapped = hipHostRegisterMapped;
#undef hipHostRegisterMapped
constexpr unsigned kHeader_hipStreamWaitValueGte = hipStreamWaitValueGte;
#undef hipStreamWaitValueGte
constexpr unsigned kHeader_hipStreamWaitValueEq = hipStreamWaitValueEq;
#undef hipStreamWaitValueEq
constexpr unsigned kHeader_hipIpcMemLazyEnablePeerAccess = hipIpcMemLazyEnablePeerAccess;
#undef hipIpcMemLazyEnablePeerAccess

#include "device/hip/hip_api.hpp"

namespace api = hetccl::hip_plugin::api;

namespace {

/// The ABI-level spelling of a header type, in hip_api.hpp's conventions.
template <typename T, typename = void>
struct Canon {
  using type = T;
};
template <typename T>
using CanonT = typename Canon<T>::type;

template <typename T>
struct Canon<T, std::enable_if_t<std::is_enum_v<T>>> {  // every HIP enum is passed as int
  static_assert(sizeof(T) == sizeof(int), "HIP enums are int-sized");
  using type = int;
};
template <typename T>
struct Canon<T*, void> {
  using type = std::conditional_t<std::is_class_v<T> && !std::is_same_v<T, hipPointerAttribute_t> &&
                                      !std::is_same_v<T, hipDeviceProp_t>,
                                  void*, CanonT<T>*>;
};
template <typename T>
struct Canon<const T*, void> {
  using type = const CanonT<T>*;
};
template <>
struct Canon<hipPointerAttribute_t*, void> {
  using type = api::PointerAttributes*;
};
template <>
struct Canon<hipDeviceProp_t*, void> {
  using type = void*;
};
template <>
struct Canon<hipIpcMemHandle_t, void> {  // passed by value: the same 64 bytes
  static_assert(sizeof(hipIpcMemHandle_t) == sizeof(api::IpcMemHandle));
  using type = api::IpcMemHandle;
};
template <typename R, typename... A>
struct Canon<R (*)(A...), void> {
  using type = CanonT<R> (*)(CanonT<A>...);
};

#define HETCCL_CHECK_SIGNATURE(name, need)                                            \
  static_assert(std::is_same_v<CanonT<decltype(&::name)>, api::PFN_##name>,           \
                "hip_api.hpp: PFN_" #name " differs from the HIP header's declaration");
// hipGetDevicePropertiesR0600 / R0000 do not exist in 5.2: they share hipGetDeviceProperties's type.

}  // namespace

// Runtime functions.
HETCCL_CHECK_SIGNATURE(hipGetErrorString, x)
HETCCL_CHECK_SIGNATURE(hipGetErrorName, x)
HETCCL_CHECK_SIGNATURE(hipGetLastError, x)
HETCCL_CHECK_SIGNATURE(hipRuntimeGetVersion, x)
HETCCL_CHECK_SIGNATURE(hipDriverGetVersion, x)
HETCCL_CHECK_SIGNATURE(hipGetDeviceCount, x)
HETCCL_CHECK_SIGNATURE(hipGetDevice, x)
HETCCL_CHECK_SIGNATURE(hipSetDevice, x)
HETCCL_CHECK_SIGNATURE(hipDeviceGetAttribute, x)
HETCCL_CHECK_SIGNATURE(hipDeviceGetPCIBusId, x)
HETCCL_CHECK_SIGNATURE(hipGetDeviceProperties, x)
static_assert(std::is_same_v<api::PFN_hipGetDevicePropertiesR0000, api::PFN_hipGetDeviceProperties> &&
              std::is_same_v<api::PFN_hipGetDevicePropertiesR0600, api::PFN_hipGetDeviceProperties>);
// hipMalloc / hipHostMalloc are overloaded in C++ (templates over T**): the C overload is picked by naming
// its header type, which must exist, and then compared.
constexpr hipError_t (*kHeaderHipMalloc)(void**, size_t) = &::hipMalloc;
constexpr hipError_t (*kHeaderHipHostMalloc)(void**, size_t, unsigned) = &::hipHostMalloc;
static_assert(std::is_same_v<CanonT<std::remove_const_t<decltype(kHeaderHipMalloc)>>, api::PFN_hipMalloc>, "PFN_hipMalloc");
static_assert(std::is_same_v<CanonT<std::remove_const_t<decltype(kHeaderHipHostMalloc)>>, api::PFN_hipHostMalloc>, "PFN_hipHostMalloc");
HETCCL_CHECK_SIGNATURE(hipFree, x)
HETCCL_CHECK_SIGNATURE(hipHostFree, x)
HETCCL_CHECK_SIGNATURE(hipHostRegister, x)
HETCCL_CHECK_SIGNATURE(hipHostUnregister, x)
HETCCL_CHECK_SIGNATURE(hipHostGetDevicePointer, x)
HETCCL_CHECK_SIGNATURE(hipPointerGetAttributes, x)
HETCCL_CHECK_SIGNATURE(hipStreamCreateWithFlags, x)
HETCCL_CHECK_SIGNATURE(hipStreamDestroy, x)
HETCCL_CHECK_SIGNATURE(hipStreamSynchronize, x)
HETCCL_CHECK_SIGNATURE(hipStreamQuery, x)
HETCCL_CHECK_SIGNATURE(hipStreamWaitEvent, x)
HETCCL_CHECK_SIGNATURE(hipEventCreateWithFlags, x)
HETCCL_CHECK_SIGNATURE(hipEventDestroy, x)
HETCCL_CHECK_SIGNATURE(hipEventRecord, x)
HETCCL_CHECK_SIGNATURE(hipEventQuery, x)
HETCCL_CHECK_SIGNATURE(hipEventSynchronize, x)
HETCCL_CHECK_SIGNATURE(hipMemcpy, x)
HETCCL_CHECK_SIGNATURE(hipMemcpyAsync, x)
HETCCL_CHECK_SIGNATURE(hipMemset, x)
HETCCL_CHECK_SIGNATURE(hipMemsetAsync, x)
HETCCL_CHECK_SIGNATURE(hipStreamGetCaptureInfo, x)
HETCCL_CHECK_SIGNATURE(hipThreadExchangeStreamCaptureMode, x)
HETCCL_CHECK_SIGNATURE(hipStreamWaitValue64, x)
HETCCL_CHECK_SIGNATURE(hipStreamWriteValue64, x)
HETCCL_CHECK_SIGNATURE(hipIpcGetMemHandle, x)
HETCCL_CHECK_SIGNATURE(hipIpcOpenMemHandle, x)
HETCCL_CHECK_SIGNATURE(hipIpcCloseMemHandle, x)
HETCCL_CHECK_SIGNATURE(hipMemGetAddressRange, x)
HETCCL_CHECK_SIGNATURE(hipModuleLoadData, x)
HETCCL_CHECK_SIGNATURE(hipModuleUnload, x)
HETCCL_CHECK_SIGNATURE(hipModuleGetFunction, x)
HETCCL_CHECK_SIGNATURE(hipModuleLaunchKernel, x)
// hiprtc.
HETCCL_CHECK_SIGNATURE(hiprtcGetErrorString, x)
HETCCL_CHECK_SIGNATURE(hiprtcVersion, x)
HETCCL_CHECK_SIGNATURE(hiprtcCreateProgram, x)
HETCCL_CHECK_SIGNATURE(hiprtcCompileProgram, x)
HETCCL_CHECK_SIGNATURE(hiprtcGetProgramLogSize, x)
HETCCL_CHECK_SIGNATURE(hiprtcGetProgramLog, x)
HETCCL_CHECK_SIGNATURE(hiprtcGetCodeSize, x)
HETCCL_CHECK_SIGNATURE(hiprtcGetCode, x)
HETCCL_CHECK_SIGNATURE(hiprtcDestroyProgram, x)

// Every symbol of the tables is checked above: a new table entry without a check fails here.
#define HETCCL_COUNT(name, need) +1
static_assert(0 HETCCL_HIP_RUNTIME_FUNCTIONS(HETCCL_COUNT) == 47, "add a check for the new runtime symbol");
static_assert(0 HETCCL_HIPRTC_FUNCTIONS(HETCCL_COUNT) == 9, "add a check for the new hiprtc symbol");

// Constants.
#define HETCCL_CHECK_VALUE(name) static_assert(api::name == static_cast<decltype(api::name)>(name), #name);
HETCCL_CHECK_VALUE(hipSuccess)
HETCCL_CHECK_VALUE(hipErrorInvalidValue)
HETCCL_CHECK_VALUE(hipErrorOutOfMemory)
HETCCL_CHECK_VALUE(hipErrorNotInitialized)
HETCCL_CHECK_VALUE(hipErrorInsufficientDriver)
HETCCL_CHECK_VALUE(hipErrorNoDevice)
HETCCL_CHECK_VALUE(hipErrorInvalidDevice)
HETCCL_CHECK_VALUE(hipErrorInvalidImage)
HETCCL_CHECK_VALUE(hipErrorNoBinaryForGpu)
HETCCL_CHECK_VALUE(hipErrorSharedObjectInitFailed)
HETCCL_CHECK_VALUE(hipErrorNotFound)
HETCCL_CHECK_VALUE(hipErrorNotReady)
HETCCL_CHECK_VALUE(hipErrorNotSupported)
HETCCL_CHECK_VALUE(hipErrorStreamCaptureUnsupported)
HETCCL_CHECK_VALUE(HIPRTC_SUCCESS)
HETCCL_CHECK_VALUE(hipMemcpyDefault)
static_assert(api::hipStreamNonBlocking == kHeader_hipStreamNonBlocking, "hipStreamNonBlocking");
static_assert(api::hipEventDisableTiming == kHeader_hipEventDisableTiming, "hipEventDisableTiming");
static_assert(api::hipHostMallocPortable == kHeader_hipHostMallocPortable, "hipHostMallocPortable");
static_assert(api::hipHostMallocMapped == kHeader_hipHostMallocMapped, "hipHostMallocMapped");
static_assert(api::hipHostRegisterPortable == kHeader_hipHostRegisterPortable, "hipHostRegisterPortable");
static_assert(api::hipHostRegisterMapped == kHeader_hipHostRegisterMapped, "hipHostRegisterMapped");
static_assert(api::hipStreamWaitValueGte == kHeader_hipStreamWaitValueGte, "hipStreamWaitValueGte");
static_assert(api::hipStreamWaitValueEq == kHeader_hipStreamWaitValueEq, "hipStreamWaitValueEq");
static_assert(api::hipIpcMemLazyEnablePeerAccess == kHeader_hipIpcMemLazyEnablePeerAccess, "hipIpcMemLazyEnablePeerAccess");
HETCCL_CHECK_VALUE(hipStreamCaptureStatusNone)
HETCCL_CHECK_VALUE(hipStreamCaptureStatusActive)
HETCCL_CHECK_VALUE(hipStreamCaptureStatusInvalidated)
HETCCL_CHECK_VALUE(hipStreamCaptureModeGlobal)
HETCCL_CHECK_VALUE(hipStreamCaptureModeThreadLocal)
HETCCL_CHECK_VALUE(hipStreamCaptureModeRelaxed)
HETCCL_CHECK_VALUE(hipDeviceAttributeMultiprocessorCount)
HETCCL_CHECK_VALUE(hipDeviceAttributeCanUseStreamWaitValue)
#if HIP_VERSION_MAJOR >= 6  // checking against a ROCm 6.x/7.x header
static_assert(api::MemoryType6::kUnregistered == hipMemoryTypeUnregistered && api::MemoryType6::kHost == hipMemoryTypeHost &&
              api::MemoryType6::kDevice == hipMemoryTypeDevice && api::MemoryType6::kManaged == hipMemoryTypeManaged &&
              api::MemoryType6::kArray == hipMemoryTypeArray && api::MemoryType6::kUnified == hipMemoryTypeUnified,
              "hipMemoryType (6.x)");
#define HETCCL_HIP_MEMORY_TYPE_FIELD type
#define HETCCL_HIP_GCN_ARCH_OFFSET api::kGcnArchNameOffsetR0600
#else
static_assert(api::MemoryType5::kHost == hipMemoryTypeHost && api::MemoryType5::kDevice == hipMemoryTypeDevice &&
              api::MemoryType5::kArray == hipMemoryTypeArray && api::MemoryType5::kUnified == hipMemoryTypeUnified,
              "hipMemoryType (5.x)");
#define HETCCL_HIP_MEMORY_TYPE_FIELD memoryType
#define HETCCL_HIP_GCN_ARCH_OFFSET api::kGcnArchNameOffsetR0000
#endif

// Layouts.
static_assert(sizeof(api::PointerAttributes) == sizeof(hipPointerAttribute_t) &&
              offsetof(api::PointerAttributes, type) == offsetof(hipPointerAttribute_t, HETCCL_HIP_MEMORY_TYPE_FIELD) &&
              offsetof(api::PointerAttributes, device) == offsetof(hipPointerAttribute_t, device) &&
              offsetof(api::PointerAttributes, devicePointer) == offsetof(hipPointerAttribute_t, devicePointer) &&
              offsetof(api::PointerAttributes, hostPointer) == offsetof(hipPointerAttribute_t, hostPointer) &&
              offsetof(api::PointerAttributes, isManaged) == offsetof(hipPointerAttribute_t, isManaged) &&
              offsetof(api::PointerAttributes, allocationFlags) == offsetof(hipPointerAttribute_t, allocationFlags),
              "hipPointerAttribute_t layout");
static_assert(offsetof(hipDeviceProp_t, gcnArchName) == HETCCL_HIP_GCN_ARCH_OFFSET &&
                  sizeof(hipDeviceProp_t::gcnArchName) == api::kGcnArchNameBytes,
              "gcnArchName offset in hipDeviceProp_t (5.x: R0000 layout, 6.x+: R0600)");
static_assert(sizeof(hipDeviceProp_t) <= api::kDevicePropBufferBytes, "device property buffer");
