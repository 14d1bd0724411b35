// Socket and Listener: connect with retry, deadline-bounded exact I/O, non-blocking partial I/O.
//
// Every send/recv here passes MSG_DONTWAIT (and MSG_NOSIGNAL) and waits with poll(), so the calls behave
// the same whether the descriptor is in blocking mode or not. Connected and accepted sockets are handed
// out in blocking mode with TCP_NODELAY and close-on-exec.
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/error.hpp"
#include "net/socket.hpp"

namespace hetccl::net {
namespace {

constexpr int kIoFlags = MSG_DONTWAIT | MSG_NOSIGNAL;

/// The descriptors Sockets own, for the fork handlers (see Socket).
struct Owned {
  std::mutex mutex;
  std::unordered_set<int> fds;
};

void abandonInChild();

Owned& owned() {
  static Owned* o = [] {
    auto* x = new Owned;  // never destroyed: Sockets close during static destruction too
    pthread_atfork([] { owned().mutex.lock(); }, [] { owned().mutex.unlock(); }, &abandonInChild);
    return x;
  }();
  return *o;
}

/// fork() child (one thread, the mutex held since the prepare handler): every owned socket becomes
/// /dev/null, so the parent's peers see EOF when the parent dies, however long the child lives.
void abandonInChild() {
  Owned& o = owned();
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd : o.fds) {
    if (null < 0 || ::dup3(null, fd, O_CLOEXEC) < 0) ::close(fd);  // no /dev/null: the number may be reused
  }
  if (null >= 0) ::close(null);
  o.mutex.unlock();
}

void setNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    throw SystemError::fromErrno("setsockopt(TCP_NODELAY)", errno);
}

void setFlag(int fd, int flag, bool on) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) throw SystemError::fromErrno("fcntl(F_GETFL)", errno);
  int wanted = on ? (flags | flag) : (flags & ~flag);
  if (wanted != flags && fcntl(fd, F_SETFL, wanted) != 0) throw SystemError::fromErrno("fcntl(F_SETFL)", errno);
}

/// Waits until `fd` is ready for `events` or the deadline passes. Returns false on timeout.
bool waitFor(int fd, short events, const Deadline& deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.remainingMs());
    if (rc > 0) return true;
    if (rc == 0) {
      if (deadline.expired()) return false;
      continue;  // poll's millisecond rounding woke us a little early
    }
    if (errno != EINTR) throw SystemError::fromErrno("poll", errno);
  }
}

bool peerWentAway(int err) { return err == ECONNRESET || err == EPIPE || err == ENOTCONN; }

[[noreturn]] void throwIoError(const char* what, int err, const std::string& peer) {
  if (peerWentAway(err)) throw PeerError(-1, "", concat(what, " ", peer, " failed: ", std::strerror(err)));
  throw SystemError::fromErrno(concat(what, " ", peer), err);
}

/// One non-blocking connect attempt. Returns 0 on success, else the errno of the failure.
int connectOnce(int fd, const SocketAddress& to, const Deadline& deadline) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to.storage), to.length) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  if (!waitFor(fd, POLLOUT, deadline)) return ETIMEDOUT;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

bool worthRetrying(int err) {
  return err == ECONNREFUSED || err == ECONNRESET || err == ECONNABORTED || err == EAGAIN || err == EINTR ||
         err == ETIMEDOUT;
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.release();
  }
  return *this;
}

Socket::Socket(int fd) : fd_(fd) {
  if (fd_ < 0) return;
  Owned& o = owned();
  std::lock_guard lock(o.mutex);
  o.fds.insert(fd_);
}

Socket::~Socket() { close(); }

void Socket::close() noexcept {
  if (fd_ < 0) return;
  {
    Owned& o = owned();
    std::lock_guard lock(o.mutex);
    o.fds.erase(fd_);
    ::close(fd_);  // inside the lock: a fork between erase and close would leave the child a live copy
  }
  fd_ = -1;
}

Socket Socket::connect(const SocketAddress& to, Deadline deadline, bool retryRefused) {
  int backoffMs = 5;
  while (true) {
    Socket s(::socket(to.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!s.valid()) throw SystemError::fromErrno("socket", errno);
    int err = connectOnce(s.fd(), to, deadline);
    if (err == 0) {
      setNoDelay(s.fd());
      s.setNonBlocking(false);
      return s;
    }
    if (err == ECONNREFUSED && !retryRefused)
      throw PeerError(-1, "", concat("connect to ", to.toString(), " refused: nothing listens there"));
    if (!worthRetrying(err)) throw SystemError::fromErrno(concat("connect to ", to.toString()), err);
    if (deadline.expired())
      throw TimeoutError(-1, "", concat("connect to ", to.toString(), ": deadline passed (last error: ",
                                        std::strerror(err), ")"));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(backoffMs, deadline.remainingMs())));
    backoffMs = std::min(backoffMs * 2, 200);
  }
}

