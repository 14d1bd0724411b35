// The RMA service's caller side: set-up, registrations, descriptors, transfers, notifications, waits,
// stop and abort. The progress thread is in progress.cc.
#include "rma/rma_service.hpp"

#include <algorithm>

#include "bootstrap/bootstrap.hpp"
#include "comm/communicator.hpp"
#include "transport/links/link_set.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "device/gpu_runtime.hpp"

namespace hetccl::rma {
namespace {

MemoryAccess* makeMemoryAccess(Communicator& comm) {
  const PeerInfo& self = comm.peers()[comm.rank()];
  if (!comm.gpuPlugin() || self.deviceKind == DeviceKind::Host) return new MemoryAccess(nullptr, MemKind::Host, -1);
  device::GpuRuntime* gpu = device::gpuRuntime(self.deviceKind);
  if (!gpu) return new MemoryAccess(nullptr, MemKind::Host, -1);
  return new MemoryAccess(gpu, self.deviceKind == DeviceKind::Cuda ? MemKind::Cuda : MemKind::Hip, self.deviceIndex);
}

}  // namespace

RmaService::RmaService(Communicator& comm)
    : owner_(&comm),
      rank_(comm.rank()),
      peers_(comm.peers()),
      key_(comm.serviceKey()),
      pieceMax_(static_cast<uint64_t>(config().integer("HETCCL_RMA_PIECE_BYTES", 4096, 64 << 20))),
      packMax_(static_cast<uint64_t>(config().integer("HETCCL_RMA_PACK_BYTES", 0, 64 << 20))),
      timeoutMs_(config().timeoutMs()),
      transportSetting_(comm.transportSetting()),
      boot_(&comm.bootstrap()),
      memory_(makeMemoryAccess(comm)),
      notes_(static_cast<size_t>(config().integer("HETCCL_RMA_NOTIFY_QUEUE", 1 << 10, 16 << 20))) {
  if (memory_->gpu()) flags_ = std::make_unique<StreamFlags>(memory_->gpu());
}

std::shared_ptr<RmaService> RmaService::init(Communicator& comm) {
  comm.checkUsable();
  if (comm.rma()) throw InvalidUsage("RMA is already initialised on this communicator (hetcclRmaInit is called once)");
  std::shared_ptr<RmaService> s(new RmaService(comm));
  Communicator* c = &comm;  // stop() (before the communicator goes) ends every use
  s->onStreamFailure_ = [c](const Error& e) { c->reportAsyncFailure(e); };
  s->start(comm);
  try {
    comm.attachRma(s);
  } catch (...) {
    s->stop("hetcclRmaInit failed");
    throw;
  }
  return s;
}

void RmaService::start(Communicator& comm) {
  bootstrap::Bootstrap& boot = comm.bootstrap();
  // The identity: rank 0's random bytes; the all-gather also makes every rank wait for the others.
  std::vector<CommIdentity> ids(size());
  bootstrap::randomBytes(ids[rank_]);
  boot.allGather(ids.data(), sizeof(CommIdentity));
  identity_ = ids[0];
  links_ = std::make_unique<transport::LinkSet>(boot, transportSetting_, &aborted_, Deadline::fromConfig());
  channels_.resize(size());
  dead_.resize(size());
  paths_.resize(size());
  setUpWindows(boot);
  setUpPeerCopies(boot);
  for (int p = 0; p < size(); ++p) {
    if (p == rank_) {
      paths_[p] = "self (no RMA: local memory)";
      continue;
    }
    channels_[p].send = &links_->sendTo(p);
    channels_[p].recv = &links_->recvFrom(p);
    const Channel& ch = channels_[p];
    const std::string ipc = ch.peerCopies || ch.mapped
                                ? concat("device registrations copied device to device by the target (IPC mappings; ",
                                         ch.peerCopies ? "to" : "not to", " it, ", ch.mapped ? "from" : "not from",
                                         " it), else ")
                                : "";
    paths_[p] = concat("rma to rank ", p, ": ", ipc,
                       ch.outWindow || ch.inWindow
                           ? concat("window (pinned shared memory, ", memory_->hasGpu() ? "copy engines" : "memcpy",
                                    "; sends ", ch.outWindow ? "window" : "connection", ", receives ",
                                    ch.inWindow ? "window" : "connection", "), ", links_->transportTo(p), " for control")
                           : describePath(links_->transportTo(p), memory_->hasGpu()));
    HETCCL_INFO(log::kInit, paths_[p]);
  }
  thread_ = std::thread([this] { progressLoop(); });
}

RmaService::~RmaService() { stop("the RMA service was destroyed"); }

std::string RmaService::peerName(int peer) const {
  if (peer < 0 || peer >= size()) return concat("rank ", peer);
  return concat("rank ", peer, " (host ", peers_[peer].hostId, ")");
}

std::string describePath(std::string_view transport, bool gpuRank) {
  return concat(transport, gpuRank ? ", device memory staged through pinned host memory" : ", host memory");
}

std::string RmaService::pathTo(int peer) const {
  if (peer < 0 || peer >= size()) return "";
  return paths_[peer];
}

void RmaService::checkOpen(int peer) const {
  if (aborted_.load()) throw AbortedError("the communicator was aborted");
  if (stopping_ || stopped_) throw InvalidUsage(concat("RMA is stopped: ", stopReason_));
  if (peer >= 0 && dead_[peer]) throw *dead_[peer];
}

// ---- registrations ----------------------------------------------------------------------------

std::shared_ptr<LocalMem> RmaService::registerMemory(void* buf, uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    checkOpen(-1);
  }
  auto m = std::make_shared<LocalMem>();
  m->service = shared_from_this();
  m->base = static_cast<unsigned char*>(buf);
  m->bytes = bytes;
  m->kind = memory_->kindOf(buf);
  m->ref = regions_.add(buf, bytes, m->kind);
  exportForPeers(*m);
  Descriptor d;
  d.kind = m->kind;
  d.owner = rank_;
  d.nranks = size();
  d.slot = m->ref.slot;
  d.generation = m->ref.generation;
  d.bytes = bytes;
  d.comm = identity_;
  m->descriptor = encodeDescriptor(d, key_);
  return m;
}

