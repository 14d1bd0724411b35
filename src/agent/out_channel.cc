#include "agent/out_channel.hpp"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "agent/handshake.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hetccl::agent {

std::string newWindowName() {
  std::array<unsigned char, 12> r{};
  bootstrap::randomBytes(r);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = concat("/", kWindowPrefix, getpid(), "-");
  for (unsigned char c : r) {
    name += kHex[c >> 4];
    name += kHex[c & 15];
  }
  return name;
}

size_t sweepOrphanWindows() noexcept {
  DIR* d = opendir("/dev/shm");
  if (!d) return 0;
  const std::string prefix = kWindowPrefix;
  size_t removed = 0;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(n.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || !end || *end != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    if (::shm_unlink(("/" + n).c_str()) == 0) ++removed;
  }
  closedir(d);
  return removed;
}

OutChannel::OutChannel(AgentCore& core, Metadata peer)
    : core_(core), peer_(std::move(peer)), label_(concat("agent '", peer_.name, "' at ", peer_.address)) {
  thread_ = std::thread([this] { run(); });
}

OutChannel::~OutChannel() { stop("destroyed"); }

void OutChannel::submit(const std::shared_ptr<Post>& post) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) throw InvalidUsage(concat(label_, ": ", stopWhy_));
  queue_.push_back(post);
  cv_.notify_all();
}

void OutChannel::cancel(const std::shared_ptr<Post>& post) {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it)
    if (*it == post) {
      queue_.erase(it);
      lock.unlock();
      core_.finish(*post, Post::State::Cancelled, Result::InvalidUsage, "cancelled");
      return;
    }
  post->cancel.store(true);
}

void OutChannel::stop(const std::string& why) {
  std::deque<std::shared_ptr<Post>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stopWhy_ = why;
      stopFlag_.store(true);
      dropped.swap(queue_);
      if (sock_.valid()) ::shutdown(sock_.fd(), SHUT_RDWR);  // wakes the thread out of any socket wait
    }
    cv_.notify_all();
  }
  for (auto& p : dropped) core_.finish(*p, Post::State::Failed, Result::RemoteError, concat(label_, ": ", why));
  if (thread_.joinable()) thread_.join();
}

void OutChannel::run() {
  if (core_.memory->hasGpu()) core_.memory->bindThread();
  std::deque<InFlight> inflight;  // sent, answers pending, in post order
  for (;;) {
    std::shared_ptr<Post> post;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty() || !inflight.empty(); });
      if (stopping_) break;
      // The next post goes now unless the answers of those in flight must come first: a full window, or a
      // post that cannot be sent before them (pipelinable() says which can).
      if (!queue_.empty() && (inflight.empty() || (inflight.size() < kMaxInFlight && pipelinable(*queue_.front())))) {
        post = queue_.front();
        queue_.pop_front();
        running_ = post;
      }
    }
    if (!post) {
      takeAnswer(inflight);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(core_.mu);
      post->state = Post::State::Running;
    }
    bool sent = false;
    try {
      if (post->cancel.load()) throw AbortedError("cancelled");
      if (inflight.empty()) {
        if (sock_.valid() && closedByPeer()) disconnect();  // it left (or restarted) since the last post
        // An Unmap needs no connection of its own: the target's mappings end with the connection.
        if (!sock_.valid() && post->type != MsgType::Unmap) connect();
      }
      if (sock_.valid() && pipelinable(*post)) {
        inflight.push_back(InFlight{post, send(*post)});
        sent = true;
      } else {
        execute(*post);
      }
    } catch (const std::exception& e) {
      const Ended end = failure(*post, e);
      if (end.disconnect) failInFlight(inflight, end);
      finish(post, end);
      continue;
    }
    if (!sent) finish(post, Ended{});
  }
  Ended stopped;
  stopped.state = Post::State::Failed;
  stopped.message = concat(label_, ": ", stopWhy_);
  failInFlight(inflight, stopped);
  disconnect();
}

bool OutChannel::pipelinable(const Post& post) const {
  return (post.type == MsgType::Write || post.type == MsgType::Notify) && !(peerCopy_ && !post.source.empty());
}

