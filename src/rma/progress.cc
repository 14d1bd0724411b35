// The RMA progress thread: the only code that touches the RMA connections. Per peer it sends the queued
// messages in order (header, table, pieces; packed and device pieces through staging) and receives one
// message at a time: a put is checked against the region table, received (straight into host regions,
// staged for device regions and packed pieces) and applied completely before it is acknowledged and the
// next message is read -- the ordering guarantee of hetcclNotify rests on this.
#include <algorithm>
#include <chrono>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "core/log.hpp"
#include "rma/rma_service.hpp"

namespace hetccl::rma {
namespace {

constexpr size_t kMaxInFlight = 8;            // posted pieces per peer and direction
constexpr uint64_t kMaxPieceBytes = 64u << 20;
constexpr auto kCheckEvery = std::chrono::milliseconds(10);
constexpr auto kByeFlush = std::chrono::seconds(1);

const char* statusText(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Stale: return "the remote region was deregistered (stale descriptor)";
    case Status::Unknown: return "the target has no such region (forged or corrupted reference)";
    case Status::OutOfBounds: return "a range lies outside the remote region";
    case Status::Failed: return "the target could not copy the data (see its log)";
  }
  return "unknown status";
}

}  // namespace

void RmaService::progressLoop() {
  progressLoopBody();
  flushStreamFailures();  // whatever ended it (stop, abort, a failure): no stream is left waiting
}

void RmaService::progressLoopBody() {
  try {
    memory_->bindThread();
  } catch (const Error& e) {
    HETCCL_WARN(log::kNet, "rank ", rank_, ": RMA progress thread cannot bind the device: ", e.what());
  }
  int idle = 0;
  auto nextCheck = Clock::now() + kCheckEvery;
  std::optional<Clock::time_point> flushUntil;
  try {
    for (;;) {
      bool stopping = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        stopping = stopping_;
        for (Channel& ch : channels_)
          while (!ch.queue.empty()) {
            ch.sending.push_back(std::move(ch.queue.front()));
            ch.queue.pop_front();
          }
      }
      if (aborted_.load()) {
        std::lock_guard<std::mutex> lock(mu_);
        failEverything(Result::RemoteError, "the communicator was aborted");
        return;
      }
      if (stopping) {
        if (!flushUntil) {
          flushUntil = Clock::now() + kByeFlush;
          // Before the goodbyes go out (below): a peer takes a Bye as "every mapping of mine is closed".
          for (Channel& ch : channels_)
            if (ch.mapped) ch.mapped->closeAll();
          mappingsClosed_ = true;
        }
        bool flushed = true;
        for (int p = 0; p < size(); ++p)
          if (p != rank_ && !dead_[p] && (!channels_[p].sending.empty() || !channels_[p].sendInFlight.empty()))
            flushed = false;
        if (flushed || Clock::now() >= *flushUntil) return;
      }
      bool progressed = false;
      for (int p = 0; p < size(); ++p) {
        if (p == rank_ || dead_[p]) continue;
        try {
          progressed |= progressSend(p, channels_[p]);
          progressed |= progressRecv(p, channels_[p]);
        } catch (const Error& e) {
          failPeer(p, e);
          progressed = true;
        }
      }
      if (streamBusy_.load()) progressed |= progressStreams();
      if (Clock::now() >= nextCheck) {
        nextCheck = Clock::now() + kCheckEvery;
        checkDeadlines();
      }
      if (progressed) {
        idle = 0;
      } else if (++idle > 64) {
        std::unique_lock<std::mutex> lock(mu_);
        // A stream waiting for its transfer to start is polled (its "reached" word) every 20 us at most.
        const auto sleep = std::chrono::microseconds(std::min(streamBusy_.load() ? 20 : 200, 5 * (idle - 64)));
        wake_.wait_for(lock, sleep, [&] { return kicked_; });
        kicked_ = false;
      } else {
        std::this_thread::yield();
      }
    }
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kNet, "rank ", rank_, ": RMA progress thread failed: ", e.what());
    std::lock_guard<std::mutex> lock(mu_);
    failEverything(Result::InternalError, concat("the RMA progress thread failed: ", e.what()));
  }
}

// ---- sending ----------------------------------------------------------------------------------

