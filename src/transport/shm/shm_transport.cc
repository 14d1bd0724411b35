#include "transport/shm/shm_transport.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <thread>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "transport/shm/shm_conn.hpp"
#include "transport/shm/shm_handle.hpp"

namespace hetccl::transport {
namespace {

using shm::RingGeometry;
using shm::RingHeader;
using shm::ShmSegment;

std::string randomHex(size_t bytes) {
  unsigned char buf[64];
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(buf + got, bytes - got, 0);
    if (n < 0 && errno != EINTR) throw SystemError::fromErrno("getrandom for the shm segment prefix", errno);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    out += kDigits[buf[i] >> 4];
    out += kDigits[buf[i] & 15];
  }
  return out;
}

std::string segmentName(const std::string& prefix, uint64_t token, int from, int to) {
  char tok[17];
  std::snprintf(tok, sizeof tok, "%016llx", static_cast<unsigned long long>(token));
  return concat("/hetccl-", prefix, "-", tok, "-", from, "-", to);
}

class ShmListener final : public Listener {
 public:
  ShmListener() : prefix_(randomHex(shm::kPrefixChars / 2)), handle_(shm::encodeShmHandle(prefix_)) {}
  const Handle& handle() const override { return handle_; }
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  Handle handle_;
};

/// Throws PeerError when a mapped segment's header does not describe the connection we expect.
void validateHeader(const ShmSegment& seg, const ConnectInfo& info) {
  const RingHeader& h = *static_cast<const RingHeader*>(seg.data());
  std::string problem = shm::ringHeaderProblem(h, {info.peer.rank, info.self.rank, info.token, seg.size()});
  if (!problem.empty())
    throw PeerError(info.peer.rank, info.peer.hostId,
                    concat("shm accept from rank ", info.peer.rank, " on host '", info.peer.hostId, "': segment ",
                           seg.name(), " is invalid: ", problem));
}

class ShmTransport final : public Transport {
 public:
  std::string_view name() const override { return "shm"; }

  bool canConnect(const PeerInfo& self, const PeerInfo& peer) const override {
    return !self.hostId.empty() && self.hostId == peer.hostId;
  }

  std::unique_ptr<Listener> listen(const PeerInfo& self) override { return std::make_unique<ShmListener>(); }

  std::unique_ptr<SendConn> connect(const Handle& peerHandle, const ConnectInfo& info, Deadline) override {
    const uint64_t slotBytes = (config().integer("HETCCL_SHM_SLOT_BYTES", 64, int64_t{1} << 30) + 63) & ~uint64_t{63};
    const auto slots = static_cast<uint32_t>(config().integer("HETCCL_SHM_SLOTS", 2, 4096));
    const std::string name = segmentName(shm::decodeShmHandle(peerHandle), info.token, info.self.rank, info.peer.rank);
    const RingGeometry g = RingGeometry::of(slots, slotBytes);
    auto mib = [&](uint64_t rings) { return (rings * g.totalBytes + (1 << 20) - 1) >> 20; };
    ShmSegment seg = ShmSegment::create(
        name, g.totalBytes,
        concat("Every ordered pair of ranks on one host has one such ring (HETCCL_SHM_SLOTS=", slots,
               " x HETCCL_SHM_SLOT_BYTES=", slotBytes, "): n ranks on a host need n*(n-1) rings, e.g. ", mib(2),
               " MiB for 2 ranks, ", mib(12), " MiB for 4, ", mib(56), " MiB for 8, plus GPU rings."));
    auto* h = new (seg.data()) RingHeader{};
    shm::describeSegment(h->segment, shm::kRingKind, slots, slotBytes, info.self.rank, info.peer.rank);
    h->token = info.token;
    shm::publishSegment(h->segment, shm::kRingKind);  // last: the header is now complete
    HETCCL_INFO(log::kShm, "shm connect rank ", info.self.rank, " -> ", info.peer.rank, ": ring of ", slots, " x ",
                slotBytes, " bytes");
    return std::make_unique<shm::ShmSendConn>(std::move(seg), info);
  }

  std::unique_ptr<RecvConn> accept(Listener& listener, const ConnectInfo& info, Deadline deadline) override {
    auto* own = dynamic_cast<ShmListener*>(&listener);
    if (!own) throw InvalidArgument("shm accept: the listener was not created by the shm transport");
    const std::string name = segmentName(own->prefix(), info.token, info.peer.rank, info.self.rank);
    shm::PeerWatch watch(info.peer);
    auto pause = std::chrono::microseconds(50);
    while (true) {
      if (info.abortFlag && info.abortFlag->load(std::memory_order_acquire))
        throw AbortedError(concat("shm accept from rank ", info.peer.rank, ": communicator aborted"));
      if (info.checkFailure) info.checkFailure();
      if (auto seg = openIfReady(name)) {
        ShmSegment::unlink(name);  // mapped: the name is no longer needed
        validateHeader(*seg, info);
        HETCCL_INFO(log::kShm, "shm accept rank ", info.peer.rank, " -> ", info.self.rank, ": ring of ",
                    seg->ring().slots, " x ", seg->ring().slotBytes, " bytes");
        return std::make_unique<shm::ShmRecvConn>(std::move(*seg), info);
      }
      if (deadline.expired()) {
        ShmSegment::unlink(name);
        throw TimeoutError(info.peer.rank, info.peer.hostId,
                           concat("shm accept: rank ", info.peer.rank, " on host '", info.peer.hostId,
                                  "' did not connect before the deadline"));
      }
      watch.throwIfDead("shm accept");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(5000));
    }
  }

 private:
  /// The segment once it exists and its creator has published the header; nullopt before that.
  static std::optional<ShmSegment> openIfReady(const std::string& name) {
    auto seg = ShmSegment::tryOpen(name, sizeof(RingHeader));
    if (!seg) return std::nullopt;
    const auto& h = *static_cast<const RingHeader*>(seg->data());
    if (!shm::segmentPublished(h.segment, shm::kRingKind)) return std::nullopt;
    return seg;
  }
};

}  // namespace

std::unique_ptr<Transport> makeShmTransport() { return std::make_unique<ShmTransport>(); }

}  // namespace hetccl::transport