OutChannel::Ended OutChannel::failure(const Post& post, const std::exception& ex) {
  Ended end;
  end.disconnect = true;
  const auto* e = dynamic_cast<const Error*>(&ex);
  if (!e) {
    end.state = Post::State::Failed;
    end.code = Result::InternalError;
    end.message = concat(label_, ": internal error: ", ex.what());
    disconnect();
    return end;
  }
  const bool cancelled = post.cancel.load() && !stopFlag_.load();
  end.state = cancelled ? Post::State::Cancelled : Post::State::Failed;
  end.code = cancelled ? Result::InvalidUsage : (e->code() == Result::InvalidArgument ? Result::InvalidArgument : Result::RemoteError);
  end.message = cancelled ? std::string("cancelled")
                : stopFlag_.load() ? concat(label_, ": ", stopWhy_)
                : std::string(e->what()).find(label_) != std::string::npos ? std::string(e->what())
                : concat(label_, ": ", e->what());
  // The connection may be mid-message: never reuse it. A refusal (InvalidArgument) left it in step.
  end.disconnect = e->code() != Result::InvalidArgument || cancelled;
  if (end.disconnect) disconnect();
  if (!cancelled && !stopFlag_.load()) HETCCL_INFO(log::kNet, "agent '", core_.name, "': transfer to ", label_, " failed: ", e->what());
  return end;
}

void OutChannel::finish(const std::shared_ptr<Post>& post, const Ended& end) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ == post) running_.reset();
  }
  core_.finish(*post, end.state, end.code, end.message);
}

void OutChannel::takeAnswer(std::deque<InFlight>& inflight) {
  const InFlight f = inflight.front();
  inflight.pop_front();
  try {
    checkReply(*f.post, recvReply(f.id, f.post->deadline));
  } catch (const std::exception& e) {
    const Ended end = failure(*f.post, e);
    if (end.disconnect) failInFlight(inflight, end);
    finish(f.post, end);
    return;
  }
  finish(f.post, Ended{});
}

void OutChannel::failInFlight(std::deque<InFlight>& inflight, const Ended& cause) {
  // Sent before the connection closed, unanswered: they may or may not have taken effect at the target.
  const std::string why = cause.state == Post::State::Cancelled
                              ? concat(label_, ": the connection was closed to cut off a cancelled transfer")
                              : cause.message;
  for (const InFlight& f : inflight) {
    Ended end;
    end.state = Post::State::Failed;
    end.code = Result::RemoteError;
    end.message = concat(why, " (before this transfer was answered)");
    finish(f.post, end);
  }
  inflight.clear();
}

void OutChannel::connect() {
  const Deadline deadline = core_.deadline();
  net::Socket sock = net::Socket::connect(net::SocketAddress::parse(peer_.address), deadline, /*retryRefused=*/false);
  sock.setKeepalive(core_.timeoutMs);
  InitiatorOffer offer;
  offer.name = core_.name;
  offer.self = core_.incarnation;
  offer.expected = peer_.incarnation;
  std::unique_ptr<rma::Window> out, back;
  offer.wantWindows = core_.windows && peer_.hostId == core_.hostId;
  offer.offerPeerCopy = core_.peerCopy && peer_.hostId == core_.hostId;
  offer.offerUcx = core_.ucx && peer_.hostId != core_.hostId && !ucxFailed_ && core_.net->usable();
  offer.createOut = [&]() -> std::string {
    try {
      const std::string name = newWindowName();
      out = rma::Window::create(name, 0, 1, core_.windowSlots, core_.windowSlotBytes, core_.memory->gpu());
      return name;
    } catch (const Error& e) {
      HETCCL_INFO(log::kNet, "agent '", core_.name, "': no shared-memory window towards ", label_, " (", e.what(),
                  "): the socket carries the data");
      return {};
    }
  };
  offer.openBack = [&](const std::string& name) {
    try {
      back = rma::Window::open(name, 1, 0, core_.memory->gpu());
      return true;
    } catch (const Error& e) {
      HETCCL_INFO(log::kNet, "agent '", core_.name, "': cannot map the window of ", label_, " (", e.what(), ")");
      return false;
    }
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) throw AbortedError(stopWhy_);
    sock_ = std::move(sock);  // stop() can shut it down from now on
  }
  const InitiatorOutcome o = initiatorHandshake(sock_, core_.key, offer, deadline, label_);
  outMapped_ = o.outWindowMapped;
  backMapped_ = o.backWindowMapped;
  out_ = outMapped_ ? std::move(out) : nullptr;
  back_ = backMapped_ ? std::move(back) : nullptr;
  peerCopy_ = o.peerCopy && !peerCopyRefused_;
  if (o.ucx) {
    try {
      net_ = core_.net->initiate(sock_, deadline, label_, peer_.hostId);
    } catch (const Error& e) {
      // This post fails (the connection is not in step any more); the next ones connect again over tcp.
      ucxFailed_ = true;
      HETCCL_WARN(log::kNet, "agent '", core_.name, "': the ucx set-up with ", label_, " failed (", e.what(),
                  "): tcp carries the payload to it from the next transfer on");
      throw;
    }
  }
  const char* over = net_ ? "over ucx" : "over tcp";
  HETCCL_INFO(log::kNet, "agent '", core_.name, "': connected to ", label_, "; data ",
              outMapped_ ? std::string("written through a shared-memory window") : concat("written ", over), ", ",
              backMapped_ ? std::string("read through a shared-memory window") : concat("read ", over),
              peerCopy_ ? "; device memory copied device to device by the target" : "");
}