void RmaService::deregister(LocalMem& mem) {
  {
    // Checked and marked under mu_, where transfers take their hold (holdRegistration): a transfer that
    // looked the handle up before this call either holds it already (refused here) or is refused there.
    std::lock_guard<std::mutex> lock(mu_);
    if (mem.deregistered) throw InvalidArgument("the registration (hetcclMem_t) was already deregistered");
    if (mem.pending > 0)
      throw InvalidUsage(concat(mem.pending, " request(s) still use this registration; wait for them first"));
    mem.deregistered = true;
  }
  regions_.remove(mem.ref, Deadline::fromConfig());
}

void RmaService::holdRegistration(LocalMem& mem) {
  if (mem.deregistered)
    throw InvalidArgument("the local registration (hetcclMem_t) was deregistered (by a concurrent hetcclMemDeregister)");
  ++mem.pending;
}

std::shared_ptr<RemoteMem> RmaService::import(const DescriptorBytes& bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    checkOpen(-1);
  }
  auto r = std::make_shared<RemoteMem>();
  r->service = shared_from_this();
  r->desc = decodeDescriptor(bytes, key_, identity_, rank_, size());
  return r;
}

// ---- transfers --------------------------------------------------------------------------------

void RmaService::enqueue(int peer, std::shared_ptr<OutMsg> msg) {
  channels_[peer].queue.push_back(std::move(msg));
  kicked_ = true;
  wake_.notify_one();
}

