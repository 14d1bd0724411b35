// agent_push: the agent API (include/hetccl/hetccl_agent.h) from C++ -- a prefill engine pushes each layer's
// KV blocks into a decode engine's cache as the layer is done, two processes that share no communicator.
//
// Decode (the parent) registers its cache and hands its metadata blob and region id to prefill (a forked child)
// through a pipe, prefill its blob back through another (decode answers it); any channel does. Prefill prepares one write per layer ONCE -- the layer's blocks, contiguous
// on its side, land interleaved with the other layers' in decode's cache (a strided run) -- and then serves two
// requests with the same prepared writes: it fills its blocks, posts the layers' writes one after the other
// (they run while the next is posted), waits for them, and tells decode "request N" with a notification,
// which arrives after the data of every transfer posted before it. Decode checks every byte and answers
// "checked N", after which prefill may overwrite the cache with the next request. Every wait has a deadline.
// The handles are RAII wrappers (below); errors are exceptions carrying hetcclGetLastError's message.
//
//   c++ -std=c++17 -o agent_push agent_push.cc $(pkg-config --cflags --libs hetccl) && ./agent_push
//
// HETCCL_AGENT_WINDOW=off moves the bytes over the agents' tcp connection instead of shared-memory windows.
// Exit status 0 and "agent_push: PASS" when every byte of both requests arrived.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

