// Build-time check of ucp_api.hpp against the real UCX headers (Debian's libucx-dev 1.13 in /usr/include/ucp):
// every PFN_<symbol> must be the header's decltype(&::symbol) with enums read as int, pointers to opaque
// handle structs as void* and UCX's parameter structs as ucp_api.hpp's; every constant must equal the
// header's value; every struct must have the header's size and field offsets. Compiled (syntax only)
// by src/transport/ucx/CMakeLists.txt where <ucp/api/ucp.h> exists; a wrong declaration fails the build.
// Not part of libhetccl (the .cxx extension keeps it out of the module's *.cc glob).
#include <ucp/api/ucp.h>

#include <cstddef>
#include <type_traits>

#include "transport/ucx/ucp_api.hpp"

namespace api = hetccl::transport::ucx::api;

namespace {

/// The ABI-level spelling of a header type, in ucp_api.hpp's conventions.
template <typename T, typename = void>
struct Canon {
  using type = T;
};
template <typename T>
using CanonT = typename Canon<T>::type;

template <typename T>
struct Canon<T, std::enable_if_t<std::is_enum_v<T>>> {  // ucs_status_t (packed) is int8_t, other enums int
  static_assert(sizeof(T) == sizeof(int) || (std::is_same_v<T, ucs_status_t> && sizeof(T) == 1), "UCX enum sizes");
  using type = std::conditional_t<sizeof(T) == 1, int8_t, int>;
};
/// Parameter structs map to ours; other class types behind a pointer are opaque handles (void*).
template <typename T>
struct Mapped {
  using type = void;
};
template <> struct Mapped<ucp_params_t> { using type = api::Params; };
template <> struct Mapped<ucp_context_attr_t> { using type = api::ContextAttr; };
template <> struct Mapped<ucp_worker_params_t> { using type = api::WorkerParams; };
template <> struct Mapped<ucp_listener_params_t> { using type = api::ListenerParams; };
template <> struct Mapped<ucp_listener_attr_t> { using type = api::ListenerAttr; };
template <> struct Mapped<ucp_conn_request_attr_t> { using type = api::ConnRequestAttr; };
template <> struct Mapped<ucp_ep_params_t> { using type = api::EpParams; };
template <> struct Mapped<ucp_request_param_t> { using type = api::RequestParam; };
template <> struct Mapped<ucp_tag_recv_info_t> { using type = api::TagRecvInfo; };

template <typename T>
struct Canon<T*, void> {
  using type = std::conditional_t<std::is_class_v<T>, typename Mapped<T>::type*, CanonT<T>*>;
};
template <typename T>
struct Canon<const T*, void> {
  using type = std::conditional_t<std::is_class_v<T>, const typename Mapped<T>::type*, const CanonT<T>*>;
};
template <typename R, typename... A>
struct Canon<R (*)(A...), void> {
  using type = CanonT<R> (*)(CanonT<A>...);
};

#define HETCCL_CHECK_SIGNATURE(name)                                               \
  static_assert(std::is_same_v<CanonT<decltype(&::name)>, api::PFN_##name>,        \
                "ucp_api.hpp: PFN_" #name " differs from the UCX header's declaration");
HETCCL_UCP_FUNCTIONS(HETCCL_CHECK_SIGNATURE)

// The callbacks stored in the structs.
static_assert(std::is_same_v<CanonT<ucp_send_nbx_callback_t>, api::SendCallback>);
static_assert(std::is_same_v<CanonT<ucp_tag_recv_nbx_callback_t>, api::TagRecvCallback>);
static_assert(std::is_same_v<CanonT<ucp_stream_recv_nbx_callback_t>, api::StreamRecvCallback>);
static_assert(std::is_same_v<CanonT<ucp_err_handler_cb_t>, api::ErrorCallback>);
static_assert(std::is_same_v<CanonT<ucp_listener_conn_callback_t>, api::ConnCallback>);

}  // namespace

// Constants.
#define HETCCL_CHECK_VALUE(name) static_assert(api::name == static_cast<decltype(api::name)>(name), #name);
HETCCL_CHECK_VALUE(UCS_OK)
HETCCL_CHECK_VALUE(UCS_INPROGRESS)
HETCCL_CHECK_VALUE(UCS_ERR_UNREACHABLE)
HETCCL_CHECK_VALUE(UCS_ERR_MESSAGE_TRUNCATED)
HETCCL_CHECK_VALUE(UCS_ERR_BUSY)
HETCCL_CHECK_VALUE(UCS_ERR_CANCELED)
HETCCL_CHECK_VALUE(UCS_ERR_REJECTED)
HETCCL_CHECK_VALUE(UCS_ERR_NOT_CONNECTED)
HETCCL_CHECK_VALUE(UCS_ERR_CONNECTION_RESET)
HETCCL_CHECK_VALUE(UCS_ERR_ENDPOINT_TIMEOUT)
HETCCL_CHECK_VALUE(UCS_ERR_LAST)
HETCCL_CHECK_VALUE(UCS_THREAD_MODE_SERIALIZED)
HETCCL_CHECK_VALUE(UCS_MEMORY_TYPE_HOST)
HETCCL_CHECK_VALUE(UCS_MEMORY_TYPE_CUDA)
HETCCL_CHECK_VALUE(UCS_MEMORY_TYPE_CUDA_MANAGED)
HETCCL_CHECK_VALUE(UCS_MEMORY_TYPE_ROCM)
HETCCL_CHECK_VALUE(UCS_MEMORY_TYPE_ROCM_MANAGED)
HETCCL_CHECK_VALUE(UCP_PARAM_FIELD_FEATURES)
HETCCL_CHECK_VALUE(UCP_PARAM_FIELD_NAME)
HETCCL_CHECK_VALUE(UCP_FEATURE_TAG)
HETCCL_CHECK_VALUE(UCP_FEATURE_WAKEUP)
HETCCL_CHECK_VALUE(UCP_FEATURE_STREAM)
HETCCL_CHECK_VALUE(UCP_ATTR_FIELD_THREAD_MODE)
HETCCL_CHECK_VALUE(UCP_ATTR_FIELD_MEMORY_TYPES)
HETCCL_CHECK_VALUE(UCP_WORKER_PARAM_FIELD_THREAD_MODE)
HETCCL_CHECK_VALUE(UCP_LISTENER_PARAM_FIELD_SOCK_ADDR)
HETCCL_CHECK_VALUE(UCP_LISTENER_PARAM_FIELD_CONN_HANDLER)
HETCCL_CHECK_VALUE(UCP_LISTENER_ATTR_FIELD_SOCKADDR)
HETCCL_CHECK_VALUE(UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_ERR_HANDLER)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_USER_DATA)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_SOCK_ADDR)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_FLAGS)
HETCCL_CHECK_VALUE(UCP_EP_PARAM_FIELD_CONN_REQUEST)
HETCCL_CHECK_VALUE(UCP_EP_PARAMS_FLAGS_CLIENT_SERVER)
HETCCL_CHECK_VALUE(UCP_ERR_HANDLING_MODE_PEER)
HETCCL_CHECK_VALUE(UCP_EP_CLOSE_FLAG_FORCE)
HETCCL_CHECK_VALUE(UCP_OP_ATTR_FIELD_CALLBACK)
HETCCL_CHECK_VALUE(UCP_OP_ATTR_FIELD_USER_DATA)
HETCCL_CHECK_VALUE(UCP_OP_ATTR_FIELD_FLAGS)
HETCCL_CHECK_VALUE(UCP_OP_ATTR_FIELD_RECV_INFO)
HETCCL_CHECK_VALUE(UCP_OP_ATTR_FLAG_NO_IMM_CMPL)
HETCCL_CHECK_VALUE(UCP_STREAM_RECV_FLAG_WAITALL)
static_assert(api::kApiMajor == UCP_API_MAJOR && api::kApiMinor <= UCP_API_MINOR, "UCP API version");
static_assert(std::is_same_v<api::ucp_tag_t, ucp_tag_t> && std::is_same_v<api::ucp_datatype_t, ucp_datatype_t>);
static_assert(ucp_dt_make_contig(1) == 8, "a request without a datatype sends bytes (ucp_dt_make_contig(1))");

