#include "transport/ucx/ucx_worker.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/config.hpp"
#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "net/rdma_devices.hpp"
#include "net/socket.hpp"

namespace hetccl::transport::ucx {
namespace {

const api::Ucp* gUcp = nullptr;  // set before any operation is posted; read by the completion callbacks

void onEndpointError(void* arg, void* /*ep*/, api::ucs_status_t status) {
  static_cast<EpState*>(arg)->status.store(status == api::UCS_OK ? api::UCS_ERR_CONNECTION_RESET : status);
}

/// The UCX_NET_DEVICES value this process gives UCX, and why (`why`); "" leaves UCX's own choice.
/// UCX_NET_DEVICES itself wins, then HETCCL_NET_DEVICES; else, where HETCCL_SOCKET_IFNAME is set, the
/// interfaces it allows and the RDMA ports of those interfaces: UCX's tcp transport would otherwise
/// listen and move data on every interface that is up (issue 27 item 6; docs/SECURITY.md).
std::string netDevices(std::string* why) {
  const Config& c = config();
  if (std::getenv("UCX_NET_DEVICES")) return "";
  if (c.isSet("HETCCL_NET_DEVICES")) {
    *why = concat("HETCCL_NET_DEVICES=", c.str("HETCCL_NET_DEVICES"));
    return c.str("HETCCL_NET_DEVICES");
  }
  if (!c.isSet("HETCCL_SOCKET_IFNAME")) return "";
  const std::string filter = c.str("HETCCL_SOCKET_IFNAME");
  std::vector<std::string> names = net::allowedInterfaces();
  for (std::string& port : net::rdmaPortsFor(c.str("HETCCL_RDMA_SYSFS"), [&](const std::string& n) {
         return net::interfaceAllowed(n, filter);
       }))
    names.push_back(std::move(port));
  if (names.empty()) throw InvalidArgument(concat("ucx: HETCCL_SOCKET_IFNAME=", filter, " allows no interface that is up"));
  *why = concat("the interfaces HETCCL_SOCKET_IFNAME=", filter, " allows");
  std::string list;
  for (const std::string& n : names) list += concat(list.empty() ? "" : ",", n);
  return list;
}

/// A context with our features and the process's UCX configuration (UCX_* variables).
void* createContext(const api::Ucp& u) {
  void* cfg = nullptr;
  int st = u.ucp_config_read(nullptr, nullptr, &cfg);
  if (st != api::UCS_OK) throw SystemError(concat("ucx: reading UCX's configuration (UCX_* variables) failed: ", u.statusText(st)));
  std::string why;
  const std::string devices = netDevices(&why);
  if (!devices.empty()) {
    st = u.ucp_config_modify(cfg, "NET_DEVICES", devices.c_str());
    if (st != api::UCS_OK) {
      u.ucp_config_release(cfg);
      throw InvalidArgument(concat("ucx: ", why, ": ", devices, " is not a valid UCX_NET_DEVICES value: ", u.statusText(st)));
    }
    HETCCL_INFO(log::kNet, "ucx: network devices ", devices, " (", why, ")");
  }
  // UCX's tcp transport connects its wire-up sockets with a blocking connect() by default
  // (UCX_TCP_CONN_NB=n): towards a host that drops packets, ucp_ep_create and ucp_worker_progress would
  // sit in the kernel's SYN retries (minutes), holding this worker, past every deadline. Non-blocking
  // connects report such a peer through the endpoint's error handler instead.
  if (!std::getenv("UCX_TCP_CONN_NB")) {
    st = u.ucp_config_modify(cfg, "CONN_NB", "y");  // a key UCP lacks goes on to the transports' tables
    if (st != api::UCS_OK)
      HETCCL_WARN(log::kNet, "ucx: could not set UCX_TCP_CONN_NB=y (", u.statusText(st),
                  "): a peer host that drops packets can block connection set-up past HETCCL_TIMEOUT");
  }
  // UCX 1.13's tcp transport aborts the process now and then when a rendezvous message goes by its PUT
  // zero-copy protocol right at wire-up (tcp_ep.c:939 "Assertion `ep->flags &
  // UCT_TCP_EP_FLAG_PUT_TX_WAITING_ACK' failed": 1 of 60 3-rank jobs whose first message was 512 KiB,
  // mp_ucx_stamp_reduce_count, 2026-11-27). Without it (UCX_TCP_PUT_ENABLE=n) rendezvous over tcp uses
  // UCX's active messages. Only the tcp transport is affected; an explicit UCX_TCP_PUT_ENABLE wins.
  if (!std::getenv("UCX_TCP_PUT_ENABLE")) {
    st = u.ucp_config_modify(cfg, "PUT_ENABLE", "n");
    if (st != api::UCS_OK)
      HETCCL_WARN(log::kNet, "ucx: could not set UCX_TCP_PUT_ENABLE=n (", u.statusText(st),
                  "): UCX 1.13's tcp PUT protocol can abort a process at connection set-up");
  }
  api::Params params{};
  params.fieldMask = api::UCP_PARAM_FIELD_FEATURES;
  params.features = api::UCP_FEATURE_TAG | api::UCP_FEATURE_STREAM | api::UCP_FEATURE_WAKEUP;
  void* context = nullptr;
  st = u.ucp_init_version(api::kApiMajor, api::kApiMinor, &params, cfg, &context);
  u.ucp_config_release(cfg);
  if (st != api::UCS_OK)
    throw SystemError(concat("ucx: ucp_init failed (", u.path, ", UCX_TLS=", std::getenv("UCX_TLS") ? std::getenv("UCX_TLS") : "<unset>",
                             "): ", u.statusText(st)));
  return context;
}

struct Availability {
  const api::Ucp* ucp = nullptr;
  std::string why;
  Worker::Capabilities caps;
};

Availability probe() {
  Availability a;
  const api::Ucp* u = api::load(&a.why);
  if (!u) return a;
  try {
    void* context = createContext(*u);
    api::ContextAttr attr{};
    attr.fieldMask = api::UCP_ATTR_FIELD_MEMORY_TYPES;
    std::string types;
    if (u->ucp_context_query(context, &attr) == api::UCS_OK) {
      const std::pair<int, const char*> kNames[] = {{api::UCS_MEMORY_TYPE_HOST, "host"},
                                                    {api::UCS_MEMORY_TYPE_CUDA, "cuda"},
                                                    {api::UCS_MEMORY_TYPE_CUDA_MANAGED, "cuda-managed"},
                                                    {api::UCS_MEMORY_TYPE_ROCM, "rocm"},
                                                    {api::UCS_MEMORY_TYPE_ROCM_MANAGED, "rocm-managed"}};
      for (auto [bit, name] : kNames)
        if (attr.memoryTypes & (uint64_t{1} << bit)) types += concat(types.empty() ? "" : ", ", name);
      a.caps.cuda = attr.memoryTypes & (uint64_t{1} << api::UCS_MEMORY_TYPE_CUDA);
      a.caps.rocm = attr.memoryTypes & (uint64_t{1} << api::UCS_MEMORY_TYPE_ROCM);
    }
    u->ucp_cleanup(context);
    a.caps.version = concat(u->major, ".", u->minor, ".", u->release, " (", u->path, ")");
    a.caps.memoryTypes = types.empty() ? "unknown" : types;
    a.ucp = u;
  } catch (const Error& e) {
    a.why = e.what();
  }
  return a;
}

}  // namespace

const api::Ucp* availableUcp(std::string* why, Worker::Capabilities* caps) {
  static const Availability a = [] {
    Availability r = probe();
    if (r.ucp) {
      gUcp = r.ucp;
      // Device buffers: the engine hands this transport host memory only (device buffers are staged
      // through pinned host memory). Where UCX reports cuda/rocm memory, buffers could be given to UCP
      // as they are (memory_type in the request parameters, or ucp_mem_map once per buffer for
      // GPUDirect RDMA); not implemented.
      HETCCL_INFO(log::kNet, "ucx: UCX ", r.caps.version, " available; memory types: ", r.caps.memoryTypes,
                  (r.caps.cuda || r.caps.rocm) ? " (GPUDirect registration of device buffers is not implemented: "
                                                 "they are staged through host memory)"
                                               : "");
    } else {
      HETCCL_INFO(log::kNet, "ucx: transport unavailable: ", r.why);
    }
    return r;
  }();
  if (!a.ucp && why) *why = a.why;
  if (caps) *caps = a.caps;
  return a.ucp;
}

std::shared_ptr<Worker> Worker::create(const api::Ucp& ucp, int rank) {
  gUcp = &ucp;
  void* context = createContext(ucp);
  api::WorkerParams params{};
  params.fieldMask = api::UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.threadMode = api::UCS_THREAD_MODE_SERIALIZED;
  void* worker = nullptr;
  int st = ucp.ucp_worker_create(context, &params, &worker);
  if (st != api::UCS_OK) {
    ucp.ucp_cleanup(context);
    throw SystemError(concat("ucx: ucp_worker_create failed on rank ", rank, ": ", ucp.statusText(st)));
  }
  int efd = -1;
  if (ucp.ucp_worker_get_efd(worker, &efd) != api::UCS_OK) efd = -1;
  return std::shared_ptr<Worker>(new Worker(ucp, context, worker, efd));
}

Worker::Worker(const api::Ucp& ucp, void* context, void* worker, int efd)
    : ucp_(ucp), context_(context), worker_(worker), efd_(efd), pid_(getpid()), thread_([this] { run(); }) {}

Worker::~Worker() {
  stop_ = true;
  signal();
  if (pid_ != getpid()) {  // a forked child's copy: the thread and UCX's own threads do not exist here
    thread_.detach();
    return;
  }
  thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  // A peer silent for HETCCL_TIMEOUT counts as gone everywhere else: a graceful close waits no longer.
  const int64_t closeMs = std::min<int64_t>(kCloseMs, config().timeoutMs());
  const Deadline d = Deadline::afterMs(closeMs);
  auto busy = [&] {
    for (const Retired& r : retired_)
      if (r.op->pending()) return true;
    return !closing_.empty();
  };
  while (busy() && !d.expired()) {
    progressLocked();
    reapLocked();
  }
  if (busy())
    HETCCL_INFO(log::kNet, "ucx: ", closing_.size(), " endpoint close(s) did not complete within ", closeMs,
                " ms (a peer gone or stopped); destroying the worker anyway");
  for (void* r : closing_) ucp_.ucp_request_free(r);
  closing_.clear();
  if (const size_t dropped = discardUnexpectedLocked(Deadline::afterMs(std::min<int64_t>(kDiscardMs, closeMs))))
    HETCCL_INFO(log::kNet, "ucx: dropped ", dropped, " message(s) sent to this rank that nothing received");
  ucp_.ucp_worker_destroy(worker_);
  ucp_.ucp_cleanup(context_);
  retired_.clear();  // UCP no longer writes anything
}

size_t Worker::discardUnexpectedLocked(const Deadline& d) {
  std::vector<unsigned char> sink(kDiscardSinkBytes);  // a larger message ends truncated: dropped all the same
  size_t dropped = 0;
  while (!d.expired()) {
    auto op = std::make_unique<Op>();
    api::RequestParam p{};
    p.opAttrMask = api::UCP_OP_ATTR_FIELD_CALLBACK | api::UCP_OP_ATTR_FIELD_USER_DATA |
                   api::UCP_OP_ATTR_FIELD_RECV_INFO | api::UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    p.cb.recv = &Worker::onTagRecv;
    p.userData = op.get();
    p.recvInfo.tagInfo = &op->info;
    void* r = ucp_.ucp_tag_recv_nbx(worker_, sink.data(), sink.size(), 0, 0, &p);  // mask 0: any tag
    if (!api::isRequest(r)) break;  // an error: nothing more to take
    op->request = r;
    // A message already here matches at once and completes within a few progress calls; none: cancel.
    for (int i = 0; i < 4 && op->pending(); ++i) ucp_.ucp_worker_progress(worker_);
    if (op->pending()) {
      ucp_.ucp_request_cancel(worker_, op->request);
      while (op->pending() && !d.expired()) ucp_.ucp_worker_progress(worker_);
      if (op->pending()) retired_.push_back({std::move(op), nullptr});  // UCP still owns it: kept until destroy
      break;
    }
    ++dropped;
  }
  return dropped;
}

namespace {
int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void Worker::progressLocked() {
  for (int i = 0; i < 256 && ucp_.ucp_worker_progress(worker_) != 0; ++i) {
  }
  if (std::this_thread::get_id() != thread_.get_id()) lastProgressNs_.store(nowNs(), std::memory_order_relaxed);
}

void Worker::signal() {
  if (efd_ >= 0) ucp_.ucp_worker_signal(worker_);
}

void Worker::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (nowNs() - lastProgressNs_.load(std::memory_order_relaxed) < int64_t{kBusyBackoffMs} * 1000000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kBusyBackoffMs));  // a rank thread is progressing
      continue;
    }
    bool idle = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      progressLocked();
      for (auto& [key, fn] : services_) {
        try {
          fn();
        } catch (const std::exception& e) {
          HETCCL_WARN(log::kNet, "ucx: progress thread: ", e.what());
        }
      }
      reapLocked();
      if (efd_ >= 0) idle = ucp_.ucp_worker_arm(worker_) == api::UCS_OK;
    }
    if (efd_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else if (idle) {
      pollfd p{efd_, POLLIN, 0};
      ::poll(&p, 1, kIdleMs);
    } else {
      std::this_thread::yield();
    }
  }
}

