#include "agent/in_channel.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

#include "agent/handshake.hpp"
#include "agent/out_channel.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::agent {

InChannel::InChannel(AgentCore& core, net::Socket sock) : core_(core), sock_(std::move(sock)) {
  label_ = concat("connection from ", sock_.peerAddress().toString());
  thread_ = std::thread([this] { run(); });
}

InChannel::~InChannel() { stop(); }

void InChannel::stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_ && sock_.valid()) ::shutdown(sock_.fd(), SHUT_RDWR);
    stopped_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void InChannel::run() {
  try {
    if (core_.memory->hasGpu()) core_.memory->bindThread();
    sock_.setKeepalive(core_.timeoutMs);
    TargetSide side;
    side.self = core_.incarnation;
    side.acceptPeerCopy = core_.peerCopy;
    side.acceptUcx = [&] { return core_.ucx && core_.net->usable(); };
    side.openOut = [&](const std::string& name) {
      try {
        out_ = rma::Window::open(name, 0, 1, core_.memory->gpu());
        return true;
      } catch (const Error& e) {
        HETCCL_INFO(log::kNet, "agent '", core_.name, "': cannot map the window of the ", label_, " (", e.what(), ")");
        return false;
      }
    };
    side.createBack = [&]() -> std::string {
      if (!core_.windows) return {};
      try {
        const std::string name = newWindowName();
        back_ = rma::Window::create(name, 1, 0, core_.windowSlots, core_.windowSlotBytes, core_.memory->gpu());
        return name;
      } catch (const Error& e) {
        HETCCL_INFO(log::kNet, "agent '", core_.name, "': no shared-memory window towards the ", label_, " (", e.what(), ")");
        return {};
      }
    };
    const Deadline handshakeEnd = Deadline::afterMs(std::min(core_.timeoutMs, kHandshakeMs));
    const TargetOutcome o = targetHandshake(sock_, core_.key, side, handshakeEnd, label_);
    authenticated_.store(true);
    if (o.ucx) net_ = core_.net->answer(sock_, handshakeEnd, concat("agent '", o.peerName, "' (", label_, ")"), "");
    if (!o.outWindowMapped) out_.reset();
    if (!o.backWindowMapped) back_.reset();
    peerName_ = o.peerName;
    peerCopy_ = o.peerCopy;
    label_ = concat("agent '", o.peerName, "' (", label_, ")");
    serve();
  } catch (const Error& e) {
    if (!core_.stopping.load()) HETCCL_INFO(log::kNet, "agent '", core_.name, "': ", label_, " ended: ", e.what());
  } catch (const std::exception& e) {
    HETCCL_WARN(log::kNet, "agent '", core_.name, "': ", label_, " ended: internal error: ", e.what());
  }
  copier_.reset();  // closes every mapping of the initiator's memory (its deregistration may rely on it)
  net_.close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    sock_.close();
  }
  finished_.store(true);
}

CopyEngine* InChannel::engine() {
  if (!core_.memory->hasGpu()) return nullptr;
  if (!engine_) engine_ = std::make_unique<CopyEngine>(core_.memory->gpu());
  return engine_.get();
}

void InChannel::sendReply(const Reply& reply, Deadline d) { sock_.sendAll(&reply, sizeof reply, d, label_); }

void InChannel::serve() {
  for (;;) {
    // Idle between requests: wait for the next header without a deadline, watching for the agent's stop.
    for (;;) {
      if (core_.stopping.load()) return;
      pollfd p{sock_.fd(), POLLIN, 0};
      const int r = ::poll(&p, 1, 100);
      if (r > 0) break;
    }
    unsigned char probe;
    if (::recv(sock_.fd(), &probe, 1, MSG_PEEK) == 0) {  // closed between requests: the peer left
      HETCCL_INFO(log::kNet, "agent '", core_.name, "': ", label_, " closed");
      return;
    }
    const Deadline d = core_.deadline();
    MsgHeader h;
    sock_.recvAll(&h, sizeof h, d, label_);
    if (h.magic != kMsgMagic) throw PeerError(-1, "", concat(label_, ": malformed request (bad magic)"));
    if (h.notifBytes > kMaxNotif) throw PeerError(-1, "", concat(label_, ": notification of ", h.notifBytes, " bytes"));
    switch (static_cast<MsgType>(h.type)) {
      case MsgType::Write:
      case MsgType::Read:
        serveTransfer(h);
        break;
      case MsgType::Unmap:
        serveUnmap(h);
        break;
      case MsgType::Notify: {
        if (h.nranges != 0) throw PeerError(-1, "", concat(label_, ": malformed notification"));
        Notification n{peerName_, std::vector<unsigned char>(h.notifBytes)};
        if (h.notifBytes) sock_.recvAll(n.message.data(), h.notifBytes, d, label_);
        if (!core_.queueNote(std::move(n), d)) throw TimeoutError(-1, "", concat(label_, ": the notification queue stayed full"));
        Reply rep;
        rep.id = h.id;
        sendReply(rep, d);
        break;
      }
      default:
        throw PeerError(-1, "", concat(label_, ": unknown request type ", h.type));
    }
  }
}

