#include "transport/ucx/ucx_conn.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/log.hpp"
#include "transport/base/crc32c.hpp"
#include "transport/base/integrity.hpp"

namespace hetccl::transport::ucx {
namespace {

constexpr int kReleaseMs = 2000;  // how long abandon()/destruction waits for UCP to let go of operations

/// Parameters of an operation completing into `op`.
api::RequestParam sendParams(Op& op) {
  api::RequestParam p{};
  p.opAttrMask = api::UCP_OP_ATTR_FIELD_CALLBACK | api::UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = &Worker::onSend;
  p.userData = &op;
  return p;
}
// Receives always complete through the callback (NO_IMM_CMPL), which reports the length that arrived.
api::RequestParam tagRecvParams(Op& op) {
  api::RequestParam p{};
  p.opAttrMask = api::UCP_OP_ATTR_FIELD_CALLBACK | api::UCP_OP_ATTR_FIELD_USER_DATA | api::UCP_OP_ATTR_FIELD_RECV_INFO |
                 api::UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.cb.recv = &Worker::onTagRecv;
  p.userData = &op;
  p.recvInfo.tagInfo = &op.info;
  return p;
}

/// Records what a *_nbx call returned: a request (UCP owns the op until its callback), or an immediate
/// completion / error (no callback follows).
void posted(Op& op, void* returned) {
  if (api::isRequest(returned)) {
    op.request = returned;
    return;
  }
  op.status = api::statusOf(returned);
  op.length = op.info.length;
}

}  // namespace

// ---- common ---------------------------------------------------------------------------------------

UcxConnBase::UcxConnBase(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info,
                         std::string label, int senderRank)
    : worker_(std::move(worker)),
      ep_(ep),
      state_(state),
      info_(info),
      label_(std::move(label)),
      tagBase_(tagBase(senderRank, info.token)),
      checksum_(checksumsEnabled()) {}

UcxConnBase::~UcxConnBase() = default;

void UcxConnBase::failLocked(std::exception_ptr failure) {
  if (!failure_) failure_ = failure;
  forceClose_ = true;
  std::rethrow_exception(failure_);
}

void UcxConnBase::failPeerLocked(const std::string& what) {
  failLocked(std::make_exception_ptr(PeerError(info_.peer.rank, info_.peer.hostId, concat(label_, ": ", what))));
}

void UcxConnBase::checkHealthLocked() {
  if (failure_) std::rethrow_exception(failure_);
  if (const int st = state_->status.load(); st != api::UCS_OK)
    failPeerLocked(concat("the connection failed: ", worker_->ucp().statusText(st),
                          " (the peer process died, closed its end or became unreachable)"));
  if (info_.abortFlag && info_.abortFlag->load(std::memory_order_acquire))
    failLocked(std::make_exception_ptr(
        AbortedError(concat("ucx connection with rank ", info_.peer.rank, ": communicator aborted"))));
}

bool UcxConnBase::isClosed(Request r, bool open) const {
  if (r == 0 || r > lastIssued_)
    throw InvalidArgument(concat(label_, ": test() of request ", r, ", which was never issued"));
  return !open;
}

void UcxConnBase::releaseOpsLocked(OwnedOps ops) noexcept {
  const api::Ucp& u = worker_->ucp();
  bool any = false;
  for (auto& [op, extra] : ops)
    if (*op && (*op)->pending()) {
      any = true;
      if ((*op)->request) u.ucp_request_cancel(worker_->handle(), (*op)->request);  // receives: at once
    }
  if (!any) return;
  // Sends cannot be cancelled one by one: closing the endpoint with FORCE completes them all (and the
  // receives in the middle of a rendezvous on it).
  if (ep_) {
    worker_->closeEndpoint(ep_, true);
    ep_ = nullptr;
  }
  forceClose_ = true;
  const Deadline d = Deadline::afterMs(kReleaseMs);
  auto pending = [&] {
    for (auto& [op, extra] : ops)
      if (*op && (*op)->pending()) return true;
    return false;
  };
  while (pending() && !d.expired()) worker_->progressLocked();
  size_t left = 0;
  for (auto& [op, extra] : ops)
    if (*op && (*op)->pending()) {
      ++left;
      worker_->retire(std::move(*op), extra);
    }
  if (left > 0)
    HETCCL_WARN(log::kNet, label_, ": ", left, " operation(s) still held by UCX ", kReleaseMs,
                " ms after they were cancelled; their buffers may still be accessed");
}

void UcxConnBase::abandonLocked(const char* direction, OwnedOps ops) noexcept {
  if (!failure_)
    failure_ = std::make_exception_ptr(AbortedError(
        concat("ucx connection ", direction, " rank ", info_.peer.rank, ": outstanding requests were abandoned")));
  releaseOpsLocked(std::move(ops));
  forceClose_ = true;
}

void UcxConnBase::closeLocked(OwnedOps ops) noexcept {
  releaseOpsLocked(std::move(ops));
  worker_->closeEndpoint(ep_, forceClose_ || state_->status.load() != api::UCS_OK);
}

// ---- send -------------------------------------------------------------------------------------------

UcxSendConn::UcxSendConn(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info)
    : UcxConnBase(std::move(worker), ep, state, info,
                  concat("ucx send from rank ", info.self.rank, " to rank ", info.peer.rank, " (host '",
                         info.peer.hostId, "')"),
                  info.self.rank) {
  hello_ = std::make_shared<std::array<unsigned char, Hello::kWireBytes>>(Hello{info.self.rank, info.peer.rank, info.token}.encode());
  helloOp_ = std::make_unique<Op>();
  api::RequestParam p = sendParams(*helloOp_);
  // Caller holds the worker's mutex (UcxTransport::connect).
  posted(*helloOp_, worker_->ucp().ucp_stream_send_nbx(ep_, hello_->data(), hello_->size(), &p));
  worker_->signal();
}

UcxSendConn::~UcxSendConn() {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  closeLocked(opsLocked());
}

UcxConnBase::OwnedOps UcxSendConn::opsLocked() {
  OwnedOps ops;
  ops.emplace_back(&helloOp_, hello_);
  for (auto& [r, pieces] : open_)
    for (auto& p : pieces) {
      ops.emplace_back(&p->headerOp, p);
      ops.emplace_back(&p->payloadOp, p);
    }
  return ops;
}

Request UcxSendConn::isend(const void* data, size_t bytes, const CallStamp& stamp) {
  if (!data && bytes > 0) throw InvalidArgument(concat(label_, ": null buffer"));
  const auto* src = static_cast<const unsigned char*>(data);
  const CallStampWords words = callStampWords(stamp);
  std::lock_guard<std::mutex> lock(worker_->mutex());
  if (failure_) std::rethrow_exception(failure_);  // a failure found since is reported by test()
  const api::Ucp& u = worker_->ucp();
  std::vector<std::shared_ptr<Piece>> pieces;
  const size_t n = pieceCount(bytes);
  for (size_t k = 0; k < n; ++k) {
    auto piece = std::make_shared<Piece>();
    const size_t offset = k * kPieceBytes;
    const size_t len = bytes == 0 ? 0 : std::min(kPieceBytes, bytes - offset);
    PieceHeader h;
    h.number = nextPiece_;
    h.messageBytes = bytes;
    h.pieceBytes = len;
    h.token = info_.token;
    h.stamp = words;
    if (checksum_) {
      h.flags = kPieceHasCrc;
      h.crc = crc32c(0, src + offset, len);
    }
    piece->header = h.encode();
    const unsigned char* payload = src + offset;
    if (len > 0 && testing::takeCorruption()) {  // test hook: the link flips a bit on the way
      piece->corrupted.assign(payload, payload + len);
      piece->corrupted[len / 2] ^= 0x10;
      payload = piece->corrupted.data();
    }
    piece->headerOp = std::make_unique<Op>();
    api::RequestParam hp = sendParams(*piece->headerOp);
    posted(*piece->headerOp, u.ucp_tag_send_nbx(ep_, piece->header.data(), piece->header.size(),
                                                pieceTag(tagBase_, nextPiece_, false), &hp));
    if (len > 0) {
      piece->payloadOp = std::make_unique<Op>();
      api::RequestParam pp = sendParams(*piece->payloadOp);
      posted(*piece->payloadOp, u.ucp_tag_send_nbx(ep_, payload, len, pieceTag(tagBase_, nextPiece_, true), &pp));
    }
    ++nextPiece_;
    pieces.push_back(std::move(piece));
  }
  open_.emplace(++lastIssued_, std::move(pieces));
  worker_->signal();
  return lastIssued_;
}

void UcxSendConn::advanceLocked() {
  if (helloOp_ && !helloOp_->pending() && helloOp_->status != api::UCS_OK)
    failPeerLocked(concat("the hello could not be sent: ", worker_->ucp().statusText(helloOp_->status)));
  for (auto it = open_.begin(); it != open_.end();) {
    bool done = true;
    for (auto& p : it->second)
      for (Op* op : {p->headerOp.get(), p->payloadOp.get()}) {
        if (!op) continue;
        if (op->pending()) {
          done = false;
        } else if (op->status != api::UCS_OK) {
          failPeerLocked(concat("sending piece ", std::distance(it->second.data(), &p), " of request ", it->first,
                                " failed: ", worker_->ucp().statusText(op->status)));
        }
      }
    it = done ? open_.erase(it) : std::next(it);
  }
}

bool UcxSendConn::test(Request r) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  if (failure_) std::rethrow_exception(failure_);
  worker_->progressLocked();
  advanceLocked();
  if (isClosed(r, open_.count(r) != 0)) return true;
  checkHealthLocked();
  return false;
}