std::shared_ptr<Request> RmaService::makeTransfer(bool isGet, const RemoteMem& remote, const std::vector<Range>& ranges,
                                                  const std::shared_ptr<LocalMem>& local, std::shared_ptr<OutMsg>& msg) {
  auto req = std::make_shared<Request>();
  req->peer = remote.desc.owner;
  req->isGet = isGet;
  req->service = shared_from_this();
  req->ranges = mergeRanges(ranges);
  // What the target would take as malformed (progress.cc, onHeader/onTable) is refused here, before
  // anything is queued: a malformed message would close the channel and the request wait its deadline.
  if (req->ranges.size() > kMaxWireRanges)
    throw InvalidArgument(concat("a transfer to ", peerName(req->peer), " of ", req->ranges.size(),
                                 " ranges (after merging adjacent ones); at most ", kMaxWireRanges, " per call"));
  for (const Range& r : req->ranges) {
    if (r.bytes > UINT64_MAX - req->totalBytes)
      throw InvalidArgument(concat("a transfer to ", peerName(req->peer), ": the ranges' sizes add up to more than 2^64 bytes"));
    req->totalBytes += r.bytes;
  }

  msg = std::make_shared<OutMsg>();
  WireHeader& h = msg->header;
  h.type = static_cast<uint32_t>(isGet ? MsgType::GetReq : MsgType::Put);
  h.slot = remote.desc.slot;
  h.generation = remote.desc.generation;
  h.nranges = req->ranges.size();
  h.totalBytes = req->totalBytes;
  h.pieceMax = static_cast<uint32_t>(pieceMax_);
  h.packMax = static_cast<uint32_t>(packMax_);
  if (req->ranges.size() == 1) {
    h.offset = req->ranges[0].remote;
    h.bytes = req->ranges[0].bytes;
  } else {
    msg->table.reserve(req->ranges.size());
    for (const Range& r : req->ranges) msg->table.push_back({r.remote, r.bytes});
  }
  if (channels_[req->peer].peerCopies && local->shared) {  // the target copies (peer_copy.cc): no pieces
    addSource(*msg, *req, *local);
  } else if (!isGet) {
    msg->src = local->base;
    msg->srcKind = local->kind;
    for (const Range& r : req->ranges) {
      msg->srcOffsets.push_back(r.local);
      msg->sizes.push_back(r.bytes);
    }
    msg->pieces = planPieces(msg->sizes, pieceMax_, packMax_);
  }
  return req;
}

void RmaService::submit(const std::shared_ptr<Request>& req, const std::shared_ptr<OutMsg>& msg) {
  req->deadline = Deadline::afterMs(timeoutMs_);
  req->id = nextId_++;
  msg->header.id = req->id;
  msg->request = req;
  pending_[req->id] = req;
  if (req->copiedByTarget && req->local) {  // the peer may map its allocation until deregistration
    std::vector<bool>& by = req->local->mappedBy;
    if (by.empty()) by.resize(size(), false);
    by[req->peer] = true;
  }
  enqueue(req->peer, msg);
}

std::shared_ptr<Request> RmaService::transfer(bool isGet, const std::shared_ptr<LocalMem>& local, const RemoteMem& remote,
                                              const std::vector<Range>& ranges) {
  std::shared_ptr<OutMsg> msg;
  std::shared_ptr<Request> req = makeTransfer(isGet, remote, ranges, local, msg);
  std::lock_guard<std::mutex> lock(mu_);
  checkOpen(req->peer);
  if (req->ranges.empty()) {  // nothing to move: done at once
    req->state = Request::State::Done;
    return req;
  }
  holdRegistration(*local);
  req->local = local;
  submit(req, msg);
  return req;
}

void RmaService::finishRequest(Request& req, Result code, const std::string& message) {
  if (req.state != Request::State::Pending) return;
  req.state = code == Result::Success ? Request::State::Done : Request::State::Failed;
  req.code = code;
  req.message = message;
  if (req.local) {
    --req.local->pending;
    req.local.reset();
  }
  pending_.erase(req.id);
  if (std::shared_ptr<StreamOp> op = std::move(req.streamOp)) {
    op->request.reset();
    if (code == Result::Success) {  // the stream may go on: the data is in place
      StreamFlags::store(op->slot, StreamFlags::kDone, op->seq);
      streamPassing_.push_back(std::move(op));
    } else {
      streamFailed_.push_back({std::move(op), code, message});  // reported first, then released
    }
    streamBusy_.store(true);
  }
  cv_.notify_all();
}

bool RmaService::finished(const Request& req) {
  std::lock_guard<std::mutex> lock(mu_);
  return req.state != Request::State::Pending;
}

