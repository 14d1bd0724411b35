#include "agent/agent.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bootstrap/bootstrap.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "device/gpu_runtime.hpp"
#include "device/loader.hpp"

namespace hetccl::agent {
namespace {

/// HETCCL_SECRET's hex digits decoded to bytes (so options.secret = those bytes is the same secret).
std::vector<unsigned char> secretFromEnvironment() {
  const std::string hex = config().str("HETCCL_SECRET");
  if (hex.empty())
    throw InvalidArgument("an agent needs the deployment's secret: options.secret, or HETCCL_SECRET (>= 32 hex digits) "
                          "set alike for every agent (docs/SECURITY.md)");
  if (hex.size() < 32) throw InvalidArgument(concat("HETCCL_SECRET has ", hex.size(), " hex digits; at least 32 are needed"));
  if (hex.size() % 2 != 0) throw InvalidArgument(concat("HETCCL_SECRET has an odd number of hex digits (", hex.size(), ")"));
  const auto digit = [&](size_t i) {
    const char c = hex[i];
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw InvalidArgument(concat("HETCCL_SECRET: character ", i, " is not a hex digit"));
  };
  std::vector<unsigned char> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(digit(2 * i) * 16 + digit(2 * i + 1));
  return out;
}

rma::MemoryAccess* makeMemoryAccess(int device) {
  if (device < 0) return new rma::MemoryAccess(nullptr, rma::MemKind::Host, -1);
  const device::GpuChoice choice = device::chooseGpu();
  device::GpuRuntime* gpu = choice.kind == DeviceKind::Host ? nullptr : device::gpuRuntime(choice.kind);
  if (!gpu)
    throw InvalidUsage(concat("options.device = ", device, " but no GPU runtime is available (", choice.reason, ")"));
  if (device >= gpu->deviceCount())
    throw InvalidArgument(concat("options.device = ", device, " but the ", gpu->name(), " runtime sees ", gpu->deviceCount(),
                                 " device(s)"));
  return new rma::MemoryAccess(gpu, choice.kind == DeviceKind::Cuda ? rma::MemKind::Cuda : rma::MemKind::Hip, device);
}

bool windowsWanted() {
  const std::string mode = config().str("HETCCL_AGENT_WINDOW");
  if (mode == "auto" || mode.empty()) return true;
  if (mode == "off") return false;
  throw InvalidArgument(concat("HETCCL_AGENT_WINDOW=", mode, ": expected auto or off"));
}

bool peerCopyWanted() {
  const std::string mode = config().str("HETCCL_AGENT_IPC");
  if (mode == "auto" || mode.empty()) return true;
  if (mode == "off") return false;
  throw InvalidArgument(concat("HETCCL_AGENT_IPC=", mode, ": expected auto or off"));
}

}  // namespace

Agent::Agent(const std::string& name, const AgentOptions& options) {
  if (!validName(name))
    throw InvalidArgument(concat("agent name '", name, "': 1..", kMaxName, " characters of [A-Za-z0-9._:-] expected"));
  bootstrap::cryptoReady();
  const Config& cfg = config();
  core_.name = name;
  core_.key = agentKey(options.secret.empty() ? secretFromEnvironment() : options.secret);
  bootstrap::randomBytes(core_.incarnation);
  core_.hostId = bootstrap::detectSelf(0, DeviceKind::Host, -1).hostId;
  if (options.timeoutSeconds > 0) {
    if (!std::isfinite(options.timeoutSeconds) || options.timeoutSeconds > 1e7)
      throw InvalidArgument(concat("options.timeoutSeconds = ", options.timeoutSeconds));
    core_.timeoutMs = std::max<int64_t>(1, static_cast<int64_t>(options.timeoutSeconds * 1000));
  } else {
    core_.timeoutMs = cfg.timeoutMs();
  }
  core_.windows = windowsWanted();
  core_.windowSlots = static_cast<uint32_t>(cfg.integer("HETCCL_RMA_WINDOW_SLOTS", 2, 64));
  core_.windowSlotBytes = (static_cast<uint64_t>(cfg.integer("HETCCL_RMA_WINDOW_BYTES", 64 << 10, 1 << 30)) + 63) / 64 * 64;
  core_.notifyQueueMax = static_cast<size_t>(cfg.integer("HETCCL_RMA_NOTIFY_QUEUE", 1 << 10, 16 << 20));
  core_.memory.reset(makeMemoryAccess(options.device));
  core_.peerCopy = peerCopyWanted() && core_.memory->hasGpu() && core_.memory->gpu()->sharesMemory();
  std::string noUcx;
  core_.ucx = ucxAllowed(&noUcx);
  if (core_.ucx) core_.net = std::make_unique<NetLinks>(name);
  if (core_.windows) {
    if (const size_t n = sweepOrphanWindows())
      HETCCL_INFO(log::kInit, "agent '", name, "': removed ", n, " window segment(s) of agents that died before their peer mapped them");
  }
  pid_ = static_cast<uint32_t>(getpid());
  const net::SocketAddress at =
      options.listenAddress.empty() ? net::chooseLocalAddress() : net::SocketAddress::parse(options.listenAddress);
  listener_ = std::make_unique<net::Listener>(at);
  address_ = listener_->address().toString();
  acceptThread_ = std::thread([this] { acceptLoop(); });
  HETCCL_INFO(log::kInit, "agent '", name, "' listening at ", address_, " (", core_.memory->hasGpu() ? "device and host" : "host",
              " memory; shared-memory windows with agents of this host ", core_.windows ? "on" : "off",
              "; device-to-device copies with them ", core_.peerCopy ? "on" : "off", "; with agents of other hosts: ",
              core_.ucx ? "ucx" : concat("tcp (", noUcx, ")"), ")");
}

Agent::~Agent() { stop(); }

void Agent::stop() noexcept {
  std::vector<std::shared_ptr<OutChannel>> outs;
  std::vector<std::unique_ptr<InChannel>> ins;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    core_.stopping.store(true);
    for (auto& [name, p] : peers_)
      if (p.channel) outs.push_back(p.channel);
  }
  {
    std::lock_guard<std::mutex> lock(core_.mu);
    core_.cv.notify_all();
  }
  if (acceptThread_.joinable()) acceptThread_.join();
  for (auto& c : outs) c->stop("this agent was destroyed");
  {
    std::lock_guard<std::mutex> lock(mu_);
    ins.swap(inChannels_);
  }
  for (auto& c : ins) c->stop();
  listener_.reset();
}