void UcxSendConn::abandon() noexcept {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  abandonLocked("to", opsLocked());
}

// ---- receive ----------------------------------------------------------------------------------------

UcxRecvConn::UcxRecvConn(std::shared_ptr<Worker> worker, void* ep, EpState* state, const ConnectInfo& info)
    : UcxConnBase(std::move(worker), ep, state, info,
                  concat("ucx recv at rank ", info.self.rank, " from rank ", info.peer.rank, " (host '",
                         info.peer.hostId, "')"),
                  info.peer.rank),
      staging_(std::make_shared<std::vector<std::vector<unsigned char>>>()) {}

UcxRecvConn::~UcxRecvConn() {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  closeLocked(opsLocked());
}

UcxConnBase::OwnedOps UcxRecvConn::opsLocked() {
  OwnedOps ops;
  for (auto& [r, m] : open_)
    for (auto& p : m.pieces) {
      ops.emplace_back(&p->headerOp, p);
      // A payload op writes the caller's buffer or a staging buffer: the staging set lives as long.
      ops.emplace_back(&p->payloadOp, p->staging >= 0 ? std::shared_ptr<void>(staging_) : std::shared_ptr<void>(p));
    }
  return ops;
}

Request UcxRecvConn::irecv(void* data, size_t bytes, const Reducer* reducer, const CallStamp& expected) {
  if (!data && bytes > 0) throw InvalidArgument(concat(label_, ": null buffer"));
  if (reducer) {
    if (!reducer->fn || reducer->elemSize == 0 || 64 % reducer->elemSize != 0)
      throw InvalidArgument(concat(label_, ": reducer needs a function and an element size dividing 64 (got ",
                                   reducer->elemSize, ")"));
    if (bytes % reducer->elemSize != 0)
      throw InvalidArgument(concat(label_, ": ", bytes, " bytes is not a whole number of ", reducer->elemSize,
                                   "-byte elements"));
  }
  std::lock_guard<std::mutex> lock(worker_->mutex());
  if (failure_) std::rethrow_exception(failure_);  // a failure found since is reported by test()
  const api::Ucp& u = worker_->ucp();
  Message m;
  m.data = static_cast<unsigned char*>(data);
  m.bytes = bytes;
  m.reducer = reducer;
  m.expected = callStampWords(expected);
  const size_t n = pieceCount(bytes);
  for (size_t k = 0; k < n; ++k) {
    auto p = std::make_shared<Piece>();
    p->number = nextPiece_++;
    p->offset = k * kPieceBytes;
    p->bytes = bytes == 0 ? 0 : std::min(kPieceBytes, bytes - p->offset);
    p->headerOp = std::make_unique<Op>();
    api::RequestParam hp = tagRecvParams(*p->headerOp);
    posted(*p->headerOp, u.ucp_tag_recv_nbx(worker_->handle(), p->header.data(), p->header.size(),
                                            pieceTag(tagBase_, p->number, false), ~uint64_t{0}, &hp));
    m.pieces.push_back(std::move(p));
  }
  open_.emplace(++lastIssued_, std::move(m));
  worker_->signal();
  return lastIssued_;
}