bool RmaService::progressSend(int peer, Channel& ch) {
  bool did = false;
  while (!ch.sendInFlight.empty() && ch.send->test(ch.sendInFlight.front().r)) {
    SendInFlight f = std::move(ch.sendInFlight.front());
    ch.sendInFlight.pop_front();
    memory_->recycle(f.staging);
    if (f.lastOfMsg && f.msg->heldRegion) {
      regions_.release(*f.msg->heldRegion);
      f.msg->heldRegion.reset();
    }
    did = true;
  }
  while (!ch.sending.empty() && ch.sendInFlight.size() < kMaxInFlight) {
    std::shared_ptr<OutMsg> msg = ch.sending.front();
    if (!ch.headerPosted) {
      ch.sendInFlight.push_back({ch.send->isend(&msg->header, sizeof(WireHeader)), {}, msg, false});
      if (msg->header.nranges > 1 && (msg->header.type == static_cast<uint32_t>(MsgType::Put) ||
                                      msg->header.type == static_cast<uint32_t>(MsgType::GetReq)))
        ch.sendInFlight.push_back({ch.send->isend(msg->table.data(), msg->table.size() * sizeof(WireRange)), {}, msg, false});
      if (!msg->source.empty())  // kCopiedByTarget: what the target maps and copies from/to
        ch.sendInFlight.push_back({ch.send->isend(msg->source.data(), msg->source.size()), {}, msg, false});
      ch.headerPosted = true;
      ch.nextPiece = 0;
    } else if (ch.outWindow) {  // a pair of one host: the message's bytes through the window (window_path.cc)
      if (!sendWindowChunks(ch, *msg, did)) break;  // every slot holds a chunk: later
      ch.nextPiece = msg->pieces.size();
    } else {
      const Piece& pc = msg->pieces[ch.nextPiece];
      SendInFlight f{0, {}, msg, false};
      const void* data = nullptr;
      if (!pc.packed && !isDevice(msg->srcKind)) {
        data = msg->src + msg->srcOffsets[pc.first] + pc.offset;
      } else {
        f.staging = memory_->staging(pc.bytes);
        if (pc.packed) {
          uint64_t at = 0;
          for (uint32_t i = pc.first; i < pc.last; ++i) {
            memory_->fromMemory(msg->srcKind, f.staging.data + at, msg->src + msg->srcOffsets[i], msg->sizes[i]);
            at += msg->sizes[i];
          }
        } else {
          memory_->fromMemory(msg->srcKind, f.staging.data, msg->src + msg->srcOffsets[pc.first] + pc.offset, pc.bytes);
        }
        data = f.staging.data;
      }
      f.r = ch.send->isend(data, pc.bytes);
      ch.sendInFlight.push_back(std::move(f));
      ++ch.nextPiece;
    }
    if (ch.nextPiece == msg->pieces.size()) {  // every byte of the message is posted
      if (ch.outWindow && !msg->pieces.empty()) {  // already copied into the window: the region is free
        if (msg->heldRegion) regions_.release(*msg->heldRegion);
        msg->heldRegion.reset();
      } else {
        ch.sendInFlight.back().lastOfMsg = true;
      }
      ch.sending.pop_front();
      ch.headerPosted = false;
      ch.nextPiece = 0;
    }
    did = true;
  }
  return did;
}

// ---- receiving --------------------------------------------------------------------------------