void Agent::acceptLoop() {
  while (!core_.stopping.load()) {
    pollfd p{listener_->fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    try {
      net::Socket s = listener_->tryAccept();
      if (!s.valid()) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) break;
      // Reap the connections that ended (their threads have returned: stop() joins at once).
      size_t pending = 0;
      for (auto it = inChannels_.begin(); it != inChannels_.end();)
        if ((*it)->finished()) {
          (*it)->stop();
          it = inChannels_.erase(it);
        } else {
          pending += (*it)->authenticated() ? 0 : 1;
          ++it;
        }
      if (pending >= kMaxPendingHandshakes) {  // a flood of unauthenticated connections: drop the newest
        HETCCL_INFO(log::kNet, "agent '", core_.name, "': ", pending, " connections are still in their handshake; closing one from ",
                    s.peerAddress().toString());
        continue;
      }
      inChannels_.push_back(std::make_unique<InChannel>(core_, std::move(s)));
    } catch (const std::exception& e) {
      HETCCL_WARN(log::kNet, "agent '", core_.name, "': accepting a connection failed: ", e.what());
      usleep(10000);
    }
  }
}

std::vector<unsigned char> Agent::metadata() {
  Metadata m;
  m.name = core_.name;
  m.incarnation = core_.incarnation;
  m.address = address_;
  m.hostId = core_.hostId;
  m.pid = pid_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    m.sequence = sequence_;
    for (const auto& [id, r] : regions_) m.regions.push_back(RegionInfo{r.id, r.generation, r.kind, r.bytes});
  }
  return encodeMetadata(m, core_.key);
}

std::string Agent::loadRemote(std::span<const unsigned char> blob) {
  Metadata m = decodeMetadata(blob, core_.key);
  if (m.incarnation == core_.incarnation) throw InvalidArgument("this is this agent's own metadata");
  std::shared_ptr<OutChannel> replaced;
  const std::string name = m.name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) throw InvalidUsage("the agent was destroyed");
    auto it = peers_.find(name);
    if (it != peers_.end() && it->second.md.incarnation == m.incarnation) {
      if (m.sequence < it->second.md.sequence)
        throw InvalidArgument(concat("metadata of agent '", name, "' is older (sequence ", m.sequence,
                                     ") than the one loaded (", it->second.md.sequence, ")"));
      it->second.md.regions = std::move(m.regions);  // same incarnation: the connection stays
      it->second.md.sequence = m.sequence;
      return name;
    }
    if (it != peers_.end()) {
      replaced = it->second.channel;
      peers_.erase(it);
    }
    peers_.emplace(name, Peer{std::move(m), nullptr});
  }
  if (replaced) replaced->stop("replaced by the metadata of a new incarnation (the agent restarted)");
  return name;
}

