// The slice of UCX's UCP API (and one libucs function) that the ucx transport uses, declared here without
// any UCX header: libhetccl never links libucp; ucp_api.cc opens libucp.so.0 with dlopen at run time and
// resolves every function below with dlsym, so the library builds and runs where UCX is not installed
// (the transport is then unavailable, with the reason, and tcp serves the links between hosts).
//
// Conventions (as src/device/hip/hip_api.hpp):
//  - ucs_status_t is int8_t (the enum is declared packed: one byte, returned in AL -- reading it as int
//    would take garbage upper bits); every other enum is `int`;
//  - opaque handles (ucp_context_h, ucp_worker_h, ucp_ep_h, ucp_listener_h, ucp_conn_request_h,
//    ucp_config_t*, requests) are `void*`; ucs_status_ptr_t is `void*` with UCX's pointer encoding
//    (statusOf() below);
//  - the parameter/attribute structs are declared with UCX 1.13's full layout; UCX reads only the fields
//    named in field_mask / op_attr_mask, so one layout serves every later 1.x (fields are only appended);
//  - ucp_api_check.cxx static_asserts, at build time where <ucp/api/ucp.h> exists (Debian's libucx-dev
//    1.13), that every PFN_* equals the header's decltype(&::symbol) in these conventions, that every
//    constant equals the header's and that every struct has the header's size and field offsets.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <string>