// ucs_status_ptr_t decoding.
static_assert(sizeof(ucs_status_ptr_t) == sizeof(void*));

// Layouts.
#define HETCCL_SAME_SIZE(ours, theirs) static_assert(sizeof(api::ours) == sizeof(theirs), #theirs " size");
#define HETCCL_SAME_OFFSET(ours, a, theirs, b) \
  static_assert(offsetof(api::ours, a) == offsetof(theirs, b), #theirs "::" #b " offset");
HETCCL_SAME_SIZE(SockAddr, ucs_sock_addr_t)
HETCCL_SAME_OFFSET(SockAddr, addr, ucs_sock_addr_t, addr)
HETCCL_SAME_OFFSET(SockAddr, addrlen, ucs_sock_addr_t, addrlen)
HETCCL_SAME_SIZE(TagRecvInfo, ucp_tag_recv_info_t)
HETCCL_SAME_OFFSET(TagRecvInfo, senderTag, ucp_tag_recv_info_t, sender_tag)
HETCCL_SAME_OFFSET(TagRecvInfo, length, ucp_tag_recv_info_t, length)
HETCCL_SAME_SIZE(Params, ucp_params_t)
HETCCL_SAME_OFFSET(Params, fieldMask, ucp_params_t, field_mask)
HETCCL_SAME_OFFSET(Params, features, ucp_params_t, features)
HETCCL_SAME_OFFSET(Params, tagSenderMask, ucp_params_t, tag_sender_mask)
HETCCL_SAME_OFFSET(Params, mtWorkersShared, ucp_params_t, mt_workers_shared)
HETCCL_SAME_OFFSET(Params, name, ucp_params_t, name)
HETCCL_SAME_SIZE(ContextAttr, ucp_context_attr_t)
HETCCL_SAME_OFFSET(ContextAttr, threadMode, ucp_context_attr_t, thread_mode)
HETCCL_SAME_OFFSET(ContextAttr, memoryTypes, ucp_context_attr_t, memory_types)
HETCCL_SAME_OFFSET(ContextAttr, name, ucp_context_attr_t, name)
HETCCL_SAME_SIZE(WorkerParams, ucp_worker_params_t)
HETCCL_SAME_OFFSET(WorkerParams, threadMode, ucp_worker_params_t, thread_mode)
HETCCL_SAME_OFFSET(WorkerParams, cpuMask, ucp_worker_params_t, cpu_mask)
HETCCL_SAME_OFFSET(WorkerParams, events, ucp_worker_params_t, events)
HETCCL_SAME_OFFSET(WorkerParams, eventFd, ucp_worker_params_t, event_fd)
HETCCL_SAME_OFFSET(WorkerParams, name, ucp_worker_params_t, name)
HETCCL_SAME_OFFSET(WorkerParams, clientId, ucp_worker_params_t, client_id)
HETCCL_SAME_SIZE(ListenerParams, ucp_listener_params_t)
HETCCL_SAME_OFFSET(ListenerParams, sockaddr, ucp_listener_params_t, sockaddr)
HETCCL_SAME_OFFSET(ListenerParams, acceptHandler, ucp_listener_params_t, accept_handler)
HETCCL_SAME_OFFSET(ListenerParams, connHandler, ucp_listener_params_t, conn_handler)
static_assert(offsetof(api::ListenerParams, connHandler.arg) == offsetof(ucp_listener_params_t, conn_handler.arg));
HETCCL_SAME_SIZE(ListenerAttr, ucp_listener_attr_t)
HETCCL_SAME_OFFSET(ListenerAttr, sockaddr, ucp_listener_attr_t, sockaddr)
HETCCL_SAME_SIZE(ConnRequestAttr, ucp_conn_request_attr_t)
HETCCL_SAME_OFFSET(ConnRequestAttr, clientAddress, ucp_conn_request_attr_t, client_address)
HETCCL_SAME_OFFSET(ConnRequestAttr, clientId, ucp_conn_request_attr_t, client_id)
HETCCL_SAME_SIZE(EpParams, ucp_ep_params_t)
HETCCL_SAME_OFFSET(EpParams, address, ucp_ep_params_t, address)
HETCCL_SAME_OFFSET(EpParams, errMode, ucp_ep_params_t, err_mode)
HETCCL_SAME_OFFSET(EpParams, errHandler, ucp_ep_params_t, err_handler)
static_assert(offsetof(api::EpParams, errHandler.arg) == offsetof(ucp_ep_params_t, err_handler.arg));
HETCCL_SAME_OFFSET(EpParams, userData, ucp_ep_params_t, user_data)
HETCCL_SAME_OFFSET(EpParams, flags, ucp_ep_params_t, flags)
HETCCL_SAME_OFFSET(EpParams, sockaddr, ucp_ep_params_t, sockaddr)
HETCCL_SAME_OFFSET(EpParams, connRequest, ucp_ep_params_t, conn_request)
HETCCL_SAME_OFFSET(EpParams, name, ucp_ep_params_t, name)
HETCCL_SAME_OFFSET(EpParams, localSockaddr, ucp_ep_params_t, local_sockaddr)
HETCCL_SAME_SIZE(RequestParam, ucp_request_param_t)
HETCCL_SAME_OFFSET(RequestParam, opAttrMask, ucp_request_param_t, op_attr_mask)
HETCCL_SAME_OFFSET(RequestParam, flags, ucp_request_param_t, flags)
HETCCL_SAME_OFFSET(RequestParam, request, ucp_request_param_t, request)
HETCCL_SAME_OFFSET(RequestParam, cb, ucp_request_param_t, cb)
HETCCL_SAME_OFFSET(RequestParam, datatype, ucp_request_param_t, datatype)
HETCCL_SAME_OFFSET(RequestParam, userData, ucp_request_param_t, user_data)
HETCCL_SAME_OFFSET(RequestParam, replyBuffer, ucp_request_param_t, reply_buffer)
HETCCL_SAME_OFFSET(RequestParam, memoryType, ucp_request_param_t, memory_type)
HETCCL_SAME_OFFSET(RequestParam, recvInfo, ucp_request_param_t, recv_info)
HETCCL_SAME_OFFSET(RequestParam, memh, ucp_request_param_t, memh)
