// Helpers shared by the libFuzzer targets: a cursor over the fuzz input and a connected socket pair
// that feeds bytes to the parsers that read from sockets (incremental frame reader, handshake).
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "net/socket.hpp"

namespace hetccl::fuzz {

/// Consumes the fuzz input from the front: small integers, then byte runs.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  size_t left() const { return left_; }
  const uint8_t* data() const { return p_; }
  uint8_t byte() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  /// Up to `n` bytes (fewer at the end).
  std::string bytes(size_t n) {
    n = std::min(n, left_);
    std::string out(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return out;
  }
  std::string rest() { return bytes(left_); }

 private:
  const uint8_t* p_;
  size_t left_;
};

/// A connected AF_UNIX stream pair: `ours` is handed to the code under test, `theirs` plays the peer.
struct SocketPair {
  net::Socket ours;
  net::Socket theirs;
  SocketPair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    ours = net::Socket(fds[0]);
    theirs = net::Socket(fds[1]);
    int big = 1 << 20;  // inputs are capped below this, so writing them never blocks
    ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    ::setsockopt(fds[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  }
  /// Writes all of `bytes` from the peer's side (the pair's buffers hold them); false if it could not.
  bool feed(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::send(theirs.fd(), bytes.data() + off, bytes.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  /// The peer stops sending: further reads see end of file once the buffered bytes are consumed.
  void closePeerWrites() { ::shutdown(theirs.fd(), SHUT_WR); }
};

/// Inputs larger than this are ignored (keeps socket-fed targets from blocking).
inline constexpr size_t kMaxSocketInput = 64 * 1024;

}  // namespace hetccl::fuzz
