// Build-time check that every function of the plugin's symbol tables (src/device/hip/hip_api.hpp) is
// exported by the fake with exactly the plugin's signature: a mismatch is a compile error here, not
// undefined behaviour in a test. (Constants are compared by the unit test, hip_plugin_test.cc.)
#include <cstddef>
#include <type_traits>

#include "api.hpp"
#include "device/hip/hip_api.hpp"

namespace {

namespace api = hetccl::hip_plugin::api;

// hipPointerGetAttributes takes the plugin's own struct; the fake's has the same layout.
static_assert(sizeof(api::PointerAttributes) == sizeof(fakehip::hipPointerAttribute_t));
static_assert(offsetof(api::PointerAttributes, type) == offsetof(fakehip::hipPointerAttribute_t, type));
static_assert(offsetof(api::PointerAttributes, device) == offsetof(fakehip::hipPointerAttribute_t, device));
static_assert(offsetof(api::PointerAttributes, devicePointer) == offsetof(fakehip::hipPointerAttribute_t, devicePointer));
static_assert(offsetof(api::PointerAttributes, hostPointer) == offsetof(fakehip::hipPointerAttribute_t, hostPointer));
static_assert(offsetof(api::PointerAttributes, isManaged) == offsetof(fakehip::hipPointerAttribute_t, isManaged));
static_assert(offsetof(api::PointerAttributes, allocationFlags) ==
              offsetof(fakehip::hipPointerAttribute_t, allocationFlags));

// hipIpcMemHandle_t: 64 opaque bytes on both sides, whatever each side names its struct.
static_assert(sizeof(fakehip::hipIpcMemHandle_t) == 64);
template <typename T, typename = void>
constexpr bool kIsIpcHandle = false;
template <typename T>
constexpr bool kIsIpcHandle<T, std::void_t<decltype(T::reserved)>> =
    std::is_same_v<decltype(T::reserved), char[64]> && sizeof(T) == 64 && std::is_trivially_copyable_v<T>;
struct IpcHandleBytes {};

/// The ABI-level spelling of a parameter, applied to both sides: the structs each side declares for itself
/// become one type (hipPointerAttribute_t, the IPC handle by value), and a pointer to an IPC handle is a
/// void* (hip_api.hpp's convention for handle structs; the fake keeps HIP's typed pointer).
template <typename T, typename = void>
struct Canon {
  using type = T;
};
template <typename T>
using CanonT = typename Canon<T>::type;
template <>
struct Canon<fakehip::hipPointerAttribute_t*, void> {  // the same layout (static_asserts above)
  using type = api::PointerAttributes*;
};
template <typename T>
struct Canon<T, std::enable_if_t<kIsIpcHandle<T>>> {
  using type = IpcHandleBytes;
};
template <typename T>
struct Canon<T*, std::enable_if_t<kIsIpcHandle<T>>> {
  using type = void*;
};
template <typename R, typename... A>
struct Canon<R (*)(A...), void> {
  using type = CanonT<R> (*)(CanonT<A>...);
};

template <typename Plugin, typename Fake>
constexpr bool kSame = std::is_same_v<CanonT<Plugin>, CanonT<Fake>>;

#define FAKEHIP_CHECK_SIGNATURE(name, need) \
  static_assert(kSame<api::PFN_##name, decltype(&::name)>, "the fake's " #name " differs from hip_api.hpp's PFN_" #name);
HETCCL_HIP_RUNTIME_FUNCTIONS(FAKEHIP_CHECK_SIGNATURE)
HETCCL_HIPRTC_FUNCTIONS(FAKEHIP_CHECK_SIGNATURE)
#undef FAKEHIP_CHECK_SIGNATURE

}  // namespace