std::vector<rma::RegionRef> InChannel::holdRanges(const std::vector<WireRange>& table, std::vector<Segment>& segments,
                                                  Reply& reply) {
  std::vector<rma::RegionRef> held;
  segments.resize(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const WireRange& w = table[i];
    const rma::RegionRef ref{w.region, w.generation};
    const rma::WireRange r{w.offset, w.bytes};
    const rma::Access a = w.bytes == 0 ? rma::Access{rma::Status::OutOfBounds} : core_.regions.acquire(ref, std::span(&r, 1));
    if (a.status != rma::Status::Ok) {
      for (const rma::RegionRef& h : held) core_.regions.release(h);
      reply.status = static_cast<uint32_t>(a.status);
      reply.badIndex = i;
      reply.regionBytes = a.regionBytes;
      segments.assign(table.size(), Segment{});
      for (size_t k = 0; k < table.size(); ++k) segments[k].bytes = table[k].bytes;
      return {};
    }
    held.push_back(ref);
    segments[i] = Segment{a.base + w.offset, w.bytes, a.kind};
  }
  return held;
}

InChannel::HeldRegions::~HeldRegions() {
  for (const rma::RegionRef& r : refs) core.regions.release(r);
}

void InChannel::queueWriteNote(std::vector<unsigned char> notif, Deadline d) {
  if (notif.empty()) return;
  if (!core_.queueNote(Notification{peerName_, std::move(notif)}, d))
    throw TimeoutError(-1, "", concat(label_, ": the notification queue stayed full"));
}

void InChannel::serveTransfer(const MsgHeader& h) {
  const Deadline d = core_.deadline();
  if (h.nranges == 0 || h.nranges > kMaxRanges) throw PeerError(-1, "", concat(label_, ": request with ", h.nranges, " ranges"));
  std::vector<WireRange> table(h.nranges);
  sock_.recvAll(table.data(), table.size() * sizeof(WireRange), d, label_);
  uint64_t total = 0;
  for (const WireRange& w : table) {
    if (w.bytes > UINT64_MAX - total) throw PeerError(-1, "", concat(label_, ": ranges overflow"));
    total += w.bytes;
  }
  if (total != h.totalBytes) throw PeerError(-1, "", concat(label_, ": request of ", h.totalBytes, " bytes whose ranges hold ", total));
  std::vector<unsigned char> notif(h.notifBytes);
  if (h.notifBytes) sock_.recvAll(notif.data(), notif.size(), d, label_);
  const bool isWrite = static_cast<MsgType>(h.type) == MsgType::Write;
  if (!isWrite && h.notifBytes) throw PeerError(-1, "", concat(label_, ": a read carries its notification separately"));
  if (h.flags & kCopiedByTarget) return serveCopy(h, std::move(table), std::move(notif));
  if (h.flags != 0) throw PeerError(-1, "", concat(label_, ": request flags ", h.flags));

  Reply reply;
  reply.id = h.id;
  std::vector<Segment> segments;
  const HeldRegions held{core_, holdRanges(table, segments, reply)};
  const auto poll = [&] {
    if (core_.stopping.load()) throw AbortedError("the agent is stopping");
  };
  if (isWrite) {
    // Refused: drained (segments without memory) so that the connection stays in step.
    PayloadLink(sock_, out_.get(), *core_.memory, engine(), label_, &net_).ofWrite().recv(segments, d, poll);
    // Every byte is in place (host stores done, device copies complete): only now the notification.
    if (reply.status == 0) queueWriteNote(std::move(notif), d);
    sendReply(reply, d);
    return;
  }
  sendReply(reply, d);
  if (reply.status == 0) PayloadLink(sock_, back_.get(), *core_.memory, engine(), label_, &net_).send(segments, d, poll);
}

void InChannel::serveCopy(const MsgHeader& h, std::vector<WireRange> table, std::vector<unsigned char> notif) {
  const Deadline d = core_.deadline();
  if (!peerCopy_ || h.flags != kCopiedByTarget)
    throw PeerError(-1, "", concat(label_, ": a device copy request on a connection that did not agree to them"));
  const PeerSource source = recvSource(sock_, h.nranges, d, label_);
  const bool isWrite = static_cast<MsgType>(h.type) == MsgType::Write;
  Reply reply;
  reply.id = h.id;
  std::vector<Segment> segments;
  const HeldRegions held{core_, holdRanges(table, segments, reply)};
  if (reply.status == 0) {
    // The initiator asks only for ranges it knows to be device memory of this vendor on both sides.
    const bool device = std::all_of(segments.begin(), segments.end(), [&](const Segment& s) { return s.kind == core_.memory->gpuKind(); });
    try {
      if (!device || !engine()) {
        reply.status = kStatusCannotCopy;
      } else {
        if (!copier_) copier_ = std::make_unique<PeerCopier>(*core_.memory, *engine());
        if (!copier_->copy(segments, source, isWrite, label_)) reply.status = kStatusCannotCopy;
      }
    } catch (const PeerError&) {
      throw;
    } catch (const Error& e) {
      HETCCL_WARN(log::kNet, "agent '", core_.name, "': ", isWrite ? "write from " : "read by ", label_,
                  ": the device-to-device copy failed: ", e.what());
      reply.status = static_cast<uint32_t>(rma::Status::Failed);
    }
  }
  if (isWrite && reply.status == 0) queueWriteNote(std::move(notif), d);  // the copies completed (synchronised)
  sendReply(reply, d);
}

void InChannel::serveUnmap(const MsgHeader& h) {
  const Deadline d = core_.deadline();
  if (!peerCopy_ || h.nranges != 0 || h.notifBytes != 0 || h.flags != 0)
    throw PeerError(-1, "", concat(label_, ": malformed unmap request"));
  const PeerSource source = recvSource(sock_, 0, d, label_);
  if (copier_) copier_->unmap(source.allocs[0]);  // not open (never mapped, evicted): answered all the same
  Reply rep;
  rep.id = h.id;
  sendReply(rep, d);
}

}  // namespace hetccl::agent