namespace {

constexpr int kLayers = 4;
constexpr int kBlocks = 8;  // per layer and request
constexpr size_t kBlockBytes = 32 * 1024;
constexpr size_t kCacheBytes = size_t{kLayers} * kBlocks * kBlockBytes;
constexpr int kRequests = 2;
constexpr std::chrono::seconds kDeadline{60};
const std::string kSecret = "agent_push example secret: 32 B!";  // a deployment sets HETCCL_SECRET instead

using Clock = std::chrono::steady_clock;

void check(hetcclResult_t r, const std::string& what) {
  if (r != hetcclSuccess)
    throw std::runtime_error(what + ": " + hetcclGetErrorString(r) + ": " + hetcclGetLastError(nullptr));
}

// The byte at offset i of block b of layer l for request r.
uint8_t kvByte(int r, int l, int b, size_t i) {
  return static_cast<uint8_t>((r * 131u) ^ (l * 37u) ^ (b * 11u) ^ (i * 2654435761u >> 13));
}

// An agent, destroyed with its scope (its registrations and transfers go with it).
class Agent {
 public:
  explicit Agent(const std::string& name) {
    hetcclAgentOptions_t o;
    check(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
    o.secret = kSecret.data();
    o.secretBytes = kSecret.size();
    o.listenAddress = "127.0.0.1:0";
    o.timeoutSeconds = 30;  // every transfer and connection
    check(hetcclAgentCreate(name.c_str(), &o, &agent_), "hetcclAgentCreate(" + name + ")");
  }
  ~Agent() { hetcclAgentDestroy(agent_); }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  hetcclAgent_t get() const { return agent_; }

  std::string metadata() const {
    size_t bytes = 0;
    check(hetcclAgentGetMetadata(agent_, nullptr, &bytes), "hetcclAgentGetMetadata");
    std::string blob(bytes, '\0');
    check(hetcclAgentGetMetadata(agent_, blob.data(), &bytes), "hetcclAgentGetMetadata");
    return blob;
  }
  /// Loads a peer's blob; returns the peer's name.
  std::string load(const std::string& blob) const {
    char name[HETCCL_AGENT_NAME_MAX + 1];
    check(hetcclAgentLoadRemote(agent_, blob.data(), blob.size(), name), "hetcclAgentLoadRemote");
    return name;
  }
  void notify(const std::string& peer, const std::string& msg) const {
    check(hetcclAgentGenNotif(agent_, peer.c_str(), msg.data(), msg.size()), "hetcclAgentGenNotif");
  }
  /// Waits for the next notification; throws past the deadline or when it is not `msg` from `peer`.
  void expect(const std::string& peer, const std::string& msg) const {
    char from[HETCCL_AGENT_NAME_MAX + 1];
    std::string got(HETCCL_AGENT_NOTIF_MAX, '\0');
    const auto deadline = Clock::now() + kDeadline;
    for (;;) {
      size_t bytes = 0;
      int arrived = 0;
      check(hetcclAgentGetNotif(agent_, from, got.data(), got.size(), &bytes, &arrived), "hetcclAgentGetNotif");
      if (arrived) {
        got.resize(bytes);
        if (peer != from || got != msg)
          throw std::runtime_error("expected '" + msg + "' from " + peer + ", got '" + got + "' from " + from);
        return;
      }
      if (Clock::now() > deadline) throw std::runtime_error("no '" + msg + "' from " + peer + " in time");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

 private:
  hetcclAgent_t agent_ = nullptr;
};

// A registration; deregistered with its scope (before the memory it covers is freed).
class Registration {
 public:
  Registration(const Agent& agent, std::vector<uint8_t>& memory) {
    check(hetcclAgentRegister(agent.get(), memory.data(), memory.size(), &mem_, &id_), "hetcclAgentRegister");
  }
  ~Registration() { hetcclAgentDeregister(mem_); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  uint32_t id() const { return id_; }

 private:
  hetcclAgentMem_t mem_ = nullptr;
  uint32_t id_ = 0;
};

// A prepared transfer: posted any number of times, released with its scope.
class Transfer {
 public:
  Transfer(const Agent& agent, hetcclAgentOp_t op, const std::string& peer, const std::vector<hetcclAgentRange_t>& ranges) {
    check(hetcclAgentPrepXfer(agent.get(), op, peer.c_str(), ranges.data(), ranges.size(), nullptr, 0, &xfer_),
          "hetcclAgentPrepXfer");
  }
  ~Transfer() {
    if (hetcclAgentCheckXfer(xfer_) == hetcclInProgress) {  // unwinding from an error: stop it first
      hetcclAgentCancelXfer(xfer_);
      hetcclAgentWaitXfer(xfer_);
    }
    hetcclAgentReleaseXfer(xfer_);
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  void post() { check(hetcclAgentPostXfer(xfer_), "hetcclAgentPostXfer"); }
  void wait() { check(hetcclAgentWaitXfer(xfer_), "the transfer"); }  // bounded by the agent's timeout

 private:
  hetcclAgentXfer_t xfer_ = nullptr;
};

// The pipe between the processes: a length-prefixed string each way, read against a deadline.
void sendString(int fd, const std::string& s) {
  const uint64_t n = s.size();
  std::string frame(reinterpret_cast<const char*>(&n), sizeof n);
  frame += s;
  for (size_t done = 0; done < frame.size();) {
    const ssize_t w = write(fd, frame.data() + done, frame.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error("write to the pipe failed");
    done += static_cast<size_t>(w);
  }
}

void readExactly(int fd, char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0 || poll(&pfd, 1, static_cast<int>(left)) == 0) throw std::runtime_error("nothing on the pipe in time");
    const ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("the pipe closed early");
    p += got;
    n -= static_cast<size_t>(got);
  }
}

std::string receiveString(int fd) {
  const auto deadline = Clock::now() + kDeadline;
  uint64_t n = 0;
  readExactly(fd, reinterpret_cast<char*>(&n), sizeof n, deadline);
  if (n > (1u << 20)) throw std::runtime_error("implausible frame on the pipe");
  std::string s(n, '\0');
  readExactly(fd, s.data(), n, deadline);
  return s;
}

// Prefill: layer l's blocks are contiguous here; block b of layer l goes to slot b * kLayers + l of decode's cache.
void prefill(int in, int out) {
  Agent agent("prefill");
  std::vector<uint8_t> kv(kCacheBytes);
  Registration local(agent, kv);
  const uint32_t remoteRegion = static_cast<uint32_t>(std::stoul(receiveString(in)));
  const std::string decode = agent.load(receiveString(in));
  sendString(out, agent.metadata());
  close(out);

  std::vector<std::unique_ptr<Transfer>> layers;  // prepared once, posted for every request
  for (int l = 0; l < kLayers; ++l) {
    std::vector<hetcclAgentRange_t> ranges(kBlocks);
    check(hetcclAgentStridedRanges(ranges.data(), kBlocks, local.id(), l * kBlocks * kBlockBytes, kBlockBytes,
                                   remoteRegion, l * kBlockBytes, kLayers * kBlockBytes, kBlockBytes),
          "hetcclAgentStridedRanges");
    layers.push_back(std::make_unique<Transfer>(agent, hetcclAgentWrite, decode, ranges));
  }
  for (int r = 1; r <= kRequests; ++r) {
    for (int l = 0; l < kLayers; ++l) {  // "compute" layer l, then push it while the next one is computed
      for (int b = 0; b < kBlocks; ++b)
        for (size_t i = 0; i < kBlockBytes; ++i) kv[(static_cast<size_t>(l) * kBlocks + b) * kBlockBytes + i] = kvByte(r, l, b, i);
      layers[l]->post();
    }
    for (auto& t : layers) t->wait();
    agent.notify(decode, "request " + std::to_string(r));  // after the data of every transfer posted before
    agent.expect(decode, "checked " + std::to_string(r));  // decode is done with the cache
  }
}

// Decode: checks the cache after each request's notification and answers.
int decode(int out, int in, pid_t child) {
  Agent agent("decode");
  std::vector<uint8_t> cache(kCacheBytes);
  Registration region(agent, cache);
  sendString(out, std::to_string(region.id()));
  sendString(out, agent.metadata());
  close(out);
  const std::string prefill = agent.load(receiveString(in));  // to answer it
  size_t wrong = 0;
  for (int r = 1; r <= kRequests; ++r) {
    agent.expect(prefill, "request " + std::to_string(r));
    for (int b = 0; b < kBlocks; ++b)
      for (int l = 0; l < kLayers; ++l)
        for (size_t i = 0; i < kBlockBytes; ++i)
          wrong += cache[(static_cast<size_t>(b) * kLayers + l) * kBlockBytes + i] != kvByte(r, l, b, i);
    std::printf("agent_push decode: request %d: %d layers x %d blocks of %zu bytes pushed, %zu wrong\n", r, kLayers,
                kBlocks, kBlockBytes, wrong);
    agent.notify(prefill, "checked " + std::to_string(r));
  }
  int status = 0;
  const auto deadline = Clock::now() + kDeadline;
  pid_t w;
  while ((w = waitpid(child, &status, WNOHANG)) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (w != child) {
    kill(child, SIGKILL);
    throw std::runtime_error("prefill did not exit in time");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("prefill failed");
  if (wrong != 0) return 1;
  std::printf("agent_push: PASS\n");
  return 0;
}

}  // namespace

int main() {
  int down[2], up[2];  // decode -> prefill, prefill -> decode
  if (pipe(down) != 0 || pipe(up) != 0) return std::perror("pipe"), 1;
  std::fflush(stdout);
  const pid_t child = fork();  // before any agent exists: agents run threads
  if (child < 0) return std::perror("fork"), 1;
  if (child == 0) {
    close(down[1]);
    close(up[0]);
    try {
      prefill(down[0], up[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "agent_push prefill: %s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  try {
    return decode(down[1], up[0], child);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agent_push decode: %s\n", e.what());
    kill(child, SIGKILL);
    return 1;
  }
}