bool RmaService::test(Request& req) {
  std::lock_guard<std::mutex> lock(mu_);
  if (req.state == Request::State::Failed) throw Error(req.code, req.message);
  return req.state == Request::State::Done;
}

void RmaService::wait(Request& req) {
  std::unique_lock<std::mutex> lock(mu_);
  // The progress thread fails a request at its deadline; the margin covers its polling interval.
  const auto until = req.deadline.at() + std::chrono::seconds(2);
  if (!cv_.wait_until(lock, until, [&] { return req.state != Request::State::Pending; }))
    throw TimeoutError(req.peer, req.peer >= 0 ? peers_[req.peer].hostId : "",
                       concat(req.isGet ? "get from " : "put to ", peerName(req.peer),
                              ": not completed within HETCCL_TIMEOUT (", timeoutMs_ / 1000.0, " s)"));
  if (req.state == Request::State::Failed) throw Error(req.code, req.message);
}

// ---- notifications ----------------------------------------------------------------------------

void RmaService::notify(int peer, uint64_t tag) {
  auto msg = std::make_shared<OutMsg>();
  msg->header.type = static_cast<uint32_t>(MsgType::Notify);
  msg->header.offset = tag;
  std::lock_guard<std::mutex> lock(mu_);
  checkOpen(peer);
  enqueue(peer, std::move(msg));
}

bool RmaService::poll(int& peer, uint64_t& tag) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!notes_.popOldest(peer, tag)) {
    if (aborted_.load()) throw AbortedError("the communicator was aborted");
    return false;
  }
  kicked_ = true;  // a sender held back by a full queue may go on
  wake_.notify_one();
  return true;
}

bool RmaService::waitNotify(int peer, uint64_t tag, Deadline deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (notes_.take(peer, tag)) {  // O(1): indexed by (peer, tag)
      kicked_ = true;  // a sender held back by a full queue may go on
      wake_.notify_one();
      return true;
    }
    if (aborted_.load()) throw AbortedError("the communicator was aborted");
    if (dead_[peer]) throw *dead_[peer];
    if (stopped_ || stopping_) throw InvalidUsage(concat("RMA is stopped: ", stopReason_));
    if (deadline.expired()) {
      if (notes_.full())  // what is queued must be taken before anything more arrives
        throw Error(Result::InProgress,
                    concat("no notification with tag ", tag, " from rank ", peer, " in time: the notification queue is full (",
                           notes_.size(), " queued, HETCCL_RMA_NOTIFY_QUEUE); senders wait until some are taken ",
                           "(hetcclNotifyPoll, or hetcclNotifyWait for their tags)"));
      return false;
    }
    cv_.wait_until(lock, std::min(deadline.at(), Clock::now() + std::chrono::milliseconds(100)));
  }
}

// ---- lifecycle --------------------------------------------------------------------------------

void RmaService::abort() noexcept {
  aborted_.store(true);
  std::lock_guard<std::mutex> lock(mu_);
  kicked_ = true;
  wake_.notify_all();
  cv_.notify_all();
}

void RmaService::stop(const std::string& why) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || stopped_) return;
    stopping_ = true;
    stopReason_ = why;
    if (thread_.joinable() && !aborted_.load())
      for (int p = 0; p < size(); ++p) {
        if (p == rank_ || dead_[p]) continue;
        auto bye = std::make_shared<OutMsg>();
        bye->header.type = static_cast<uint32_t>(MsgType::Bye);
        enqueue(p, std::move(bye));
      }
    kicked_ = true;
    wake_.notify_all();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();  // flushes the goodbyes (bounded), then fails what is left
  {
    std::lock_guard<std::mutex> lock(mu_);
    failEverything(Result::RemoteError, why);
  }
  flushStreamFailures();  // every stream op released: reported to the communicator, "done" written
  waitStreamsPassed();
  std::lock_guard<std::mutex> lock(mu_);
  onStreamFailure_ = nullptr;
  stopped_ = true;
  boot_ = nullptr;
  links_.reset();
  cv_.notify_all();
}

}  // namespace hetccl::rma
