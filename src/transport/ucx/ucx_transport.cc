#include "transport/ucx/ucx_transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "core/log.hpp"
#include "net/socket.hpp"
#include "transport/ucx/ucx_conn.hpp"
#include "transport/ucx/ucx_wire.hpp"
#include "transport/ucx/ucx_worker.hpp"

namespace hetccl::transport {
namespace ucx {
namespace {

std::string addressText(const sockaddr_storage& s) {
  net::SocketAddress a;
  a.storage = s;
  a.length = s.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  try {
    return a.toString();
  } catch (const Error&) {
    return "<unknown address>";
  }
}

class UcxListener final : public Listener {
 public:
  struct Arrived {
    Hello hello;
    void* ep;
    EpState* state;
    std::string from;
  };

  UcxListener(std::shared_ptr<Worker> worker, const PeerInfo& self) : worker_(std::move(worker)), self_(self) {
    const api::Ucp& u = worker_->ucp();
    net::SocketAddress address = net::chooseLocalAddress();
    {
      std::lock_guard<std::mutex> lock(worker_->mutex());
      api::ListenerParams p{};
      p.fieldMask = api::UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | api::UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
      p.sockaddr = {reinterpret_cast<const sockaddr*>(&address.storage), address.length};
      p.connHandler.cb = &UcxListener::onConnRequest;
      p.connHandler.arg = this;
      int st = u.ucp_listener_create(worker_->handle(), &p, &listener_);
      if (st != api::UCS_OK)
        throw SystemError(concat("ucx: rank ", self.rank, " could not listen on ", address.toString(), ": ", u.statusText(st)));
      api::ListenerAttr attr{};
      attr.fieldMask = api::UCP_LISTENER_ATTR_FIELD_SOCKADDR;
      st = u.ucp_listener_query(listener_, &attr);
      if (st != api::UCS_OK) {
        u.ucp_listener_destroy(listener_);
        throw SystemError(concat("ucx: rank ", self.rank, ": ucp_listener_query failed: ", u.statusText(st)));
      }
      net::SocketAddress bound;
      bound.storage = attr.sockaddr;
      bound.length = address.length;
      address.setPort(bound.port());
    }
    address_ = address;
    handle_ = encodeAddressHandle(address_);
    worker_->addService(this, [this] { serviceLocked(); });
    HETCCL_INFO(log::kNet, "ucx: rank ", self.rank, " listening on ", address_.toString());
  }

  ~UcxListener() override {
    std::lock_guard<std::mutex> lock(worker_->mutex());
    worker_->removeService(this);
    const api::Ucp& u = worker_->ucp();
    for (void* r : takePending()) u.ucp_listener_reject(listener_, r);
    u.ucp_listener_destroy(listener_);
    for (Incoming& in : incoming_) drop(in, "");
    for (Arrived& a : stash_) worker_->closeEndpoint(a.ep, true);  // valid, but never accepted (duplicates)
  }

  const Handle& handle() const override { return handle_; }
  const std::shared_ptr<Worker>& worker() const { return worker_; }