namespace hetccl::transport::ucx::api {

// ---- types ------------------------------------------------------------------------------------------
using ucs_status_t = int8_t;     // enum ucs_status_t, UCS_S_PACKED (ucs/type/status.h)
using ucp_tag_t = uint64_t;      // ucp_def.h
using ucp_datatype_t = uint64_t;  // ucp_def.h

/// ucs_sock_addr_t (ucs/config/types.h)
struct SockAddr {
  const sockaddr* addr;
  socklen_t addrlen;
};

/// ucp_tag_recv_info_t
struct TagRecvInfo {
  ucp_tag_t senderTag;
  size_t length;
};

using SendCallback = void (*)(void* request, ucs_status_t status, void* userData);
using TagRecvCallback = void (*)(void* request, ucs_status_t status, const TagRecvInfo* info, void* userData);
using StreamRecvCallback = void (*)(void* request, ucs_status_t status, size_t length, void* userData);
using ErrorCallback = void (*)(void* arg, void* ep, ucs_status_t status);     // ucp_err_handler_cb_t
using ConnCallback = void (*)(void* connRequest, void* arg);                   // ucp_listener_conn_callback_t

/// ucp_params_t
struct Params {
  uint64_t fieldMask;
  uint64_t features;
  size_t requestSize;
  void (*requestInit)(void*);
  void (*requestCleanup)(void*);
  uint64_t tagSenderMask;
  int mtWorkersShared;
  size_t estimatedNumEps;
  size_t estimatedNumPpn;
  const char* name;
};

/// ucp_context_attr_t
struct ContextAttr {
  uint64_t fieldMask;
  size_t requestSize;
  int threadMode;  // ucs_thread_mode_t
  uint64_t memoryTypes;
  char name[32];  // UCP_ENTITY_NAME_MAX
};

/// ucp_worker_params_t
struct WorkerParams {
  uint64_t fieldMask;
  int threadMode;  // ucs_thread_mode_t
  unsigned long cpuMask[1024 / (8 * sizeof(unsigned long))];  // ucs_cpu_set_t
  unsigned events;
  void* userData;
  int eventFd;
  uint64_t flags;
  const char* name;
  size_t amAlignment;
  uint64_t clientId;
};

/// ucp_listener_params_t
struct ListenerParams {
  uint64_t fieldMask;
  SockAddr sockaddr;
  struct {
    void (*cb)(void* ep, void* arg);
    void* arg;
  } acceptHandler;  // ucp_listener_accept_handler_t (not used)
  struct {
    ConnCallback cb;
    void* arg;
  } connHandler;  // ucp_listener_conn_handler_t
};

/// ucp_listener_attr_t
struct ListenerAttr {
  uint64_t fieldMask;
  sockaddr_storage sockaddr;
};

/// ucp_conn_request_attr_t
struct ConnRequestAttr {
  uint64_t fieldMask;
  sockaddr_storage clientAddress;
  uint64_t clientId;
};

/// ucp_ep_params_t
struct EpParams {
  uint64_t fieldMask;
  const void* address;  // const ucp_address_t*
  int errMode;          // ucp_err_handling_mode_t
  struct {
    ErrorCallback cb;
    void* arg;
  } errHandler;  // ucp_err_handler_t
  void* userData;
  unsigned flags;
  SockAddr sockaddr;
  void* connRequest;  // ucp_conn_request_h
  const char* name;
  SockAddr localSockaddr;
};

/// ucp_request_param_t
struct RequestParam {
  uint32_t opAttrMask;
  uint32_t flags;
  void* request;
  union {
    SendCallback send;
    TagRecvCallback recv;
    StreamRecvCallback recvStream;
    void* recvAm;
  } cb;
  ucp_datatype_t datatype;
  void* userData;
  void* replyBuffer;
  int memoryType;  // ucs_memory_type_t
  union {
    size_t* length;
    TagRecvInfo* tagInfo;
  } recvInfo;
  void* memh;  // ucp_mem_h
};

// ---- constants --------------------------------------------------------------------------------------
// ucs_status_t (ucs/type/status.h)
constexpr ucs_status_t UCS_OK = 0;
constexpr ucs_status_t UCS_INPROGRESS = 1;
constexpr ucs_status_t UCS_ERR_UNREACHABLE = -6;
constexpr ucs_status_t UCS_ERR_MESSAGE_TRUNCATED = -9;
constexpr ucs_status_t UCS_ERR_BUSY = -15;
constexpr ucs_status_t UCS_ERR_CANCELED = -16;
constexpr ucs_status_t UCS_ERR_REJECTED = -23;
constexpr ucs_status_t UCS_ERR_NOT_CONNECTED = -24;
constexpr ucs_status_t UCS_ERR_CONNECTION_RESET = -25;
constexpr ucs_status_t UCS_ERR_ENDPOINT_TIMEOUT = -80;
constexpr ucs_status_t UCS_ERR_LAST = -100;
// ucs_thread_mode_t
constexpr int UCS_THREAD_MODE_SERIALIZED = 1;
// ucs_memory_type_t
constexpr int UCS_MEMORY_TYPE_HOST = 0;
constexpr int UCS_MEMORY_TYPE_CUDA = 1;
constexpr int UCS_MEMORY_TYPE_CUDA_MANAGED = 2;
constexpr int UCS_MEMORY_TYPE_ROCM = 3;
constexpr int UCS_MEMORY_TYPE_ROCM_MANAGED = 4;
// ucp_params_field / ucp_feature
constexpr uint64_t UCP_PARAM_FIELD_FEATURES = 1ull << 0;
constexpr uint64_t UCP_PARAM_FIELD_NAME = 1ull << 8;
constexpr uint64_t UCP_FEATURE_TAG = 1ull << 0;
constexpr uint64_t UCP_FEATURE_WAKEUP = 1ull << 4;
constexpr uint64_t UCP_FEATURE_STREAM = 1ull << 5;
// ucp_context_attr_field
constexpr uint64_t UCP_ATTR_FIELD_THREAD_MODE = 1ull << 1;
constexpr uint64_t UCP_ATTR_FIELD_MEMORY_TYPES = 1ull << 2;
// ucp_worker_params_field
constexpr uint64_t UCP_WORKER_PARAM_FIELD_THREAD_MODE = 1ull << 0;
// ucp_listener_params_field / ucp_listener_attr_field / ucp_conn_request_attr_field
constexpr uint64_t UCP_LISTENER_PARAM_FIELD_SOCK_ADDR = 1ull << 0;
constexpr uint64_t UCP_LISTENER_PARAM_FIELD_CONN_HANDLER = 1ull << 2;
constexpr uint64_t UCP_LISTENER_ATTR_FIELD_SOCKADDR = 1ull << 0;
constexpr uint64_t UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR = 1ull << 0;
// ucp_ep_params_field / ucp_ep_params_flags_field / ucp_err_handling_mode_t / ucp_ep_close_flags_t
constexpr uint64_t UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE = 1ull << 1;
constexpr uint64_t UCP_EP_PARAM_FIELD_ERR_HANDLER = 1ull << 2;
constexpr uint64_t UCP_EP_PARAM_FIELD_USER_DATA = 1ull << 3;
constexpr uint64_t UCP_EP_PARAM_FIELD_SOCK_ADDR = 1ull << 4;
constexpr uint64_t UCP_EP_PARAM_FIELD_FLAGS = 1ull << 5;
constexpr uint64_t UCP_EP_PARAM_FIELD_CONN_REQUEST = 1ull << 6;
constexpr unsigned UCP_EP_PARAMS_FLAGS_CLIENT_SERVER = 1u << 0;
constexpr int UCP_ERR_HANDLING_MODE_PEER = 1;
constexpr uint32_t UCP_EP_CLOSE_FLAG_FORCE = 1u << 0;
// ucp_op_attr_t / ucp_stream_recv_flags_t
constexpr uint32_t UCP_OP_ATTR_FIELD_CALLBACK = 1u << 1;
constexpr uint32_t UCP_OP_ATTR_FIELD_USER_DATA = 1u << 2;
constexpr uint32_t UCP_OP_ATTR_FIELD_FLAGS = 1u << 4;
constexpr uint32_t UCP_OP_ATTR_FIELD_RECV_INFO = 1u << 7;
constexpr uint32_t UCP_OP_ATTR_FLAG_NO_IMM_CMPL = 1u << 16;
constexpr uint32_t UCP_STREAM_RECV_FLAG_WAITALL = 1u << 0;
// The UCP API version this table is written against (ucp_version.h of 1.13); ucp_init is an inline
// wrapper of ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, ...). Everything used exists in 1.12 (Ubuntu 22.04) and later.
constexpr unsigned kApiMajor = 1;
constexpr unsigned kApiMinor = 12;

// ---- functions --------------------------------------------------------------------------------------
using PFN_ucp_get_version = void (*)(unsigned*, unsigned*, unsigned*);
using PFN_ucp_config_read = ucs_status_t (*)(const char*, const char*, void**);
using PFN_ucp_config_modify = ucs_status_t (*)(void*, const char*, const char*);
using PFN_ucp_config_release = void (*)(void*);
using PFN_ucp_init_version = ucs_status_t (*)(unsigned, unsigned, const Params*, const void*, void**);
using PFN_ucp_cleanup = void (*)(void*);
using PFN_ucp_context_query = ucs_status_t (*)(void*, ContextAttr*);
using PFN_ucp_worker_create = ucs_status_t (*)(void*, const WorkerParams*, void**);
using PFN_ucp_worker_destroy = void (*)(void*);
using PFN_ucp_worker_progress = unsigned (*)(void*);
using PFN_ucp_worker_get_efd = ucs_status_t (*)(void*, int*);
using PFN_ucp_worker_arm = ucs_status_t (*)(void*);
using PFN_ucp_worker_signal = ucs_status_t (*)(void*);
using PFN_ucp_listener_create = ucs_status_t (*)(void*, const ListenerParams*, void**);
using PFN_ucp_listener_destroy = void (*)(void*);
using PFN_ucp_listener_query = ucs_status_t (*)(void*, ListenerAttr*);
using PFN_ucp_listener_reject = ucs_status_t (*)(void*, void*);
using PFN_ucp_conn_request_query = ucs_status_t (*)(void*, ConnRequestAttr*);
using PFN_ucp_ep_create = ucs_status_t (*)(void*, const EpParams*, void**);
using PFN_ucp_ep_close_nbx = void* (*)(void*, const RequestParam*);
using PFN_ucp_tag_send_nbx = void* (*)(void*, const void*, size_t, ucp_tag_t, const RequestParam*);
using PFN_ucp_tag_recv_nbx = void* (*)(void*, void*, size_t, ucp_tag_t, ucp_tag_t, const RequestParam*);
using PFN_ucp_stream_send_nbx = void* (*)(void*, const void*, size_t, const RequestParam*);
using PFN_ucp_stream_recv_nbx = void* (*)(void*, void*, size_t, size_t*, const RequestParam*);
using PFN_ucp_request_check_status = ucs_status_t (*)(void*);
using PFN_ucp_request_cancel = void (*)(void*, void*);
using PFN_ucp_request_free = void (*)(void*);
using PFN_ucs_status_string = const char* (*)(ucs_status_t);

/// Every resolved symbol (all required).
#define HETCCL_UCP_FUNCTIONS(X) \
  X(ucp_get_version)            \
  X(ucp_config_read)            \
  X(ucp_config_modify)          \
  X(ucp_config_release)         \
  X(ucp_init_version)           \
  X(ucp_cleanup)                \
  X(ucp_context_query)          \
  X(ucp_worker_create)          \
  X(ucp_worker_destroy)         \
  X(ucp_worker_progress)        \
  X(ucp_worker_get_efd)         \
  X(ucp_worker_arm)             \
  X(ucp_worker_signal)          \
  X(ucp_listener_create)        \
  X(ucp_listener_destroy)       \
  X(ucp_listener_query)         \
  X(ucp_listener_reject)        \
  X(ucp_conn_request_query)     \
  X(ucp_ep_create)              \
  X(ucp_ep_close_nbx)           \
  X(ucp_tag_send_nbx)           \
  X(ucp_tag_recv_nbx)           \
  X(ucp_stream_send_nbx)        \
  X(ucp_stream_recv_nbx)        \
  X(ucp_request_check_status)   \
  X(ucp_request_cancel)         \
  X(ucp_request_free)           \
  X(ucs_status_string)

/// The resolved table.
struct Ucp {
#define HETCCL_UCP_MEMBER(name) PFN_##name name = nullptr;
  HETCCL_UCP_FUNCTIONS(HETCCL_UCP_MEMBER)
#undef HETCCL_UCP_MEMBER
  void* handle = nullptr;
  std::string path;     ///< what was opened
  unsigned major = 0, minor = 0, release = 0;  ///< ucp_get_version

  /// "Connection reset by remote peer (-25)"; safe for any value.
  std::string statusText(int status) const;
};

/// UCX's ucs_status_ptr_t decoding (UCS_PTR_IS_ERR / UCS_PTR_IS_PTR / UCS_PTR_STATUS).
inline bool isError(const void* p) { return reinterpret_cast<uintptr_t>(p) >= static_cast<uintptr_t>(static_cast<intptr_t>(UCS_ERR_LAST)); }
inline bool isRequest(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - 1 < static_cast<uintptr_t>(static_cast<intptr_t>(UCS_ERR_LAST)) - 1;
}
inline int statusOf(const void* p) {
  return isRequest(p) ? UCS_INPROGRESS : static_cast<int>(reinterpret_cast<intptr_t>(p));
}

/// Opens and resolves libucp once per process: HETCCL_UCX_LIB (an exact path, tried alone) or else
/// libucp.so.0. Returns the table, or null with `why` saying what failed (not found, a missing symbol).
/// Thread-safe; the library stays loaded for the life of the process.
const Ucp* load(std::string* why);

}  // namespace hetccl::transport::ucx::api