bool RmaService::progressRecv(int peer, Channel& ch) {
  using Phase = Channel::RecvPhase;
  switch (ch.phase) {
    case Phase::Idle:
      ch.headerReq = ch.recv->irecv(&ch.header, sizeof(WireHeader));
      ch.phase = Phase::Header;
      return true;
    case Phase::Header:
      if (!ch.recv->test(ch.headerReq)) return false;
      onHeader(peer, ch);
      return true;
    case Phase::Table:
      if (!ch.recv->test(ch.tableReq)) return false;
      onTable(peer, ch);
      return true;
    case Phase::Source:
      if (!ch.recv->test(ch.sourceReq)) return false;
      if (static_cast<MsgType>(ch.header.type) == MsgType::Unmap)
        unmapForPeer(ch);
      else
        copyByTarget(peer, ch);
      return true;
    case Phase::NoteHeld:
      return queueNote(peer, ch);
    case Phase::Closed:
      return false;
    case Phase::Pieces:
      break;
  }
  if (ch.inWindow) return recvWindowChunks(peer, ch);
  Incoming& in = ch.in;
  bool did = false;
  while (in.posted < in.pieces.size() && ch.recvInFlight.size() < kMaxInFlight) {
    const Piece& pc = in.pieces[in.posted];
    RecvInFlight f{0, {}, in.posted};
    void* into;
    if (!pc.packed && in.dst && !isDevice(in.dstKind)) {
      // Received in place: the transport may write it as soon as it is posted, in any order with the
      // pieces in flight (tcp stripes over several sockets). The ranges of a batch apply in order (a later
      // range to the same bytes wins), so it waits for every staged piece ahead of it to be applied and
      // for every in-place piece it overlaps to complete.
      unsigned char* at = in.dst + in.dstOffsets[pc.first] + pc.offset;
      const bool blocked = std::any_of(ch.recvInFlight.begin(), ch.recvInFlight.end(), [&](const RecvInFlight& x) {
        return x.staging.data || (x.at < at + pc.bytes && at < x.at + x.bytes);
      });
      if (blocked) break;
      into = f.at = at;
      f.bytes = pc.bytes;
    } else {
      f.staging = memory_->staging(pc.bytes);
      into = f.staging.data;
    }
    f.r = ch.recv->irecv(into, pc.bytes);
    ch.recvInFlight.push_back(std::move(f));
    ++in.posted;
    did = true;
  }
  while (!ch.recvInFlight.empty() && ch.recv->test(ch.recvInFlight.front().r)) {
    RecvInFlight f = std::move(ch.recvInFlight.front());
    ch.recvInFlight.pop_front();
    const Piece& pc = in.pieces[f.piece];
    if (in.dst && f.staging.data) {
      try {  // the piece is applied before the next one (and the next message) is looked at
        if (pc.packed) {
          uint64_t at = 0;
          for (uint32_t i = pc.first; i < pc.last; ++i) {
            memory_->toMemory(in.dstKind, in.dst + in.dstOffsets[i], f.staging.data + at, in.sizes[i]);
            at += in.sizes[i];
          }
        } else {
          memory_->toMemory(in.dstKind, in.dst + in.dstOffsets[pc.first] + pc.offset, f.staging.data, pc.bytes);
        }
      } catch (const Error& e) {
        HETCCL_WARN(log::kNet, "rank ", rank_, ": RMA data from ", peerName(peer), " could not be copied: ", e.what());
        in.access.status = Status::Failed;
        in.dst = nullptr;  // drain the rest
      }
    }
    memory_->recycle(f.staging);
    ++in.applied;
    did = true;
  }
  if (in.applied == in.pieces.size()) {
    finishIncoming(peer, ch);
    did = true;
  }
  return did;
}