void Socket::sendAll(const void* data, size_t bytes, Deadline deadline, const std::string& peer) const {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    size_t n = sendSome(p, bytes, peer);
    p += n;
    bytes -= n;
    if (bytes > 0 && n == 0 && !waitFor(fd_, POLLOUT, deadline))
      throw TimeoutError(-1, "", concat(peer, ": send timed out with ", bytes, " bytes left"));
  }
}

void Socket::recvAll(void* data, size_t bytes, Deadline deadline, const std::string& peer) const {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    size_t n = recvSome(p, bytes, peer);
    p += n;
    bytes -= n;
    if (bytes > 0 && n == 0 && !waitFor(fd_, POLLIN, deadline))
      throw TimeoutError(-1, "", concat(peer, ": receive timed out with ", bytes, " bytes missing"));
  }
}

size_t Socket::sendSome(const void* data, size_t bytes, const std::string& peer, bool more) const {
  if (bytes == 0) return 0;
  while (true) {
    ssize_t n = ::send(fd_, data, bytes, kIoFlags | (more ? MSG_MORE : 0));
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    throwIoError("send to", errno, peer);
  }
}

size_t Socket::recvSome(void* data, size_t bytes, const std::string& peer) const {
  if (bytes == 0) return 0;
  while (true) {
    ssize_t n = ::recv(fd_, data, bytes, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) throw PeerError(-1, "", concat(peer, ": connection closed"));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    throwIoError("recv from", errno, peer);
  }
}

void Socket::setNonBlocking(bool on) const { setFlag(fd_, O_NONBLOCK, on); }

void Socket::setKeepalive(int64_t timeoutMs) const {
  if (timeoutMs <= 0) return;
  const int64_t seconds = (timeoutMs + 999) / 1000;
  int on = 1;
  int idle = static_cast<int>(std::clamp<int64_t>((seconds + 1) / 2, 1, 32767));
  int interval = static_cast<int>(std::clamp<int64_t>((seconds + 5) / 6, 1, 32767));
  int count = 3;
  unsigned userTimeout = static_cast<unsigned>(std::min<int64_t>(timeoutMs, UINT32_MAX));
  (void)setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  (void)setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  (void)setsockopt(fd_, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  (void)setsockopt(fd_, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  (void)setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeout, sizeof userTimeout);
}

void Socket::setBufferSizes(int bytes) const {
  if (bytes <= 0) return;
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0)
    throw SystemError::fromErrno("setsockopt(SO_SNDBUF)", errno);
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) != 0)
    throw SystemError::fromErrno("setsockopt(SO_RCVBUF)", errno);
}

SocketAddress Socket::peerAddress() const {
  SocketAddress a;
  a.length = sizeof a.storage;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&a.storage), &a.length) != 0)
    throw SystemError::fromErrno("getpeername", errno);
  return a;
}

Listener::Listener(const SocketAddress& at, int backlog) {
  socket_ = Socket(::socket(at.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket_.valid()) throw SystemError::fromErrno("socket", errno);
  int one = 1;
  if (setsockopt(socket_.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
    throw SystemError::fromErrno("setsockopt(SO_REUSEADDR)", errno);
  if (::bind(socket_.fd(), reinterpret_cast<const sockaddr*>(&at.storage), at.length) != 0) {
    const int err = errno;
    if (err == EADDRINUSE)
      throw SystemError(concat("bind ", at.toString(), ": ", std::strerror(err),
                               ": another program (or another job) holds port ", at.port(), " on this host"));
    throw SystemError::fromErrno(concat("bind ", at.toString()), err);
  }
  if (::listen(socket_.fd(), backlog) != 0) throw SystemError::fromErrno(concat("listen on ", at.toString()), errno);
  address_.length = sizeof address_.storage;
  if (getsockname(socket_.fd(), reinterpret_cast<sockaddr*>(&address_.storage), &address_.length) != 0)
    throw SystemError::fromErrno("getsockname", errno);
}

Socket Listener::accept(Deadline deadline) const {
  while (true) {
    Socket s = tryAccept();
    if (s.valid()) return s;
    if (!waitFor(socket_.fd(), POLLIN, deadline))
      throw TimeoutError(-1, "", concat("no connection arrived at ", address_.toString(), " before the deadline"));
  }
}

Socket Listener::tryAccept() const {
  while (true) {
    Socket s(::accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (s.valid()) {
      int one = 1;  // best effort: a client that already reset makes this fail, and the first I/O reports it
      (void)setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return s;
    }
    int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) return Socket();
    // A client that reset before we accepted it, or a transient network error: try the next one.
    if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == ENETDOWN || err == EHOSTUNREACH ||
        err == ENETUNREACH)
      continue;
    if (err == EMFILE || err == ENFILE)
      throw DescriptorsExhausted(SystemError::fromErrno(concat("accept on ", address_.toString()), err).what());
    throw SystemError::fromErrno(concat("accept on ", address_.toString()), err);
  }
}

}  // namespace hetccl::net
