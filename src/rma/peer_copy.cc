// The RMA service's device-to-device path between GPU ranks of one vendor on one host: the target of a
// transfer maps the initiator's device allocation with the vendor's IPC handle and copies the data itself
// (wire.hpp, kCopiedByTarget) -- copy-engine copies of its ranges (one batch where no two overlap), no
// staging, no window, no bytes on a connection. The target keeps its own checks (region, generation,
// bounds) and its order (the copies complete before it answers and reads the next message), and checks the
// initiator's ranges against the size of the mapping it opened itself, never against what the message claims.
// Set-up (collective, at hetcclRmaInit): every GPU rank that may share exports a probe allocation holding
// a random token; every peer it may share with maps it and reads the token back; a direction is used only
// where that worked (a runtime or container that refuses IPC, or maps something else, keeps the window).
// Deregistration: the vendors' runtimes leave freeing an allocation that another process still maps
// undefined, so deregistering a registration that peers copied asks each of them to close its mapping
// (Unmap) and waits for the answers; the application may free the memory when it returns.
#include <cstring>
#include <optional>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/crypto.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "rma/rma_service.hpp"

namespace hetccl::rma {
namespace {

/// One rank's row of the set-up's first all-gather.
struct ProbeRow {
  uint8_t exported = 0;
  uint8_t pad[7] = {};
  uint64_t offset = 0;  ///< of the probe in its allocation
  unsigned char handle[HETCCL_GPU_IPC_HANDLE_BYTES] = {};
  unsigned char token[16] = {};
};
static_assert(sizeof(ProbeRow) == 96);

/// What a kCopiedByTarget transfer or an Unmap names: the allocation of an exported registration.
WireSource wireSourceOf(const device::GpuRuntime::IpcExport& shared) {
  WireSource ws;
  std::memcpy(ws.handle, shared.handle.data(), sizeof ws.handle);
  ws.allocBytes = shared.allocBytes;
  return ws;
}

}  // namespace

bool peerCopyWanted(const PeerInfo& self, const PeerInfo& peer) {
  const std::string mode = config().str("HETCCL_RMA_IPC");
  if (mode != "auto" && mode != "off") throw InvalidArgument(concat("HETCCL_RMA_IPC=", mode, " (expected auto or off)"));
  return mode == "auto" && peer.rank != self.rank && peer.hostId == self.hostId && self.deviceKind != DeviceKind::Host &&
         peer.deviceKind == self.deviceKind;
}

void RmaService::setUpPeerCopies(bootstrap::Bootstrap& boot) {
  const int n = size();
  device::GpuRuntime* gpu = memory_->gpu();
  const PeerInfo& self = peers_[rank_];
  auto wanted = [&](int p) { return gpu && gpu->sharesMemory() && peerCopyWanted(self, peers_[p]); };
  bool any = false;
  for (int p = 0; p < n; ++p) any = any || wanted(p);
  // Round 1: the probe of every rank that may share.
  std::vector<ProbeRow> rows(n);
  void* probe = nullptr;
  if (any) {
    try {
      ProbeRow& mine = rows[rank_];
      bootstrap::randomBytes(std::span<unsigned char>(mine.token, sizeof mine.token));
      probe = gpu->alloc(4096);
      gpu->copy(probe, mine.token, sizeof mine.token);
      const device::GpuRuntime::IpcExport e = gpu->exportMemory(probe);
      std::memcpy(mine.handle, e.handle.data(), sizeof mine.handle);
      mine.offset = e.offset;
      mine.exported = 1;
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "rank ", rank_, ": device memory cannot be shared with other processes (RMA takes the window): ",
                  e.what());
    }
  }
  boot.allGather(rows.data(), sizeof(ProbeRow));
  // Round 2: which peers' probes this rank mapped and read back (one byte per peer).
  std::vector<unsigned char> mapped(static_cast<size_t>(n) * n, 0);
  for (int p = 0; p < n; ++p) {
    if (!wanted(p) || !rows[p].exported) continue;
    try {
      device::GpuRuntime::IpcHandle h;
      std::memcpy(h.data(), rows[p].handle, h.size());
      const device::GpuRuntime::IpcMapping m = gpu->openMemory(h);
      unsigned char seen[16] = {};
      try {
        if (rows[p].offset + sizeof seen > m.bytes) throw InvalidArgument("the mapping is smaller than the probe");
        gpu->copy(seen, static_cast<unsigned char*>(m.base) + rows[p].offset, sizeof seen);
      } catch (...) {
        gpu->closeMemory(m.base);
        throw;
      }
      gpu->closeMemory(m.base);
      if (std::memcmp(seen, rows[p].token, sizeof seen) == 0)
        mapped[static_cast<size_t>(n) * rank_ + p] = 1;
      else
        HETCCL_INFO(log::kInit, "rank ", rank_, ": the mapping of rank ", p, "'s device memory shows other bytes: no IPC with it");
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "rank ", rank_, ": cannot map rank ", p, "'s device memory (RMA takes the window): ", e.what());
    }
  }
  boot.allGather(mapped.data(), static_cast<size_t>(n));
  if (probe) gpu->free(probe);  // every peer closed its mapping before the all-gather
  for (int p = 0; p < n; ++p) {
    if (p == rank_) continue;
    if (mapped[static_cast<size_t>(n) * rank_ + p]) channels_[p].mapped = std::make_unique<PeerMappings>(*gpu);
    channels_[p].peerCopies = mapped[static_cast<size_t>(n) * p + rank_] != 0;
  }
}