void RmaService::onHeader(int peer, Channel& ch) {
  const WireHeader& h = ch.header;
  auto malformed = [&](const char* why) {
    return PeerError(peer, peers_[peer].hostId, concat(peerName(peer), " sent a malformed RMA message: ", why));
  };
  if (h.magic != kWireMagic) throw malformed("bad magic");
  if (h.flags & ~kCopiedByTarget) throw malformed("unknown flags");
  switch (static_cast<MsgType>(h.type)) {
    case MsgType::Put:
    case MsgType::GetReq:
      if (h.nranges == 0 || h.nranges > kMaxWireRanges) throw malformed("bad range count");
      if (h.pieceMax == 0 || h.pieceMax > kMaxPieceBytes || h.packMax > kMaxPieceBytes) throw malformed("bad piece limits");
      if ((h.flags & kCopiedByTarget) && !ch.mapped) throw malformed("a device-to-device transfer that was not agreed on");
      if (h.nranges == 1) {
        ch.table.assign(1, WireRange{h.offset, h.bytes});
        onTable(peer, ch);
      } else {
        ch.table.resize(h.nranges);
        ch.tableReq = ch.recv->irecv(ch.table.data(), h.nranges * sizeof(WireRange));
        ch.phase = Channel::RecvPhase::Table;
      }
      return;
    case MsgType::Notify:
      queueNote(peer, ch);
      return;
    case MsgType::Ack:
    case MsgType::GetResp: {
      const bool isGet = static_cast<MsgType>(h.type) == MsgType::GetResp;
      std::shared_ptr<Request> req = takeRequest(h.id);
      if (!req || req->peer != peer || req->isGet != isGet || req->isUnmap)
        throw malformed("an answer to no request of this rank");
      if (isGet && ((h.flags & kCopiedByTarget) != 0) != req->copiedByTarget)
        throw malformed("a get answered by another path than it was asked by");
      const auto status = static_cast<Status>(h.status);
      if (status != Status::Ok || !isGet || req->copiedByTarget) {  // (a get the target copied: its data is in place)
        std::string why;
        if (status == Status::OutOfBounds)
          why = concat(": range [", h.offset, ", ", h.offset + h.badBytes, ") lies outside the remote region's ",
                       h.bytes, " bytes; nothing was written");
        else if (status != Status::Ok)
          why = concat(": ", statusText(status), isGet ? "" : "; nothing was written");
        std::lock_guard<std::mutex> lock(mu_);
        if (status == Status::Ok) {
          finishRequest(*req, Result::Success, "");
        } else {
          const Result code = status == Status::Failed ? Result::RemoteError : Result::InvalidArgument;
          finishRequest(*req, code, concat(isGet ? "get from " : "put to ", peerName(peer), " refused", why));
        }
        ch.phase = Channel::RecvPhase::Idle;
        return;
      }
      Incoming& in = ch.in;
      in = Incoming{};
      in.active = true;
      in.isPut = false;
      in.header = h;
      in.request = req;
      in.dst = req->local->base;  // the request holds the registration (pending) until it finishes
      in.dstKind = req->local->kind;
      for (const Range& r : req->ranges) {
        in.dstOffsets.push_back(r.local);
        in.sizes.push_back(r.bytes);
      }
      in.pieces = planPieces(in.sizes, pieceMax_, packMax_);
      ch.phase = Channel::RecvPhase::Pieces;
      return;
    }
    case MsgType::Unmap:  // the peer deregistered a registration whose allocation may be mapped here
      if (!ch.mapped) throw malformed("an unmap on a path that maps nothing");
      ch.source.assign(sizeof(WireSource), 0);
      ch.sourceReq = ch.recv->irecv(ch.source.data(), ch.source.size());
      ch.phase = Channel::RecvPhase::Source;
      return;
    case MsgType::Unmapped: {
      std::shared_ptr<Request> req = takeRequest(h.id);
      if (!req || req->peer != peer || !req->isUnmap) throw malformed("an answer to no request of this rank");
      std::lock_guard<std::mutex> lock(mu_);
      finishRequest(*req, Result::Success, "");
      ch.phase = Channel::RecvPhase::Idle;
      return;
    }
    case MsgType::Bye: {
      std::lock_guard<std::mutex> lock(mu_);
      dead_[peer] = PeerError(peer, peers_[peer].hostId,
                              concat(peerName(peer), " stopped its RMA service (finalized or destroyed its communicator)"));
      std::vector<std::shared_ptr<Request>> mine;
      for (auto& [id, r] : pending_)
        if (r->peer == peer) mine.push_back(r);
      // An Unmap is answered by the Bye itself: the peer closed every mapping before saying it.
      for (auto& r : mine) finishRequest(*r, r->isUnmap ? Result::Success : Result::RemoteError, dead_[peer]->what());
      channels_[peer].queue.clear();
      releaseChannel(ch);
      cv_.notify_all();
      return;
    }
  }
  throw malformed("unknown message type");
}

bool RmaService::queueNote(int peer, Channel& ch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!notes_.push(peer, ch.header.offset)) {
    // Back-pressure: nothing more is read from this peer (its later puts and notifications wait in the
    // transport, their order kept) until the application takes some; its requests' deadlines still run.
    if (!notesFullLogged_)
      HETCCL_WARN(log::kNet, "rank ", rank_, ": the RMA notification queue is full (", notes_.size(),
                  " received and not taken, HETCCL_RMA_NOTIFY_QUEUE): messages from ", peerName(peer),
                  " wait until some are taken (hetcclNotifyPoll/Wait)");
    notesFullLogged_ = true;
    ch.phase = Channel::RecvPhase::NoteHeld;
    return false;
  }
  cv_.notify_all();
  ch.phase = Channel::RecvPhase::Idle;
  return true;
}