void UcxRecvConn::checkHeader(const Message& m, Piece& p) {
  std::string problem;
  std::optional<PieceHeader> h = PieceHeader::decode(p.header.data(), problem);
  if (h && h->stamp != m.expected) {  // another call's message: say which calls, not only which sizes
    std::optional<CallStamp> sent = decodeCallStampWords(h->stamp, &problem);
    if (sent)
      problem = concat(callMismatchMessage(info_.peer.rank, *sent, decodeCallStampWords(m.expected).value_or(CallStamp{})),
                       ": the ranks' calls disagree");
  } else if (h) {
    problem = pieceMismatch(*h, p.number, m.bytes, p.bytes);
    if (problem.empty() && h->token != info_.token) problem = concat("piece ", p.number, " carries another connection's token");
  }
  if (!problem.empty()) failPeerLocked(problem);
  if (h->flags & kPieceHasCrc) p.crc = h->crc;
  else if (checksum_)
    failPeerLocked("the sender sends no checksums but HETCCL_CHECKSUM=1 here: set it alike on every rank");
}

void UcxRecvConn::advance(Message& m, Piece& p) {
  const api::Ucp& u = worker_->ucp();
  if (p.stage == Stage::Header) {
    if (p.headerOp->pending()) return;
    if (p.headerOp->status != api::UCS_OK)
      failPeerLocked(concat("receiving the header of piece ", p.number, " failed: ", u.statusText(p.headerOp->status)));
    if (p.headerOp->length != PieceHeader::kWireBytes)
      failPeerLocked(concat("piece ", p.number, "'s header has ", p.headerOp->length, " bytes, expected ",
                            PieceHeader::kWireBytes));
    checkHeader(m, p);
    if (p.bytes == 0) {
      p.stage = Stage::Done;
      ++m.done;
      return;
    }
    p.stage = Stage::Checked;
  }
  if (p.stage == Stage::Checked) {
    unsigned char* dst = m.data + p.offset;
    if (m.reducer) {
      auto free = std::find(stagingUsed_.begin(), stagingUsed_.end(), false);
      if (free == stagingUsed_.end()) {
        if (stagingUsed_.size() >= kStagingPieces) return;  // a staging buffer frees up as a piece completes
        staging_->emplace_back(kPieceBytes);
        stagingUsed_.push_back(false);
        free = std::prev(stagingUsed_.end());
      }
      p.staging = static_cast<int>(free - stagingUsed_.begin());
      *free = true;
      dst = (*staging_)[p.staging].data();
    }
    p.payloadOp = std::make_unique<Op>();
    api::RequestParam pp = tagRecvParams(*p.payloadOp);
    posted(*p.payloadOp, u.ucp_tag_recv_nbx(worker_->handle(), dst, p.bytes, pieceTag(tagBase_, p.number, true),
                                            ~uint64_t{0}, &pp));
    p.stage = Stage::Payload;
  }
  if (p.stage == Stage::Payload) {
    if (p.payloadOp->pending()) return;
    if (p.payloadOp->status != api::UCS_OK)
      failPeerLocked(concat("receiving piece ", p.number, " failed: ", u.statusText(p.payloadOp->status)));
    if (p.payloadOp->length != p.bytes)
      failPeerLocked(concat("piece ", p.number, " has ", p.payloadOp->length, " bytes, its header said ", p.bytes));
    const unsigned char* got = p.staging >= 0 ? (*staging_)[p.staging].data() : m.data + p.offset;
    if (p.crc) {
      const uint32_t actual = crc32c(0, got, p.bytes);
      if (actual != *p.crc)
        failPeerLocked(concat("checksum mismatch in piece ", p.number, " (", p.bytes, " bytes of a ", m.bytes,
                              "-byte message): the sender's crc32c is 0x", std::hex, *p.crc,
                              ", the bytes that arrived have 0x", actual, std::dec,
                              ": data was corrupted between rank ", info_.peer.rank,
                              " and this rank (HETCCL_CHECKSUM)"));
    }
    if (m.reducer) {
      m.reducer->fn(m.data + p.offset, got, p.bytes / m.reducer->elemSize, m.reducer->ctx);
      stagingUsed_[p.staging] = false;
      p.staging = -1;
    }
    p.stage = Stage::Done;
    ++m.done;
  }
}

void UcxRecvConn::advanceLocked() {
  for (auto it = open_.begin(); it != open_.end();) {
    Message& m = it->second;
    for (auto& p : m.pieces)
      if (p->stage != Stage::Done) advance(m, *p);
    it = m.done == m.pieces.size() ? open_.erase(it) : std::next(it);
  }
}

bool UcxRecvConn::test(Request r) {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  if (failure_) std::rethrow_exception(failure_);
  worker_->progressLocked();
  advanceLocked();
  if (isClosed(r, open_.count(r) != 0)) return true;
  checkHealthLocked();
  return false;
}

void UcxRecvConn::abandon() noexcept {
  std::lock_guard<std::mutex> lock(worker_->mutex());
  abandonLocked("from", opsLocked());
}

}  // namespace hetccl::transport::ucx