  /// As TcpListener::acceptPeer: the endpoint of `info.peer` with `info.token`, meanwhile serving
  /// everyone else who connects. TimeoutError naming the peer at the deadline, AbortedError on abort.
  Arrived acceptPeer(const ConnectInfo& info, Deadline deadline) {
    while (true) {
      {
        std::lock_guard<std::mutex> lock(worker_->mutex());
        worker_->progressLocked();
        serviceLocked();
        if (std::optional<Arrived> a = takeLocked(info)) return *a;
      }
      if (info.abortFlag && info.abortFlag->load(std::memory_order_acquire))
        throw AbortedError(concat("ucx accept from rank ", info.peer.rank, ": communicator aborted"));
      if (info.checkFailure) info.checkFailure();
      if (deadline.expired())
        throw TimeoutError(info.peer.rank, info.peer.hostId,
                           concat("ucx accept: rank ", info.peer.rank, " on host '", info.peer.hostId,
                                  "' did not connect to ", address_.toString(), " with its hello before the deadline"));
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  static constexpr int kHelloTimeoutMs = 5000;
  static constexpr size_t kMaxPending = 1024;

 private:
  struct Incoming {  // endpoint created, hello not complete yet
    void* ep = nullptr;
    EpState* state = nullptr;
    std::shared_ptr<std::array<unsigned char, Hello::kWireBytes>> wire;
    std::unique_ptr<Op> op;
    Deadline deadline = Deadline::afterMs(0);
    std::string from;
  };

  static void onConnRequest(void* request, void* arg) {  // inside ucp_worker_progress
    auto* self = static_cast<UcxListener*>(arg);
    std::lock_guard<std::mutex> lock(self->pendingMutex_);
    self->pending_.push_back(request);
  }

  std::vector<void*> takePending() {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    return std::exchange(pending_, {});
  }

  /// Closes an endpoint that never became a connection; `why` is logged ("" for none).
  void drop(Incoming& in, const std::string& why) {
    if (!why.empty()) HETCCL_INFO(log::kNet, "ucx: closing connection from ", in.from, ": ", why);
    if (in.op->pending() && in.op->request) worker_->ucp().ucp_request_cancel(worker_->handle(), in.op->request);
    worker_->closeEndpoint(in.ep, true);
    worker_->retire(std::move(in.op), in.wire);
  }

  /// New connection requests become endpoints reading their hello; complete hellos are checked.
  void serviceLocked() {
    const api::Ucp& u = worker_->ucp();
    for (void* request : takePending()) {
      api::ConnRequestAttr attr{};
      attr.fieldMask = api::UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
      const std::string from = u.ucp_conn_request_query(request, &attr) == api::UCS_OK ? addressText(attr.clientAddress)
                                                                                       : "<unknown address>";
      if (incoming_.size() + stash_.size() >= kMaxPending) {
        HETCCL_INFO(log::kNet, "ucx: rejecting connection from ", from, ": already ", kMaxPending,
                    " connections wait for their hello or accept()");
        u.ucp_listener_reject(listener_, request);
        continue;
      }
      Incoming in;
      in.from = from;
      in.deadline = Deadline::afterMs(kHelloTimeoutMs);
      api::EpParams params{};
      params.fieldMask = api::UCP_EP_PARAM_FIELD_CONN_REQUEST;
      params.connRequest = request;
      try {
        in.ep = worker_->createEndpoint(params, &in.state, concat("ucx accept from ", from));
      } catch (const Error& e) {
        HETCCL_INFO(log::kNet, "ucx: dropping connection from ", from, ": ", e.what());
        continue;
      }
      in.wire = std::make_shared<std::array<unsigned char, Hello::kWireBytes>>();
      in.op = std::make_unique<Op>();
      api::RequestParam p{};
      p.opAttrMask = api::UCP_OP_ATTR_FIELD_CALLBACK | api::UCP_OP_ATTR_FIELD_USER_DATA | api::UCP_OP_ATTR_FIELD_FLAGS |
                     api::UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      p.flags = api::UCP_STREAM_RECV_FLAG_WAITALL;
      p.cb.recvStream = &Worker::onStreamRecv;
      p.userData = in.op.get();
      void* r = u.ucp_stream_recv_nbx(in.ep, in.wire->data(), in.wire->size(), &in.op->length, &p);
      if (api::isRequest(r)) in.op->request = r;
      else in.op->status = api::statusOf(r);  // done at once (length already set) or failed
      incoming_.push_back(std::move(in));
    }
    std::vector<Incoming> still;
    for (Incoming& in : incoming_) {
      if (!in.op->pending()) {
        if (in.op->status != api::UCS_OK || in.op->length != Hello::kWireBytes)
          drop(in, concat("no hello: ", in.op->status != api::UCS_OK ? u.statusText(in.op->status)
                                                                       : concat(in.op->length, " bytes")));
        else
          admit(in);
      } else if (const int st = in.state->status.load(); st != api::UCS_OK) {
        drop(in, concat("the connection failed before its hello: ", u.statusText(st)));
      } else if (in.deadline.expired()) {
        drop(in, concat("no complete hello within ", kHelloTimeoutMs, " ms"));
      } else {
        still.push_back(std::move(in));
      }
    }
    incoming_ = std::move(still);
  }

  void admit(Incoming& in) {
    std::string problem;
    std::optional<Hello> hello = Hello::decode(in.wire->data(), problem);
    if (hello && hello->toRank != self_.rank)
      problem = concat("it is meant for rank ", hello->toRank, ", this listener is rank ", self_.rank);
    else if (hello && hello->fromRank == self_.rank)
      problem = concat("it claims to come from this listener's own rank ", self_.rank);
    if (!problem.empty()) {
      drop(in, concat("invalid hello: ", problem));
      return;
    }
    stash_.push_back(Arrived{*hello, in.ep, in.state, in.from});
  }

  std::optional<Arrived> takeLocked(const ConnectInfo& info) {
    // The right sender with a wrong token is an impostor or a stale job: close it.
    std::erase_if(stash_, [&](const Arrived& a) {
      const bool wrong = a.hello.fromRank == info.peer.rank && a.hello.token != info.token;
      if (wrong) {
        HETCCL_INFO(log::kNet, "ucx: closing connection from ", a.from, " claiming rank ", a.hello.fromRank, ": wrong token");
        worker_->closeEndpoint(a.ep, true);
      }
      return wrong;
    });
    auto it = std::find_if(stash_.begin(), stash_.end(), [&](const Arrived& a) { return a.hello.fromRank == info.peer.rank; });
    if (it == stash_.end()) return std::nullopt;
    Arrived a = *it;
    stash_.erase(it);
    return a;
  }

  std::shared_ptr<Worker> worker_;
  PeerInfo self_;
  void* listener_ = nullptr;
  net::SocketAddress address_;
  Handle handle_;
  std::mutex pendingMutex_;  // the connection callback's queue (taken inside the worker's mutex, never around it)
  std::vector<void*> pending_;
  std::vector<Incoming> incoming_;
  std::vector<Arrived> stash_;
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(const api::Ucp& ucp) : ucp_(ucp) {}
  std::string_view name() const override { return "ucx"; }
  bool canConnect(const PeerInfo&, const PeerInfo&) const override { return true; }

  std::unique_ptr<Listener> listen(const PeerInfo& self) override {
    return std::make_unique<UcxListener>(workerFor(self.rank), self);
  }

  std::unique_ptr<SendConn> connect(const Handle& peerHandle, const ConnectInfo& info, Deadline) override {
    net::SocketAddress to = decodeAddressHandle(peerHandle);
    const std::string where = concat("ucx connect to rank ", info.peer.rank, " at ", to.toString(), " (host '",
                                     info.peer.hostId, "')");
    if (info.abortFlag && info.abortFlag->load(std::memory_order_acquire))
      throw AbortedError(concat(where, ": communicator aborted"));
    std::shared_ptr<Worker> worker = workerFor(info.self.rank);
    std::unique_ptr<SendConn> conn;
    {
      std::lock_guard<std::mutex> lock(worker->mutex());
      api::EpParams p{};
      p.fieldMask = api::UCP_EP_PARAM_FIELD_SOCK_ADDR | api::UCP_EP_PARAM_FIELD_FLAGS;
      p.flags = api::UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
      p.sockaddr = {reinterpret_cast<const sockaddr*>(&to.storage), to.length};
      EpState* state = nullptr;
      void* ep = nullptr;
      try {
        ep = worker->createEndpoint(p, &state, where);
      } catch (const SystemError& e) {  // e.g. unreachable network: an error about this peer
        throw PeerError(info.peer.rank, info.peer.hostId, e.what());
      }
      // The endpoint connects in the background (the progress thread); the hello follows once it is up.
      conn = std::make_unique<UcxSendConn>(worker, ep, state, info);
    }
    HETCCL_INFO(log::kNet, "ucx: rank ", info.self.rank, " connecting to rank ", info.peer.rank, " at ", to.toString());
    return conn;
  }

  std::unique_ptr<RecvConn> accept(Listener& listener, const ConnectInfo& info, Deadline deadline) override {
    auto* own = dynamic_cast<UcxListener*>(&listener);
    if (!own) throw InvalidArgument("ucx accept: the listener was not created by the ucx transport");
    UcxListener::Arrived a = own->acceptPeer(info, deadline);
    HETCCL_INFO(log::kNet, "ucx: rank ", info.self.rank, " accepted rank ", info.peer.rank, " from ", a.from);
    return std::make_unique<UcxRecvConn>(own->worker(), a.ep, a.state, info);
  }

 private:
  /// The worker shared by this transport's listener and connections, created when none is alive (a
  /// forked child never uses its parent's: UCX's threads do not survive fork()).
  std::shared_ptr<Worker> workerFor(int rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto w = worker_.lock(); w && w->pid() == getpid()) return w;
    auto w = Worker::create(ucp_, rank);
    worker_ = w;
    return w;
  }

  const api::Ucp& ucp_;
  std::mutex mutex_;
  std::weak_ptr<Worker> worker_;
};

}  // namespace
}  // namespace ucx

std::unique_ptr<Transport> makeUcxTransport() {
  std::string why;
  const ucx::api::Ucp* ucp = ucx::availableUcp(&why);
  if (!ucp) throw SystemError(concat("the ucx transport is unavailable: ", why));
  return std::make_unique<ucx::UcxTransport>(*ucp);
}

std::string ucxUnavailableReason() {
  std::string why;
  return ucx::availableUcp(&why) ? std::string() : why;
}

std::string ucxDescription() {
  std::string why;
  ucx::Worker::Capabilities caps;
  if (!ucx::availableUcp(&why, &caps)) return concat("unavailable: ", why);
  return concat("UCX ", caps.version, "; memory types: ", caps.memoryTypes,
                (caps.cuda || caps.rocm) ? " (device buffers staged through host memory: GPUDirect not implemented)" : "");
}

}  // namespace hetccl::transport