void Worker::reapLocked() {
  std::erase_if(closing_, [&](void* r) {
    if (ucp_.ucp_request_check_status(r) == api::UCS_INPROGRESS) return false;
    ucp_.ucp_request_free(r);
    return true;
  });
  std::erase_if(retired_, [](const Retired& r) { return !r.op->pending(); });
}

void* Worker::createEndpoint(api::EpParams params, EpState** state, const std::string& what) {
  eps_.push_back(std::make_unique<EpState>());
  EpState* s = eps_.back().get();
  params.fieldMask |= api::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | api::UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.errMode = api::UCP_ERR_HANDLING_MODE_PEER;
  params.errHandler.cb = &onEndpointError;
  params.errHandler.arg = s;
  void* ep = nullptr;
  const int st = ucp_.ucp_ep_create(worker_, &params, &ep);
  if (st != api::UCS_OK) throw SystemError(concat(what, ": ucp_ep_create failed: ", ucp_.statusText(st)));
  *state = s;
  return ep;
}

void Worker::closeEndpoint(void* ep, bool force) {
  if (!ep) return;
  api::RequestParam p{};
  p.opAttrMask = api::UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = force ? api::UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* r = ucp_.ucp_ep_close_nbx(ep, &p);
  if (api::isRequest(r)) closing_.push_back(r);
  signal();
}

void Worker::retire(std::unique_ptr<Op> op, std::shared_ptr<void> extra) {
  if (op && op->pending()) retired_.push_back(Retired{std::move(op), std::move(extra)});
}

void Worker::addService(void* key, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  services_.emplace_back(key, std::move(fn));
}

void Worker::removeService(void* key) {
  std::erase_if(services_, [&](const auto& s) { return s.first == key; });
}

void Worker::onSend(void* request, api::ucs_status_t status, void* user) {
  auto* op = static_cast<Op*>(user);
  op->status = status;
  op->request = nullptr;
  gUcp->ucp_request_free(request);
}

void Worker::onTagRecv(void* request, api::ucs_status_t status, const api::TagRecvInfo* info, void* user) {
  auto* op = static_cast<Op*>(user);
  op->length = info ? info->length : 0;
  op->status = status;
  op->request = nullptr;
  gUcp->ucp_request_free(request);
}

void Worker::onStreamRecv(void* request, api::ucs_status_t status, size_t length, void* user) {
  auto* op = static_cast<Op*>(user);
  op->length = length;
  op->status = status;
  op->request = nullptr;
  gUcp->ucp_request_free(request);
}

}  // namespace hetccl::transport::ucx