void Agent::forgetRemote(const std::string& name) {
  std::shared_ptr<OutChannel> ch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = peers_.find(name);
    if (it == peers_.end()) throw InvalidArgument(concat("no agent '", name, "' is loaded"));
    ch = it->second.channel;
    peers_.erase(it);
  }
  if (ch) ch->stop("forgotten (hetcclAgentForgetRemote)");
}

Agent::Registration Agent::registerMemory(void* buf, uint64_t bytes) {
  if (!buf) throw InvalidArgument("buffer is NULL");
  if (bytes == 0) throw InvalidArgument("bytes is 0");
  if (reinterpret_cast<uintptr_t>(buf) > UINTPTR_MAX - bytes) throw InvalidArgument("buffer + bytes overflows");
  const rma::MemKind kind = core_.memory->kindOf(buf);
  std::optional<device::GpuRuntime::IpcExport> shared;
  if (core_.peerCopy && rma::isDevice(kind)) {
    try {
      shared = core_.memory->gpu()->exportMemory(buf);
    } catch (const Error& e) {
      HETCCL_INFO(log::kInit, "agent '", core_.name, "': a registration of ", bytes,
                  " bytes cannot be shared with other processes (peers' transfers of it take the window): ", e.what());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) throw InvalidUsage("the agent was destroyed");
  const rma::RegionRef ref = core_.regions.add(buf, bytes, kind);
  Registration r{ref.slot, ref.generation, static_cast<unsigned char*>(buf), bytes, kind, shared};
  regions_[r.id] = r;
  ++sequence_;
  return r;
}

void Agent::deregister(uint32_t id, uint32_t generation) {
  std::optional<device::GpuRuntime::IpcExport> shared;
  std::vector<std::shared_ptr<OutChannel>> channels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = regions_.find(id);
    if (it == regions_.end() || it->second.generation != generation)
      throw InvalidArgument(concat("region ", id, " is not registered (deregistered already?)"));
    shared = it->second.shared;
    regions_.erase(it);
    ++sequence_;
    for (auto& [name, p] : peers_)
      if (p.channel) channels.push_back(p.channel);
  }
  core_.regions.remove(rma::RegionRef{id, generation}, core_.deadline());  // no transfer of it runs from here on
  if (shared) unmapAtPeers(*shared, channels);
}

void Agent::unmapAtPeers(const device::GpuRuntime::IpcExport& shared, const std::vector<std::shared_ptr<OutChannel>>& channels) {
  // Another registration in the same allocation may still be copied: the mapping closes only with the last.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [rid, r] : regions_)
      if (r.shared && r.shared->handle == shared.handle) return;
  }
  std::vector<std::pair<std::shared_ptr<OutChannel>, std::shared_ptr<Post>>> asked;
  for (const std::shared_ptr<OutChannel>& ch : channels) {
    auto p = std::make_shared<Post>();
    p->type = MsgType::Unmap;
    p->source.allocs.push_back(SourceAlloc{shared.handle, shared.allocBytes});
    p->deadline = core_.deadline();
    try {
      ch->submit(p);
    } catch (const InvalidUsage&) {
      continue;  // stopped: its connection is closed, and the peer closes its mappings with it
    }
    asked.emplace_back(ch, std::move(p));
  }
  std::string failed;
  for (const auto& [ch, p] : asked) {
    if (core_.awaitEnd(*p)) continue;
    std::lock_guard<std::mutex> lock(core_.mu);
    if (failed.empty()) failed = p->message.empty() ? concat(ch->label(), ": no answer") : p->message;
  }
  if (!failed.empty())
    throw PeerError(-1, "", concat("the registration has ended, but a peer did not confirm that it closed its mapping of the "
                                   "device allocation (which must not be freed while it may still be mapped): ", failed));
}