bool OutChannel::closedByPeer() const {
  // The target never sends unprompted: between posts, readable means closed (EOF) or broken.
  pollfd p{sock_.fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

CopyEngine* OutChannel::engine() {
  if (!core_.memory->hasGpu()) return nullptr;
  if (!engine_) engine_ = std::make_unique<CopyEngine>(core_.memory->gpu());
  return engine_.get();
}

void OutChannel::disconnect() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  sock_.close();
  net_.close();
  out_.reset();
  back_.reset();
  outMapped_ = backMapped_ = peerCopy_ = false;
  mappedAtPeer_.clear();  // the target closes its mappings when the connection ends
}

void OutChannel::checkReply(const Post& post, const Reply& reply) const {
  const auto status = static_cast<rma::Status>(reply.status);
  if (status == rma::Status::Ok) return;
  const WireRange* r = reply.badIndex < post.remote.size() ? &post.remote[reply.badIndex] : nullptr;
  const std::string range = r ? concat("range ", reply.badIndex, " (region ", r->region, ", offset ", r->offset, ", ",
                                       r->bytes, " bytes)")
                              : std::string("a range");
  switch (status) {
    case rma::Status::Stale:
      throw InvalidArgument(concat(label_, " refused ", range, ": the region was deregistered (stale; load its new metadata)"));
    case rma::Status::Unknown:
      throw InvalidArgument(concat(label_, " refused ", range, ": no such region"));
    case rma::Status::OutOfBounds:
      throw InvalidArgument(concat(label_, " refused ", range, ": outside the region of ", reply.regionBytes, " bytes"));
    default:
      throw PeerError(-1, "", concat(label_, " could not apply ", range, " (status ", reply.status, ")"));
  }
}

Reply OutChannel::recvReply(uint64_t id, const Deadline& d) {
  Reply reply;
  sock_.recvAll(&reply, sizeof reply, d, label_);
  if (reply.magic != kMsgMagic) throw PeerError(-1, "", concat(label_, ": malformed reply"));
  if (reply.id != id) throw PeerError(-1, "", concat(label_, ": reply to request ", reply.id, ", expected ", id));
  return reply;
}

void OutChannel::notifyAfterRead(Post& post, const Deadline& d) {
  if (post.notif.empty()) return;
  MsgHeader n;
  n.type = static_cast<uint32_t>(MsgType::Notify);
  n.id = nextId_++;
  n.notifBytes = static_cast<uint32_t>(post.notif.size());
  sock_.sendAll(&n, sizeof n, d, label_);
  sock_.sendAll(post.notif.data(), post.notif.size(), d, label_);
  checkReply(post, recvReply(n.id, d));
}

void OutChannel::executeUnmap(Post& post, const Deadline& d) {
  const device::GpuRuntime::IpcHandle& handle = post.source.allocs.at(0).handle;
  auto it = std::find(mappedAtPeer_.begin(), mappedAtPeer_.end(), handle);
  if (it == mappedAtPeer_.end()) return;  // never sent on this connection: nothing to close
  MsgHeader h;
  h.type = static_cast<uint32_t>(MsgType::Unmap);
  h.id = nextId_++;
  const std::vector<unsigned char> source = encodeSource(post.source);
  sock_.sendAll(&h, sizeof h, d, label_);
  sock_.sendAll(source.data(), source.size(), d, label_);
  checkReply(post, recvReply(h.id, d));
  mappedAtPeer_.erase(it);
}

uint64_t OutChannel::sendRequest(const Post& post, uint32_t flags, const Deadline& d) {
  MsgHeader h;
  h.type = static_cast<uint32_t>(post.type);
  h.id = nextId_++;
  h.flags = flags;
  h.nranges = post.remote.size();
  for (const WireRange& r : post.remote) h.totalBytes += r.bytes;
  // A read's notification follows the data as a Notify of its own.
  h.notifBytes = post.type != MsgType::Read ? static_cast<uint32_t>(post.notif.size()) : 0;
  sock_.sendAll(&h, sizeof h, d, label_);
  if (!post.remote.empty()) sock_.sendAll(post.remote.data(), post.remote.size() * sizeof(WireRange), d, label_);
  if (h.notifBytes) sock_.sendAll(post.notif.data(), h.notifBytes, d, label_);
  return h.id;
}

bool OutChannel::executeCopiedByTarget(Post& post, const Deadline& d) {
  const std::vector<unsigned char> source = encodeSource(post.source);
  // From here the target may map any of them, whatever it answers: each is closed at deregistration.
  for (const SourceAlloc& a : post.source.allocs)
    if (std::find(mappedAtPeer_.begin(), mappedAtPeer_.end(), a.handle) == mappedAtPeer_.end()) mappedAtPeer_.push_back(a.handle);
  const uint64_t id = sendRequest(post, kCopiedByTarget, d);
  sock_.sendAll(source.data(), source.size(), d, label_);
  const Reply reply = recvReply(id, d);
  if (reply.status == kStatusCannotCopy) {
    HETCCL_INFO(log::kNet, "agent '", core_.name, "': ", label_,
                " cannot map this agent's device memory: its transfers take the window or the socket from now on");
    peerCopyRefused_ = true;
    peerCopy_ = false;
    return false;
  }
  checkReply(post, reply);
  if (post.type == MsgType::Read) notifyAfterRead(post, d);  // the target's copies completed before it answered
  return true;
}

uint64_t OutChannel::send(Post& post) {
  const Deadline d = post.deadline;
  const uint64_t id = sendRequest(post, 0, d);
  if (post.type == MsgType::Write)
    PayloadLink(sock_, outMapped_ ? out_.get() : nullptr, *core_.memory, engine(), label_, &net_)
        .ofWrite()
        .send(post.local, d, stopCheck(post));
  return id;
}

void OutChannel::execute(Post& post) {
  const Deadline d = post.deadline;
  if (post.type == MsgType::Unmap) return executeUnmap(post, d);
  if (peerCopy_ && !post.source.empty() && executeCopiedByTarget(post, d)) return;
  if (post.type != MsgType::Read) {  // the target could not copy it: the ordinary way
    const uint64_t id = send(post);
    return checkReply(post, recvReply(id, d));
  }
  const uint64_t id = sendRequest(post, 0, d);
  checkReply(post, recvReply(id, d));
  PayloadLink(sock_, backMapped_ ? back_.get() : nullptr, *core_.memory, engine(), label_, &net_)
      .recv(post.local, d, stopCheck(post));
  notifyAfterRead(post, d);
}

std::function<void()> OutChannel::stopCheck(const Post& post) const {
  return [this, &post] {
    if (stopFlag_.load()) throw AbortedError(stopWhy_);
    if (post.cancel.load()) throw AbortedError("cancelled");
  };
}

}  // namespace hetccl::agent
