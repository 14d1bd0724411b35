#include "bootstrap_harness.hpp"

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "bootstrap/crypto.hpp"
#include "bootstrap/handshake.hpp"
#include "bootstrap/wire.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "net/free_port.hpp"

namespace hetccl::bootstrap::testing {

std::vector<JoinResult> joinAll(const UniqueId& id, int nranks, const JoinOptions& options) {
  std::vector<JoinResult> results(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      JoinResult& out = results[r];
      try {
        int n = nranks;
        PeerInfo self = detectSelf(r, DeviceKind::Host, -1);
        if (options.tweak) options.tweak(r, n, self);
        UniqueId mine = options.idFor ? options.idFor(r, id) : id;
        out.bootstrap = connectWithHooks(mine, r, n, self, Deadline::afterMs(options.deadlineMs), options.abortFlag,
                                         options.hooks);
      } catch (const InvalidUsage& e) {
        out = {nullptr, "InvalidUsage", e.what()};
      } catch (const InvalidArgument& e) {
        out = {nullptr, "InvalidArgument", e.what()};
      } catch (const TimeoutError& e) {
        out = {nullptr, "TimeoutError", e.what()};
      } catch (const AbortedError& e) {
        out = {nullptr, "AbortedError", e.what()};
      } catch (const PeerError& e) {
        out = {nullptr, "PeerError", e.what()};
      } catch (const std::exception& e) {
        out = {nullptr, "Error", e.what()};
      }
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

void onEveryRank(std::vector<JoinResult>& ranks, const std::function<void(int, Bootstrap&)>& body) {
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(static_cast<int>(r), *ranks[r].bootstrap);
      } catch (const std::exception& e) {
        ADD_FAILURE_AT(__FILE__, __LINE__) << "rank " << r << " threw: " << e.what();
      }
    });
  for (auto& t : threads) t.join();
}

uint16_t freeLoopbackPort() { return net::freeLoopbackAddress().port(); }

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  const char* old = std::getenv(name);
  hadOld_ = old != nullptr;
  if (old) old_ = old;
  if (value) setenv(name, value, 1);
  else unsetenv(name);
  reloadConfig();
  log::reload();
}

ScopedEnv::~ScopedEnv() {
  if (hadOld_) setenv(name_.c_str(), old_.c_str(), 1);
  else unsetenv(name_.c_str());
  reloadConfig();
  log::reload();
}

net::Socket rawConnect(const net::SocketAddress& to) { return net::Socket::connect(to, Deadline::afterMs(5000)); }

std::vector<net::Socket> passiveAttack(const net::SocketAddress& to, uint16_t purpose, int halfOpen) {
  std::vector<net::Socket> keep;
  Deadline d = Deadline::afterMs(5000);
  for (int i = 0; i < 200; ++i) rawConnect(to).close();

  net::Socket garbage = rawConnect(to);
  std::string junk(100, '\x7f');
  garbage.sendAll(junk.data(), junk.size(), d, "victim");
  keep.push_back(std::move(garbage));

  net::Socket http = rawConnect(to);
  std::string get = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n";
  http.sendAll(get.data(), get.size(), d, "victim");
  keep.push_back(std::move(http));

  // A well-formed hello from a client that does not know the secret, then a made-up proof.
  net::Socket forger = rawConnect(to);
  unsigned char hello[kClientHelloBytes] = {'H', 'C', 'H', 'S', 1, 0};
  wire::putU16(hello + 6, purpose);
  wire::putI32(hello + 8, 1000);  // a rank the mesh listener refuses; the root accepts any rank
  forger.sendAll(hello, sizeof hello, d, "victim");
  keep.push_back(std::move(forger));

  for (int i = 0; i < halfOpen; ++i) keep.push_back(rawConnect(to));
  return keep;
}

std::vector<net::Socket> activeAttack(const net::SocketAddress& to, uint16_t purpose, int claimedRank,
                                      const std::function<void()>& connected) {
  std::vector<net::Socket> keep;
  Deadline d = Deadline::afterMs(10000);
  unsigned char hello[kClientHelloBytes] = {'H', 'C', 'H', 'S', 1, 0};
  wire::putU16(hello + 6, purpose);
  wire::putI32(hello + 8, claimedRank);
  net::Socket forger2 = rawConnect(to);
  net::Socket wrong = rawConnect(to);
  connected();
  forger2.sendAll(hello, sizeof hello, d, "victim");
  unsigned char reply[kServerHelloBytes];
  try {
    forger2.recvAll(reply, sizeof reply, d, "victim");
    unsigned char proof[kProofBytes] = {1, 2, 3};
    forger2.sendAll(proof, sizeof proof, d, "victim");
  } catch (const Error&) {
    // refused before the proof (a rank the listener does not expect)
  }
  keep.push_back(std::move(forger2));

  // A genuine client with the wrong secret notices the server's proof is wrong.
  Secret other{};
  other.fill(0x42);
  try {
    authenticateAsClient(wrong, other, static_cast<Purpose>(purpose), claimedRank, -1, d, "victim");
    ADD_FAILURE() << "authentication with a wrong secret succeeded";
  } catch (const Error&) {
  }
  keep.push_back(std::move(wrong));
  return keep;
}

}  // namespace hetccl::bootstrap::testing