std::shared_ptr<Xfer> Agent::prepare(MsgType type, const std::string& peer, std::span<const Range> ranges,
                                     std::span<const unsigned char> notif) {
  if (type != MsgType::Read && type != MsgType::Write) throw InvalidArgument("op must be hetcclAgentRead or hetcclAgentWrite");
  if (ranges.empty()) throw InvalidArgument("no ranges");
  if (ranges.size() > kMaxRanges) throw InvalidArgument(concat(ranges.size(), " ranges; at most ", kMaxRanges));
  if (notif.size() > kMaxNotif) throw InvalidArgument(concat("notification of ", notif.size(), " bytes; at most ", kMaxNotif));
  auto x = std::make_shared<Xfer>();
  x->type = type;
  x->peer = peer;
  x->ranges.assign(ranges.begin(), ranges.end());
  x->notif.assign(notif.begin(), notif.end());
  x->remote.resize(ranges.size());
  std::lock_guard<std::mutex> lock(mu_);
  auto pit = peers_.find(peer);
  if (pit == peers_.end()) throw InvalidArgument(concat("no agent '", peer, "' is loaded (hetcclAgentLoadRemote)"));
  const Metadata& md = pit->second.md;
  x->incarnation = md.incarnation;
  std::map<uint32_t, const RegionInfo*> remote;
  for (const RegionInfo& r : md.regions) remote[r.id] = &r;
  std::map<uint32_t, uint32_t> localGen;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Range& r = ranges[i];
    if (r.bytes == 0) throw InvalidArgument(concat("range ", i, " has 0 bytes"));
    auto lit = regions_.find(r.localRegion);
    if (lit == regions_.end()) throw InvalidArgument(concat("range ", i, ": local region ", r.localRegion, " is not registered"));
    if (r.localOffset > lit->second.bytes || r.bytes > lit->second.bytes - r.localOffset)
      throw InvalidArgument(concat("range ", i, ": ", r.bytes, " bytes at offset ", r.localOffset, " lie outside local region ",
                                   r.localRegion, " of ", lit->second.bytes, " bytes"));
    auto rit = remote.find(r.remoteRegion);
    if (rit == remote.end())
      throw InvalidArgument(concat("range ", i, ": agent '", peer, "' lists no region ", r.remoteRegion,
                                   " in the metadata loaded here (registered later? load its newer blob)"));
    if (r.remoteOffset > rit->second->bytes || r.bytes > rit->second->bytes - r.remoteOffset)
      throw InvalidArgument(concat("range ", i, ": ", r.bytes, " bytes at offset ", r.remoteOffset, " lie outside region ",
                                   r.remoteRegion, " of agent '", peer, "' (", rit->second->bytes, " bytes)"));
    x->remote[i] = WireRange{r.remoteRegion, rit->second->generation, r.remoteOffset, r.bytes};
    localGen[r.localRegion] = lit->second.generation;
  }
  x->localGenerations.assign(localGen.begin(), localGen.end());
  if (md.hostId == core_.hostId) x->source = peerSourceOf(*x, remote);
  return x;
}

PeerSource Agent::peerSourceOf(const Xfer& x, const std::map<uint32_t, const RegionInfo*>& remote) const {
  // Every range between device memory of one vendor on both sides, every local region exported.
  PeerSource s;
  // Index in s.allocs by handle: registrations in one allocation share its entry (the handle names it).
  std::map<device::GpuRuntime::IpcHandle, uint32_t> allocOf;
  s.places.reserve(x.ranges.size());
  for (const Range& r : x.ranges) {
    const Registration& local = regions_.at(r.localRegion);
    if (!local.shared || !rma::isDevice(local.kind) || remote.at(r.remoteRegion)->kind != local.kind) return {};
    auto [it, added] = allocOf.emplace(local.shared->handle, static_cast<uint32_t>(s.allocs.size()));
    if (added) s.allocs.push_back(SourceAlloc{local.shared->handle, local.shared->allocBytes});
    s.places.push_back(SourcePlace{it->second, local.shared->offset + r.localOffset});
  }
  return s;
}

void Agent::holdLocal(const Xfer& x, Post& post) {
  std::map<uint32_t, std::vector<rma::WireRange>> byRegion;
  for (const Range& r : x.ranges) byRegion[r.localRegion].push_back(rma::WireRange{r.localOffset, r.bytes});
  std::map<uint32_t, unsigned char*> bases;
  std::map<uint32_t, rma::MemKind> kinds;
  for (const auto& [region, generation] : x.localGenerations) {
    const rma::RegionRef ref{region, generation};
    const rma::Access a = core_.regions.acquire(ref, byRegion[region]);
    if (a.status != rma::Status::Ok) {
      for (const rma::RegionRef& h : post.held) core_.regions.release(h);
      post.held.clear();
      throw InvalidArgument(concat("local region ", region, " was deregistered since this transfer was prepared"));
    }
    post.held.push_back(ref);
    bases[region] = a.base;
    kinds[region] = a.kind;
  }
  post.local.reserve(x.ranges.size());
  for (const Range& r : x.ranges)
    post.local.push_back(Segment{bases[r.localRegion] + r.localOffset, r.bytes, kinds[r.localRegion]});
}

