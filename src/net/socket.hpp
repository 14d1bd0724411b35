// Thin RAII layer over POSIX TCP sockets, shared by the bootstrap and the tcp transport.
// Every call that can block takes a Deadline; failures throw SystemError / TimeoutError / PeerError.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "core/error.hpp"

namespace hetccl::net {

/// An IPv4 or IPv6 address with port, stored as sockaddr_storage.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  /// Parses "1.2.3.4:5678", "[::1]:5678" or "host:port" (resolved). Throws InvalidArgument.
  static SocketAddress parse(const std::string& text);
  /// "1.2.3.4:5678" / "[::1]:5678".
  std::string toString() const;
  uint16_t port() const;
  void setPort(uint16_t port);
  bool isLoopback() const;
};

/// The address this process should bind: HETCCL_SOCKET_IFNAME if set, else the first non-loopback
/// interface that is up, else loopback. Port 0. Throws InvalidArgument when HETCCL_SOCKET_IFNAME leaves
/// no interface (syntax in local_address.cc).
SocketAddress chooseLocalAddress();

/// One address of an interface that is up.
struct InterfaceAddress {
  std::string name;
  SocketAddress address;
};
/// chooseLocalAddress() over a given interface list (kernel order) and filter text ("" = no filter).
SocketAddress chooseLocalAddressFrom(const std::vector<InterfaceAddress>& interfaces, const std::string& filterText);

/// The names of the interfaces in `interfaces` that filter `filterText` (HETCCL_SOCKET_IFNAME syntax, not
/// empty) accepts, each once, in the list's order. Throws InvalidArgument on a filter naming nothing.
std::vector<std::string> interfacesAllowedBy(const std::vector<InterfaceAddress>& interfaces, const std::string& filterText);
/// interfacesAllowedBy(the interfaces that are up, HETCCL_SOCKET_IFNAME); empty when HETCCL_SOCKET_IFNAME
/// is not set (no restriction).
std::vector<std::string> allowedInterfaces();
/// Whether `name` passes filter `filterText` (HETCCL_SOCKET_IFNAME syntax).
bool interfaceAllowed(const std::string& name, const std::string& filterText);

/// accept() failed with EMFILE / ENFILE: this process (or the system) has no file descriptor left. The
/// message carries the limit and what to do (fileLimitAdvice).
class DescriptorsExhausted : public SystemError {
 public:
  using SystemError::SystemError;
};

/// An owned file descriptor of a connected stream socket.
///
/// Fork: every descriptor a Socket owns is listed process-wide; in a child made by fork() each is
/// replaced by /dev/null (pthread_atfork), so a live child never keeps a connection of its parent open
/// (the peer sees EOF when the parent dies, issue 27 item 5) and cannot write into it. The child's
/// objects still own the numbers and close /dev/null when destroyed.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd);
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  /// Connects (non-blocking connect + poll) and retries refused connections until the deadline
  /// (the peer may not be listening yet). TCP_NODELAY set, close-on-exec. With `retryRefused` false a
  /// refusal (nothing listens there: the process is gone) throws PeerError at once instead.
  static Socket connect(const SocketAddress& to, Deadline deadline, bool retryRefused = true);

  /// Writes/reads exactly `bytes` or throws (SystemError on error, PeerError("connection closed") on
  /// EOF, TimeoutError at the deadline). `peer` names the other end in error messages.
  void sendAll(const void* data, size_t bytes, Deadline deadline, const std::string& peer) const;
  void recvAll(void* data, size_t bytes, Deadline deadline, const std::string& peer) const;

  /// Non-blocking partial I/O for progress loops: returns bytes moved (0 when it would block).
  /// Throws on error or EOF (recv). `more` (MSG_MORE): more data follows at once, so a small header
  /// and its payload leave in one segment.
  size_t sendSome(const void* data, size_t bytes, const std::string& peer, bool more = false) const;
  size_t recvSome(void* data, size_t bytes, const std::string& peer) const;

  /// Lets the kernel notice a peer host that vanished (no reset, no answer) after about `timeoutMs`
  /// and never sooner: TCP keepalive probes (idle ~timeout/2, then 3 probes ~timeout/6 apart) and
  /// TCP_USER_TIMEOUT = timeoutMs (unacknowledged data). The next I/O then fails with ETIMEDOUT.
  /// Best effort: options the kernel lacks are skipped.
  void setKeepalive(int64_t timeoutMs) const;

  void setNonBlocking(bool on) const;
  void setBufferSizes(int bytes) const;  ///< SO_SNDBUF/SO_RCVBUF (0 = leave the kernel's)
  SocketAddress peerAddress() const;
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  /// Gives the descriptor up without closing it; it stays listed for fork (hand it to another Socket).
  int release() noexcept {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void close() noexcept;

 private:
  int fd_ = -1;
};

/// A listening socket bound to one address (never SO_REUSEPORT), close-on-exec.
class Listener {
 public:
  /// Binds `at` (port 0 = ephemeral) with the given backlog.
  explicit Listener(const SocketAddress& at, int backlog = 512);
  Listener(Listener&&) noexcept = default;
  Listener& operator=(Listener&&) noexcept = default;

  /// The bound address (with the real port).
  const SocketAddress& address() const { return address_; }
  /// Accepts one connection, waiting until the deadline; throws TimeoutError when none arrives.
  Socket accept(Deadline deadline) const;
  /// Accepts one connection if one is pending, else returns an invalid Socket. Throws
  /// DescriptorsExhausted when no descriptor is left for it (EMFILE / ENFILE), SystemError otherwise.
  Socket tryAccept() const;
  int fd() const { return socket_.fd(); }
  /// Stops listening (later connections are refused); address() stays as it was.
  void close() noexcept { socket_.close(); }

 private:
  Socket socket_;
  SocketAddress address_;
};

}  // namespace hetccl::net
