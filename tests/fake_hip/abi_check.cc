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

template <typename Plugin, typename Fake>
constexpr bool kSame = std::is_same_v<Plugin, Fake>;
template <>
constexpr bool kSame<api::PFN_hipPointerGetAttributes, decltype(&::hipPointerGetAttributes)> = true;

#define FAKEHIP_CHECK_SIGNATURE(name, need) \
  static_assert(kSame<api::PFN_##name, decltype(&::name)>, "the fake's " #name " differs from hip_api.hpp's PFN_" #name);
HETCCL_HIP_RUNTIME_FUNCTIONS(FAKEHIP_CHECK_SIGNATURE)
HETCCL_HIPRTC_FUNCTIONS(FAKEHIP_CHECK_SIGNATURE)
#undef FAKEHIP_CHECK_SIGNATURE

}  // namespace