std::shared_ptr<OutChannel> Agent::channelFor(const std::string& peer, const Incarnation& incarnation) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) throw InvalidUsage("the agent was destroyed");
  auto it = peers_.find(peer);
  if (it == peers_.end()) throw InvalidArgument(concat("agent '", peer, "' is not loaded (forgotten?)"));
  if (it->second.md.incarnation != incarnation)
    throw InvalidArgument(concat("agent '", peer, "' restarted since this transfer was prepared (a new incarnation was "
                                 "loaded): prepare it again"));
  if (!it->second.channel) it->second.channel = std::make_shared<OutChannel>(core_, it->second.md);
  return it->second.channel;
}

void Agent::post(Xfer& x) {
  {
    std::lock_guard<std::mutex> lock(core_.mu);
    if (x.last && (x.last->state == Post::State::Queued || x.last->state == Post::State::Running))
      throw InvalidUsage("the transfer's previous post is still running (check, wait or cancel it first)");
  }
  std::shared_ptr<OutChannel> ch = channelFor(x.peer, x.incarnation);
  auto p = std::make_shared<Post>();
  p->type = x.type;
  p->remote = x.remote;
  p->notif = x.notif;
  p->source = x.source;
  p->deadline = core_.deadline();
  holdLocal(x, *p);
  try {
    ch->submit(p);
  } catch (...) {
    for (const rma::RegionRef& h : p->held) core_.regions.release(h);
    throw;
  }
  std::lock_guard<std::mutex> lock(core_.mu);
  x.last = p;
  x.channel = ch;
}

Result Agent::outcome(const Xfer& x, std::string& message) const {
  if (!x.last) {
    message = "the transfer was never posted";
    return Result::InvalidUsage;
  }
  switch (x.last->state) {
    case Post::State::Queued:
    case Post::State::Running:
      return Result::InProgress;
    case Post::State::Done:
      return Result::Success;
    default:
      message = x.last->message;
      return x.last->code;
  }
}

Result Agent::check(const Xfer& x, std::string& message) {
  std::lock_guard<std::mutex> lock(core_.mu);
  return outcome(x, message);
}

Result Agent::wait(const Xfer& x, std::string& message) {
  std::unique_lock<std::mutex> lock(core_.mu);
  // Bounded by the post's deadline: its channel ends it by then (every socket and window wait has it).
  Result r;
  while ((r = outcome(x, message)) == Result::InProgress) core_.cv.wait_for(lock, std::chrono::milliseconds(100));
  return r;
}

void Agent::cancel(Xfer& x) {
  std::shared_ptr<Post> p;
  std::shared_ptr<OutChannel> ch;
  {
    std::lock_guard<std::mutex> lock(core_.mu);
    if (!x.last || (x.last->state != Post::State::Queued && x.last->state != Post::State::Running)) return;
    p = x.last;
    ch = x.channel;
  }
  ch->cancel(p);
}

void Agent::checkReleasable(const Xfer& x) {
  std::lock_guard<std::mutex> lock(core_.mu);
  if (x.last && (x.last->state == Post::State::Queued || x.last->state == Post::State::Running))
    throw InvalidUsage("the transfer is still running (cancel or wait for it first)");
}

std::shared_ptr<Xfer> Agent::prepareNotif(const std::string& peer, std::span<const unsigned char> msg) {
  if (msg.size() > kMaxNotif) throw InvalidArgument(concat("notification of ", msg.size(), " bytes; at most ", kMaxNotif));
  auto x = std::make_shared<Xfer>();
  x->type = MsgType::Notify;
  x->peer = peer;
  x->notif.assign(msg.begin(), msg.end());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) throw InvalidArgument(concat("no agent '", peer, "' is loaded (hetcclAgentLoadRemote)"));
  x->incarnation = it->second.md.incarnation;
  return x;
}

void Agent::genNotif(const std::string& peer, std::span<const unsigned char> msg) {
  const std::shared_ptr<Xfer> x = prepareNotif(peer, msg);
  post(*x);
  std::string message;
  const Result r = wait(*x, message);
  if (r != Result::Success) throw Error(r == Result::InvalidArgument ? Result::InvalidArgument : Result::RemoteError, message);
}

bool Agent::takeNotif(std::string& from, unsigned char* msg, size_t capacity, size_t& size, bool& got) {
  std::lock_guard<std::mutex> lock(core_.mu);
  got = !core_.notes.empty();
  if (!got) return true;
  Notification& n = core_.notes.front();
  size = n.message.size();
  from = n.from;
  if (size > capacity) return false;
  if (size) std::memcpy(msg, n.message.data(), size);
  core_.notes.pop_front();
  core_.cv.notify_all();
  return true;
}

}  // namespace hetccl::agent