void RmaService::onTable(int peer, Channel& ch) {
  const WireHeader& h = ch.header;
  uint64_t total = 0;
  for (const WireRange& r : ch.table) {
    if (r.bytes > UINT64_MAX - total)
      throw PeerError(peer, peers_[peer].hostId, concat(peerName(peer), " sent a malformed RMA message: sizes overflow"));
    total += r.bytes;
  }
  if (total != h.totalBytes)
    throw PeerError(peer, peers_[peer].hostId, concat(peerName(peer), " sent a malformed RMA message: sizes disagree"));
  if (h.flags & kCopiedByTarget) {  // the source follows; then the target copies (peer_copy.cc)
    ch.source.assign(sizeof(WireSource) + ch.table.size() * sizeof(uint64_t), 0);
    ch.sourceReq = ch.recv->irecv(ch.source.data(), ch.source.size());
    ch.phase = Channel::RecvPhase::Source;
    return;
  }
  const RegionRef ref{h.slot, h.generation};
  Access a = regions_.acquire(ref, ch.table);
  std::vector<uint64_t> offsets, sizes;
  offsets.reserve(ch.table.size());
  sizes.reserve(ch.table.size());
  for (const WireRange& r : ch.table) {
    offsets.push_back(r.offset);
    sizes.push_back(r.bytes);
  }
  if (static_cast<MsgType>(h.type) == MsgType::GetReq) {
    std::shared_ptr<OutMsg> resp = answerTo(MsgType::GetResp, h.id, a);
    if (a.status == Status::Ok) {
      resp->src = a.base;
      resp->srcKind = a.kind;
      resp->srcOffsets = std::move(offsets);
      resp->sizes = std::move(sizes);
      resp->pieces = planPieces(resp->sizes, h.pieceMax, h.packMax);
      resp->heldRegion = ref;
    }
    ch.sending.push_back(std::move(resp));
    ch.phase = Channel::RecvPhase::Idle;
    return;
  }
  Incoming& in = ch.in;
  in = Incoming{};
  in.active = true;
  in.isPut = true;
  in.header = h;
  in.access = a;
  in.dstOffsets = std::move(offsets);
  in.sizes = std::move(sizes);
  in.pieces = planPieces(in.sizes, h.pieceMax, h.packMax);
  if (a.status == Status::Ok) {
    in.dst = a.base;
    in.dstKind = a.kind;
    in.held = ref;
  }
  ch.phase = Channel::RecvPhase::Pieces;
}

void RmaService::finishIncoming(int peer, Channel& ch) {
  Incoming& in = ch.in;
  if (in.isPut) {
    if (in.held) regions_.release(*in.held);
    ch.sending.push_back(answerTo(MsgType::Ack, in.header.id, in.access));
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    if (in.access.status == Status::Ok)
      finishRequest(*in.request, Result::Success, "");
    else
      finishRequest(*in.request, Result::RemoteError,
                    concat("get from ", peerName(peer), ": the data could not be copied into local memory (see the log)"));
  }
  in = Incoming{};
  ch.phase = Channel::RecvPhase::Idle;
}

std::shared_ptr<Request> RmaService::takeRequest(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  return it == pending_.end() ? nullptr : it->second;
}

// ---- failures ---------------------------------------------------------------------------------

void RmaService::releaseChannel(Channel& ch) noexcept {
  if (ch.send) ch.send->abandon();
  if (ch.recv) ch.recv->abandon();
  for (SendInFlight& f : ch.sendInFlight) {
    memory_->recycle(f.staging);
    if (f.msg->heldRegion) {
      regions_.release(*f.msg->heldRegion);
      f.msg->heldRegion.reset();
    }
  }
  for (auto& msg : ch.sending)
    if (msg->heldRegion) {
      regions_.release(*msg->heldRegion);
      msg->heldRegion.reset();
    }
  for (RecvInFlight& f : ch.recvInFlight) memory_->recycle(f.staging);
  if (ch.in.held) regions_.release(*ch.in.held);
  if (ch.mapped) ch.mapped->closeAll();  // no copy is in flight: copyByTarget completes its copies
  ch.sendInFlight.clear();
  ch.sending.clear();
  ch.recvInFlight.clear();
  ch.in = Incoming{};
  ch.headerPosted = false;
  ch.nextPiece = 0;
  ch.windowOut = {};
  if (ch.windowCopies) ch.windowCopies->drain();  // before the slots are reset
  ch.outQueued.clear();
  ch.inQueued.clear();
  if (ch.outWindow) ch.outWindow->reset();
  if (ch.inWindow) ch.inWindow->reset();
  ch.phase = Channel::RecvPhase::Closed;
}

