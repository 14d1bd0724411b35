// Helpers for transport tests: two ranks of one process (threads), connected through a real transport.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.hpp"
#include "transport/base/transport.hpp"

namespace hetccl::transport::testing {

/// "shm", "tcp", or "ucx" / "ucx_tcp" / "ucx_all" (UCX_TLS as set / tcp / all; sets UCX_TLS for the
/// process). Check ucxUnavailableReason() before asking for a ucx one.
std::unique_ptr<Transport> makeTransport(const std::string& name);

/// A token unique to this process and call; its first 8 hex digits are this process's pid (so a test can
/// find every shm segment it created).
uint64_t freshToken();

/// Rank `rank` of this process on the test host.
PeerInfo localRank(int rank);

/// One connection from rank `from` to rank `to`, both in this process.
struct Link {
  std::unique_ptr<Listener> listener;  // the receiver's
  std::unique_ptr<SendConn> send;
  std::unique_ptr<RecvConn> recv;
};
Link connectPair(Transport& t, int from, int to, const std::atomic<bool>* abortFlag = nullptr);

/// Calls test(r) until it returns true; fails the test (and returns false) after `ms` milliseconds.
template <typename Conn>
bool waitDone(Conn& conn, Request r, int64_t ms = 20000) {
  Deadline d = Deadline::afterMs(ms);
  while (!conn.test(r)) {
    if (d.expired()) {
      ADD_FAILURE() << "request " << r << " did not complete within " << ms << " ms";
      return false;
    }
    std::this_thread::yield();  // the peer thread may share this core
  }
  return true;
}

/// Deterministic byte pattern, different for each (seed, index).
inline unsigned char patternByte(uint64_t seed, size_t i) {
  return static_cast<unsigned char>((i * 131u + seed * 7919u + (i >> 8) * 17u) & 0xff);
}
std::vector<unsigned char> patternBuffer(uint64_t seed, size_t bytes);

/// Sends `data` over `link` while receiving into a buffer of the same size on another thread; returns it.
std::vector<unsigned char> transfer(Link& link, const std::vector<unsigned char>& data);

}  // namespace hetccl::transport::testing
