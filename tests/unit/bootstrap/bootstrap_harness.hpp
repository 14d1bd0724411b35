// Threads-as-ranks harness for the bootstrap tests: join N ranks in one process, run a body on every
// rank in parallel, open raw (possibly hostile) client connections.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/join.hpp"
#include "core/config.hpp"
#include "net/socket.hpp"

namespace hetccl::bootstrap::testing {

/// What connect() gave one rank: a bootstrap, or the exception's type and text.
struct JoinResult {
  std::unique_ptr<Bootstrap> bootstrap;
  std::string errorType;  // "", "InvalidUsage", "InvalidArgument", "TimeoutError", "AbortedError", "PeerError", "Error"
  std::string error;
};

struct JoinOptions {
  int deadlineMs = 20000;
  /// Per-rank (rank, nranks, self) edits before connect: mismatched sizes, versions, hosts.
  std::function<void(int rank, int& nranks, PeerInfo& self)> tweak;
  /// Per-rank UniqueId override (wrong secrets).
  std::function<UniqueId(int rank, const UniqueId& id)> idFor;
  ConnectHooks hooks;
  const std::atomic<bool>* abortFlag = nullptr;
};

/// Runs connect() for `nranks` threads (rank r = thread r) and waits for all of them.
std::vector<JoinResult> joinAll(const UniqueId& id, int nranks, const JoinOptions& options = {});

/// Runs `body(rank, bootstrap)` on one thread per rank and joins them.
void onEveryRank(std::vector<JoinResult>& ranks, const std::function<void(int, Bootstrap&)>& body);

/// A port on 127.0.0.1 that was free a moment ago, below the ephemeral range (net/free_port.hpp; for
/// launcher ids, whose port must be fixed).
uint16_t freeLoopbackPort();

/// Sets HETCCL_TIMEOUT (seconds) and reloads the configuration; restores the old value on destruction.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();

 private:
  std::string name_;
  std::string old_;
  bool hadOld_;
};

/// A raw client connection for hostile tests (connect only; the caller writes what it likes).
net::Socket rawConnect(const net::SocketAddress& to);

/// Hostile connections that need no answer: 200 connect+close, garbage bytes, an HTTP GET, a forged
/// hello, and `halfOpen` connections that never send anything. Returns the ones kept open.
std::vector<net::Socket> passiveAttack(const net::SocketAddress& to, uint16_t purpose, int halfOpen);
/// Handshakes that wait for the server's reply: a forged proof, and a client with a wrong secret (which
/// must notice the server's proof does not match). Both connect first, then `connected` is called, then
/// they wait for replies (up to 10 s), so the server must get to serving them.
/// Both claim rank `claimedRank`.
std::vector<net::Socket> activeAttack(const net::SocketAddress& to, uint16_t purpose, int claimedRank,
                                      const std::function<void()>& connected = [] {});

}  // namespace hetccl::bootstrap::testing