void RmaService::failPeer(int peer, const Error& e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dead_[peer]) {
    std::string what = e.what();
    if (what.find(concat("rank ", peer)) == std::string::npos) what = concat(peerName(peer), ": ", what);
    dead_[peer] = PeerError(peer, peers_[peer].hostId, concat("RMA channel to ", peerName(peer), " failed: ", what));
    // While this service stops (finalize/destroy), a peer that stopped too closes its connections, maybe
    // before its Bye is read (tcp stripes a channel over several sockets): expected, said at INFO only.
    if (stopping_)
      HETCCL_INFO(log::kNet, "rank ", rank_, ": while stopping: ", dead_[peer]->what());
    else if (!aborted_.load())
      HETCCL_WARN(log::kNet, "rank ", rank_, ": ", dead_[peer]->what());
  }
  // No window copy may still run into a buffer whose transfer is about to end.
  if (channels_[peer].windowCopies) channels_[peer].windowCopies->drain();
  std::vector<std::shared_ptr<Request>> mine;
  for (auto& [id, r] : pending_)
    if (r->peer == peer) mine.push_back(r);
  for (auto& r : mine) finishRequest(*r, Result::RemoteError, dead_[peer]->what());
  channels_[peer].queue.clear();
  releaseChannel(channels_[peer]);
  cv_.notify_all();
}

void RmaService::failEverything(Result code, const std::string& why) {
  while (!streamWaiting_.empty()) {  // released now: the stream goes through when it gets there
    std::shared_ptr<StreamOp> op = std::move(streamWaiting_.front());
    streamWaiting_.pop_front();
    failStreamOp(op, code, concat("not started (its stream had not got there): ", why));
  }
  for (Channel& ch : channels_)  // no window copy may still run into a buffer whose transfer is about to end
    if (ch.windowCopies) ch.windowCopies->drain();
  std::vector<std::shared_ptr<Request>> all;
  for (auto& [id, r] : pending_) all.push_back(r);
  for (auto& r : all)
    finishRequest(*r, code,
                  concat(r->isUnmap ? "unmap at " : r->isGet ? "get from " : "put to ", peerName(r->peer), " failed: ", why));
  for (int p = 0; p < static_cast<int>(channels_.size()); ++p) {  // empty when start() failed early
    if (p == rank_) continue;
    channels_[p].queue.clear();
    if (channels_[p].phase != Channel::RecvPhase::Closed || !channels_[p].sending.empty()) releaseChannel(channels_[p]);
  }
  cv_.notify_all();
}

void RmaService::checkDeadlines() {
  std::vector<std::pair<int, const char*>> late;  // peer, what it did not complete
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, r] : pending_)
      if (r->deadline.expired() && !dead_[r->peer])
        late.emplace_back(r->peer, r->isUnmap ? "unmap (closing its mapping of a deregistered allocation)"
                                   : r->isGet ? "get" : "put");
  }
  for (auto [peer, what] : late) {
    if (dead_[peer]) continue;
    failPeer(peer, TimeoutError(peer, peers_[peer].hostId,
                                concat(peerName(peer), " did not complete an RMA ", what, " within HETCCL_TIMEOUT (",
                                       timeoutMs_ / 1000.0, " s)")));
  }
  if (!boot_) return;
  if (std::optional<PeerError> f = boot_->failure(); f && f->peer() >= 0 && f->peer() < size() && f->peer() != rank_ &&
                                                     !dead_[f->peer()])
    failPeer(f->peer(), *f);
}

}  // namespace hetccl::rma