void RmaService::exportForPeers(LocalMem& mem) {
  if (!isDevice(mem.kind)) return;
  bool anyPeer = false;
  for (const Channel& ch : channels_) anyPeer = anyPeer || ch.peerCopies;
  if (!anyPeer) return;
  try {
    mem.shared = memory_->gpu()->exportMemory(mem.base);
  } catch (const Error& e) {
    HETCCL_INFO(log::kInit, "rank ", rank_, ": a registration of ", mem.bytes,
                " bytes cannot be shared with other processes (its transfers take the window): ", e.what());
  }
}

void RmaService::addSource(OutMsg& msg, Request& req, const LocalMem& local) {
  const uint64_t n = req.ranges.size();
  msg.source.assign(sizeof(WireSource) + n * sizeof(uint64_t), 0);
  const WireSource ws = wireSourceOf(*local.shared);
  std::memcpy(msg.source.data(), &ws, sizeof ws);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t at = local.shared->offset + req.ranges[i].local;
    std::memcpy(msg.source.data() + sizeof ws + i * sizeof(uint64_t), &at, sizeof at);
  }
  msg.header.flags |= kCopiedByTarget;
  req.copiedByTarget = true;
}

void RmaService::copyByTarget(int peer, Channel& ch) {
  const WireHeader& h = ch.header;
  const bool isGet = static_cast<MsgType>(h.type) == MsgType::GetReq;
  WireSource ws;
  std::memcpy(&ws, ch.source.data(), sizeof ws);
  const auto* offsets = reinterpret_cast<const unsigned char*>(ch.source.data() + sizeof ws);
  auto sourceAt = [&](size_t i) {
    uint64_t v;
    std::memcpy(&v, offsets + i * sizeof v, sizeof v);
    return v;
  };
  const RegionRef ref{h.slot, h.generation};
  Access a = regions_.acquire(ref, ch.table);
  if (a.status == Status::Ok && mappingsClosed_) {  // stopping: the peer was (or is about to be) told so
    HETCCL_INFO(log::kNet, "rank ", rank_, ": RMA ", isGet ? "get by " : "put from ", peerName(peer),
                " refused: this rank's RMA service is stopping");
    regions_.release(ref);
    a.status = Status::Failed;
  }
  if (a.status == Status::Ok) {
    try {
      device::GpuRuntime::IpcHandle handle;
      std::memcpy(handle.data(), ws.handle, handle.size());
      const device::GpuRuntime::IpcMapping m = ch.mapped->map(handle);
      std::vector<MemoryAccess::Copy> copies;
      copies.reserve(ch.table.size());
      for (size_t i = 0; i < ch.table.size(); ++i) {
        const uint64_t at = sourceAt(i), bytes = ch.table[i].bytes;
        if (at > m.bytes || bytes > m.bytes - at)
          throw PeerError(peer, peers_[peer].hostId,
                          concat(peerName(peer), " sent a malformed RMA message: source range [", at, ", +", bytes,
                                 ") lies outside its ", m.bytes, "-byte allocation"));
        unsigned char* theirs = static_cast<unsigned char*>(m.base) + at;
        unsigned char* ours = a.base + ch.table[i].offset;
        copies.push_back(isGet ? MemoryAccess::Copy{theirs, ours, bytes} : MemoryAccess::Copy{ours, theirs, bytes});
      }
      memory_->copyAll(memory_->gpuKind(), copies);  // complete on return: the answer follows the data
    } catch (const PeerError&) {
      regions_.release(ref);
      throw;
    } catch (const Error& e) {
      HETCCL_WARN(log::kNet, "rank ", rank_, ": RMA ", isGet ? "get by " : "put from ", peerName(peer),
                  ": the device-to-device copy failed: ", e.what());
      a.status = Status::Failed;
    }
    regions_.release(ref);
  }
  std::shared_ptr<OutMsg> answer = answerTo(isGet ? MsgType::GetResp : MsgType::Ack, h.id, a);
  answer->header.flags = kCopiedByTarget;
  ch.sending.push_back(std::move(answer));
  ch.phase = Channel::RecvPhase::Idle;
}

