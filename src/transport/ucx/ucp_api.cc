// libucp opened with dlopen and resolved with dlsym (ucp_api.hpp's table): libhetccl links no UCX library.
#include "transport/ucx/ucp_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/config.hpp"
#include "core/error.hpp"

namespace hetccl::transport::ucx::api {
namespace {

struct Loaded {
  Ucp ucp;
  std::string error;  ///< empty once loaded
};

template <typename Fn>
void resolve(void* handle, const char* name, Fn* fn, std::string* missing) {
  // dlsym on libucp's handle also searches its dependencies: ucs_status_string comes from libucs.so.0.
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!*fn) *missing += concat(missing->empty() ? "" : ", ", name);
}

Loaded open() {
  Loaded l;
  const std::string forced = config().isSet("HETCCL_UCX_LIB") ? config().str("HETCCL_UCX_LIB") : "";
  const std::string path = forced.empty() ? "libucp.so.0" : forced;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    l.error = forced.empty() ? concat("libucp.so.0 not found (UCX is not installed: Debian's libucx0): ", err ? err : "")
                             : concat("HETCCL_UCX_LIB=", forced, " not loaded: ", err ? err : "");
    return l;
  }
  Ucp& u = l.ucp;
  std::string missing;
#define HETCCL_UCP_RESOLVE(name) resolve(handle, #name, &u.name, &missing);
  HETCCL_UCP_FUNCTIONS(HETCCL_UCP_RESOLVE)
#undef HETCCL_UCP_RESOLVE
  if (!missing.empty()) {
    l.error = concat(path, " lacks required UCP symbol(s): ", missing);
    return l;  // the handle stays open: nothing of it ran
  }
  u.handle = handle;
  u.path = path;
  u.ucp_get_version(&u.major, &u.minor, &u.release);
  if (u.major != kApiMajor || u.minor < kApiMinor) {
    l.error = concat(path, " is UCX ", u.major, ".", u.minor, ".", u.release, "; the ucx transport needs UCX ", kApiMajor,
                     ".", kApiMinor, " or later (1.x)");
    u.handle = nullptr;
  }
  return l;
}

}  // namespace

std::string Ucp::statusText(int status) const {
  const char* text = ucs_status_string ? ucs_status_string(static_cast<ucs_status_t>(status)) : nullptr;
  return concat(text ? text : "UCX error", " (", status, ")");
}

const Ucp* load(std::string* why) {
  static const Loaded loaded = open();
  if (!loaded.ucp.handle) {
    *why = loaded.error;
    return nullptr;
  }
  return &loaded.ucp;
}

}  // namespace hetccl::transport::ucx::api