void RmaService::unmapForPeer(Channel& ch) {
  WireSource ws;
  std::memcpy(&ws, ch.source.data(), sizeof ws);
  device::GpuRuntime::IpcHandle handle;
  std::memcpy(handle.data(), ws.handle, handle.size());
  ch.mapped->close(handle);  // not open (never mapped, or evicted): nothing to close; answered all the same
  auto answer = std::make_shared<OutMsg>();
  answer->header.type = static_cast<uint32_t>(MsgType::Unmapped);
  answer->header.id = ch.header.id;
  ch.sending.push_back(std::move(answer));
  ch.phase = Channel::RecvPhase::Idle;
}

void RmaService::unmapAtPeers(LocalMem& mem) {
  if (!mem.shared) return;
  std::vector<std::shared_ptr<Request>> asked;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Stopped or aborted: every channel closed, and a peer closes its mappings when its channel closes.
    if (aborted_.load() || stopping_ || stopped_) return;
    for (int p = 0; p < static_cast<int>(mem.mappedBy.size()); ++p) {
      if (!mem.mappedBy[p] || dead_[p]) continue;  // a closed channel closed the peer's mappings with it
      auto req = std::make_shared<Request>();
      req->peer = p;
      req->isUnmap = true;
      req->service = shared_from_this();
      auto msg = std::make_shared<OutMsg>();
      msg->header.type = static_cast<uint32_t>(MsgType::Unmap);
      const WireSource ws = wireSourceOf(*mem.shared);
      msg->source.assign(reinterpret_cast<const unsigned char*>(&ws), reinterpret_cast<const unsigned char*>(&ws + 1));
      submit(req, msg);
      asked.push_back(std::move(req));
    }
    mem.mappedBy.clear();
  }
  std::optional<PeerError> first;
  for (const std::shared_ptr<Request>& req : asked) {
    try {
      wait(*req);
    } catch (const Error& e) {
      if (!first)
        first = PeerError(req->peer, peers_[req->peer].hostId,
                          concat("the registration has ended, but ", peerName(req->peer),
                                 " did not confirm that it closed its mapping of the allocation, which must not be "
                                 "freed while that rank may still map it: ", e.what()));
    }
  }
  if (first) throw *first;
}

}  // namespace hetccl::rma
