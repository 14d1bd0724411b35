// The fake HIP runtime's IPC memory handles (tests/fake_hip/api_ipc.cc), called directly (dlopen of the fake,
// no plugin). A block hipMalloc'ed here is opened by a peer process (this binary again, `--scenario
// fake_ipc_peer`, driven one command line at a time over a socket pair) and each side sees the other's
// writes; handles of the same process, stale handles (freed block, reused fd number, exporter gone), garbage
// and wrong flags are refused; address ranges; the liveIpcMappings counter; failure injection.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "hip_types.hpp"
#include "ipc_handle.hpp"

extern char** environ;

namespace hip_test {
namespace {

using fakehip::hipIpcMemHandle_t;
using fakehip::IpcHandlePayload;

/// The fake's functions these cases call, from FAKEHIP_LIB (the same library the plugin opens).
struct FakeHip {
  int (*hipSetDevice)(int);
  int (*hipMalloc)(void**, size_t);
  int (*hipFree)(void*);
  int (*hipHostMalloc)(void**, size_t, unsigned);
  int (*hipHostFree)(void*);
  int (*hipMemcpy)(void*, const void*, size_t, int);
  int (*hipPointerGetAttributes)(fakehip::hipPointerAttribute_t*, const void*);
  int (*hipIpcGetMemHandle)(hipIpcMemHandle_t*, void*);
  int (*hipIpcOpenMemHandle)(void**, hipIpcMemHandle_t, unsigned);
  int (*hipIpcCloseMemHandle)(void*);
  int (*hipMemGetAddressRange)(void**, size_t*, void*);
  void (*stats)(fakehipStats_t*);
  void (*failCall)(const char*, int, int);

  fakehipStats_t snapshot() const {
    fakehipStats_t s{};
    stats(&s);
    return s;
  }
};

template <typename F>
void bind(void* lib, F*& f, const char* name) {
  f = reinterpret_cast<F*>(dlsym(lib, name));
  if (!f) {
    std::fprintf(stderr, "%s has no %s\n", FAKEHIP_LIB, name);
    std::abort();
  }
}

const FakeHip& hip() {
  static const FakeHip h = [] {
    void* lib = dlopen(FAKEHIP_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "cannot open the fake runtime: %s\n", dlerror());
      std::abort();
    }
    FakeHip x{};
    bind(lib, x.hipSetDevice, "hipSetDevice");
    bind(lib, x.hipMalloc, "hipMalloc");
    bind(lib, x.hipFree, "hipFree");
    bind(lib, x.hipHostMalloc, "hipHostMalloc");
    bind(lib, x.hipHostFree, "hipHostFree");
    bind(lib, x.hipMemcpy, "hipMemcpy");
    bind(lib, x.hipPointerGetAttributes, "hipPointerGetAttributes");
    bind(lib, x.hipIpcGetMemHandle, "hipIpcGetMemHandle");
    bind(lib, x.hipIpcOpenMemHandle, "hipIpcOpenMemHandle");
    bind(lib, x.hipIpcCloseMemHandle, "hipIpcCloseMemHandle");
    bind(lib, x.hipMemGetAddressRange, "hipMemGetAddressRange");
    bind(lib, x.stats, "fakehipStats");
    bind(lib, x.failCall, "fakehipFailCall");
    return x;
  }();
  return h;
}

std::string hex(const hipIpcMemHandle_t& h) {
  std::string s;
  char b[3];
  for (char c : h.reserved) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
    s += b;
  }
  return s;
}

hipIpcMemHandle_t unhex(const std::string& s) {
  hipIpcMemHandle_t h{};
  for (size_t i = 0; i < sizeof h.reserved && 2 * i + 1 < s.size(); ++i)
    h.reserved[i] = static_cast<char>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return h;
}

// Device memory through the fake's copies (explicit kinds: the fake refuses a "device" side that is not
// device memory).
int fillDevice(void* dst, size_t bytes, unsigned char value) {
  std::vector<unsigned char> host(bytes, value);
  return hip().hipMemcpy(dst, host.data(), bytes, fakehip::hipMemcpyHostToDevice);
}
bool deviceHolds(const void* src, size_t bytes, unsigned char value) {
  std::vector<unsigned char> host(bytes, static_cast<unsigned char>(~value));
  if (hip().hipMemcpy(host.data(), src, bytes, fakehip::hipMemcpyDeviceToHost) != fakehip::hipSuccess) return false;
  for (unsigned char c : host)
    if (c != value) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------
// The peer: a process of its own, with the fake loaded fresh. Commands (one line each, answered by one line
// of numbers): device D | open HEX FLAGS -> rc index devPtrNull | fill I OFF LEN BYTE | check I OFF LEN BYTE
// -> rc allBytesMatch | attr I OFF -> rc type device | range I OFF -> rc baseMinusMapping size | close I OFF |
// free I | stats -> liveIpcMappings injectedFailures liveDeviceAllocs | fail NAME NTH CODE | quit.
// I is the index of a successful open; OFF an offset into that mapping.

bool readLine(int fd, std::string* buffer, std::string* line, int timeoutMs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  for (;;) {
    if (const size_t nl = buffer->find('\n'); nl != std::string::npos) {
      *line = buffer->substr(0, nl);
      buffer->erase(0, nl + 1);
      return true;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char b[512];
    const ssize_t n = read(fd, b, sizeof b);
    if (n <= 0) return false;
    buffer->append(b, static_cast<size_t>(n));
  }
}

bool writeLine(int fd, const std::string& text) {
  const std::string line = text + "\n";
  return send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
}

using Env = std::vector<std::pair<std::string, std::string>>;

class Peer {
 public:
  /// Starts the peer with this environment plus `env` (FAKEHIP_* knobs for its own fake).
  explicit Peer(const Env& env = {}) {
    // Everything the child needs is built before fork: between fork and execve it only calls dup2 and
    // execve (this process has the fake's stream threads, whose locks a forked child must not touch).
    for (char** e = environ; *e; ++e) vars_.emplace_back(*e);
    for (const auto& [k, v] : env) vars_.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& v : vars_) envp.push_back(v.data());
    envp.push_back(nullptr);
    const char* argv[] = {"unit_hip_plugin", "--scenario", "fake_ipc_peer", nullptr};
    // This binary's path, not /proc/self/exe itself: under valgrind that is the tool (readlink is emulated).
    char self[4096] = {};
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(sv[1], 0);  // the copies lose CLOEXEC: the peer's stdin and stdout are the socket
      dup2(sv[1], 1);
      execve(self, const_cast<char**>(argv), envp.data());
      _exit(127);
    }
    close(sv[1]);
    fd_ = sv[0];
    if (pid_ < 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~Peer() { finish(); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  /// Sends one command; its answer's first `n` numbers (each -999 when the peer did not answer: a failure).
  std::vector<long long> ask(const std::string& command, size_t n = 1) {
    std::vector<long long> values(n, -999);
    std::string line;
    if (fd_ < 0 || !writeLine(fd_, command) || !readLine(fd_, &buffer_, &line, 5000)) {
      ADD_FAILURE() << "the peer did not answer `" << command << "`";
      return values;
    }
    std::istringstream in(line);
    for (size_t i = 0; i < n; ++i)
      if (!(in >> values[i])) ADD_FAILURE() << "`" << command << "` answered `" << line << "`";
    return values;
  }
  int ask1(const std::string& command) { return static_cast<int>(ask(command, 1)[0]); }

  /// Ends the peer; its exit status (-1 when it had to be killed).
  int finish() {
    if (pid_ <= 0) return -1;
    if (fd_ >= 0) {
      writeLine(fd_, "quit");
      close(fd_);
      fd_ = -1;
    }
    int status = 0, result = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = 0;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (WIFEXITED(status)) result = WEXITSTATUS(status);
    pid_ = 0;
    return result;
  }

 private:
  std::vector<std::string> vars_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
};

std::string openCommand(const hipIpcMemHandle_t& h, unsigned flags = fakehip::hipIpcMemLazyEnablePeerAccess) {
  return "open " + hex(h) + " " + std::to_string(flags);
}

/// A hipMalloc block of this process and its handle.
struct ExportedBlock {
  void* p = nullptr;
  size_t size = 0;
  hipIpcMemHandle_t handle{};
  explicit ExportedBlock(size_t bytes, unsigned char fill) : size(bytes) {
    EXPECT_EQ(hip().hipSetDevice(0), 0);
    EXPECT_EQ(hip().hipMalloc(&p, bytes), fakehip::hipSuccess);
    EXPECT_EQ(fillDevice(p, bytes, fill), fakehip::hipSuccess);
    EXPECT_EQ(hip().hipIpcGetMemHandle(&handle, p), fakehip::hipSuccess);
  }
  ~ExportedBlock() { free(); }
  void free() {
    if (p) {
      EXPECT_EQ(hip().hipFree(p), fakehip::hipSuccess);
    }
    p = nullptr;
  }
  char* at(size_t offset) const { return static_cast<char*>(p) + offset; }
};

// ---------------------------------------------------------------------------------------------------

TEST(FakeHipIpc, PeerProcessSharesTheBlockBothWays) {
  const size_t size = 3 * 4096 + 123, half = size / 2;  // not whole pages
  const std::string sizeText = std::to_string(size), halfText = std::to_string(half);
  constexpr int kExported = 0x11, kPeerWrote = 0x22, kThenWrote = 0x33;  // the bytes each step leaves
  ExportedBlock block(size, kExported);
  Peer peer;
  ASSERT_EQ(peer.ask1("device 1"), 0);
  const auto opened = peer.ask(openCommand(block.handle), 3);
  ASSERT_EQ(opened[0], fakehip::hipSuccess);
  ASSERT_EQ(opened[1], 0);
  EXPECT_EQ(peer.ask("stats", 3), (std::vector<long long>{1, 0, 0})) << "liveIpcMappings 1, not a device allocation";

  // The peer reads what this process wrote before exporting, as device memory of its current device.
  EXPECT_EQ(peer.ask("check 0 0 " + sizeText + " " + std::to_string(kExported), 2), (std::vector<long long>{0, 1}));
  EXPECT_EQ(peer.ask("attr 0 100", 3), (std::vector<long long>{0, fakehip::hipMemoryTypeDevice, 1}));
  const std::vector<long long> wholeBlock{0, 0, static_cast<long long>(size)};
  EXPECT_EQ(peer.ask("range 0 " + std::to_string(size - 1), 3), wholeBlock);
  EXPECT_EQ(peer.ask("range 0 4096", 3), wholeBlock);

  // Writes cross both ways while the mapping is open.
  EXPECT_EQ(peer.ask1("fill 0 " + halfText + " " + std::to_string(size - half) + " " + std::to_string(kPeerWrote)), 0);
  EXPECT_TRUE(deviceHolds(block.at(half), size - half, kPeerWrote)) << "this process does not see the peer's write";
  EXPECT_TRUE(deviceHolds(block.p, half, kExported));
  ASSERT_EQ(fillDevice(block.p, 100, kThenWrote), 0);
  EXPECT_EQ(peer.ask("check 0 0 100 " + std::to_string(kThenWrote), 2), (std::vector<long long>{0, 1}))
      << "the peer does not see this process's write";
  EXPECT_EQ(peer.ask("check 0 100 " + std::to_string(half - 100) + " " + std::to_string(kExported), 2),
            (std::vector<long long>{0, 1}));

  // Only hipIpcCloseMemHandle at the mapping's base releases it; once.
  EXPECT_EQ(peer.ask1("free 0"), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(peer.ask1("close 0 64"), fakehip::hipErrorInvalidHandle);
  EXPECT_EQ(peer.ask1("close 0 0"), fakehip::hipSuccess);
  EXPECT_EQ(peer.ask("stats", 1)[0], 0) << "liveIpcMappings after the close";
  EXPECT_EQ(peer.ask1("close 0 0"), fakehip::hipErrorInvalidHandle);
  EXPECT_EQ(peer.ask1("range 0 0"), fakehip::hipErrorNotFound);
  EXPECT_EQ(peer.finish(), 0);
  EXPECT_TRUE(deviceHolds(block.at(half), size - half, kPeerWrote)) << "the peer's bytes outlive its mapping";
}

TEST(FakeHipIpc, HandleOfTheSameProcessIsRefused) {
  ExportedBlock block(4096, 0);
  const uint64_t live = hip().snapshot().liveIpcMappings;
  void* p = block.p;
  EXPECT_EQ(hip().hipIpcOpenMemHandle(&p, block.handle, fakehip::hipIpcMemLazyEnablePeerAccess),
            fakehip::hipErrorInvalidContext);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(hip().snapshot().liveIpcMappings, live);
}

TEST(FakeHipIpc, GarbageHandlesAreRefused) {
  ExportedBlock block(4096, 0);
  void* p = nullptr;
  auto open = [&](const hipIpcMemHandle_t& h) {
    return hip().hipIpcOpenMemHandle(&p, h, fakehip::hipIpcMemLazyEnablePeerAccess);
  };
  hipIpcMemHandle_t zeros{}, noise;
  std::memset(noise.reserved, 0xAB, sizeof noise.reserved);
  EXPECT_EQ(open(zeros), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(open(noise), fakehip::hipErrorInvalidValue);
  IpcHandlePayload badMagic = fakehip::readIpcHandle(block.handle);
  badMagic.magic ^= 1;
  EXPECT_EQ(open(fakehip::makeIpcHandle(badMagic)), fakehip::hipErrorInvalidValue);
  IpcHandlePayload noSize = fakehip::readIpcHandle(block.handle);
  noSize.size = 0;
  EXPECT_EQ(open(fakehip::makeIpcHandle(noSize)), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(hip().hipIpcOpenMemHandle(nullptr, block.handle, fakehip::hipIpcMemLazyEnablePeerAccess),
            fakehip::hipErrorInvalidValue);
}

TEST(FakeHipIpc, OpenNeedsTheRuntimesLazyEnablePeerAccessFlag) {
  ExportedBlock block(4096, 0x5A);
  {
    Peer peer;  // ROCm 6.2 (the fake's default): 0x1, as CUDA
    for (unsigned flags : {0u, 2u, 3u})
      EXPECT_EQ(peer.ask1(openCommand(block.handle, flags)), fakehip::hipErrorInvalidValue) << flags;
    EXPECT_EQ(peer.ask("stats", 1)[0], 0);
    EXPECT_EQ(peer.ask1(openCommand(block.handle, 1)), fakehip::hipSuccess);
    EXPECT_EQ(peer.ask("check 0 0 4096 " + std::to_string(0x5A), 2), (std::vector<long long>{0, 1}));
    EXPECT_EQ(peer.ask1("close 0 0"), fakehip::hipSuccess);
    EXPECT_EQ(peer.finish(), 0);
  }
  Peer rocm5(Env{{"FAKEHIP_VERSION", "50700"}});  // ROCm 5 headers define the flag as 0
  EXPECT_EQ(rocm5.ask1(openCommand(block.handle, 1)), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(rocm5.ask1(openCommand(block.handle, fakehip::hipIpcMemLazyEnablePeerAccess_v5)), fakehip::hipSuccess);
  EXPECT_EQ(rocm5.ask1("close 0 0"), fakehip::hipSuccess);
  EXPECT_EQ(rocm5.finish(), 0);
}

TEST(FakeHipIpc, StaleHandlesAreRefused) {
  ExportedBlock a(8192, 0x44);
  const hipIpcMemHandle_t staleA = a.handle;
  Peer peer;
  ASSERT_EQ(peer.ask1(openCommand(staleA)), fakehip::hipSuccess);

  // Freeing the block closes its fd: the handle no longer opens, the peer's mapping keeps the bytes. (Real
  // runtimes leave this undefined: the fake counts it.)
  const uint64_t freedWhileMapped = hip().snapshot().freedWhileMapped;
  a.free();
  EXPECT_EQ(hip().snapshot().freedWhileMapped, freedWhileMapped + 1) << "a free under a peer's mapping not counted";
  EXPECT_EQ(peer.ask("check 0 0 8192 " + std::to_string(0x44), 2), (std::vector<long long>{0, 1}));
  EXPECT_EQ(peer.ask1(openCommand(staleA)), fakehip::hipErrorInvalidDevicePointer);

  // The next block gets the freed fd number: the stale handle names it, yet is still refused (another inode).
  ExportedBlock b(8192, 0x55);
  ASSERT_EQ(fakehip::readIpcHandle(b.handle).fd, fakehip::readIpcHandle(staleA).fd)
      << "the new block did not reuse the fd number: the reuse case is not staged";
  EXPECT_EQ(peer.ask1(openCommand(staleA)), fakehip::hipErrorInvalidDevicePointer);
  const auto openedB = peer.ask(openCommand(b.handle), 2);
  EXPECT_EQ(openedB, (std::vector<long long>{0, 1}));
  EXPECT_EQ(peer.ask("check 1 0 8192 " + std::to_string(0x55), 2), (std::vector<long long>{0, 1}));

  // An exporter that exited.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  IpcHandlePayload orphan = fakehip::readIpcHandle(b.handle);
  orphan.pid = gone;
  EXPECT_EQ(peer.ask1(openCommand(fakehip::makeIpcHandle(orphan))), fakehip::hipErrorInvalidDevicePointer);

  EXPECT_EQ(peer.ask1("close 1 0"), fakehip::hipSuccess);
  EXPECT_EQ(peer.ask1("close 0 0"), fakehip::hipSuccess);
  EXPECT_EQ(peer.ask("stats", 1)[0], 0);
  EXPECT_EQ(peer.finish(), 0);
}

TEST(FakeHipIpc, FreeingIsCountedOnlyWhileAPeerMapsTheBlock) {
  const uint64_t before = hip().snapshot().freedWhileMapped;
  ExportedBlock closedFirst(4096, 1), peerExited(4096, 2), mapped(4096, 3);
  {
    Peer peer;
    ASSERT_EQ(peer.ask1(openCommand(closedFirst.handle)), fakehip::hipSuccess);
    ASSERT_EQ(peer.ask1(openCommand(peerExited.handle)), fakehip::hipSuccess);
    ASSERT_EQ(peer.ask1(openCommand(mapped.handle)), fakehip::hipSuccess);
    ASSERT_EQ(peer.ask1("close 0 0"), fakehip::hipSuccess);
    closedFirst.free();
    EXPECT_EQ(hip().snapshot().freedWhileMapped, before) << "freed after the peer closed its mapping";
    mapped.free();
    EXPECT_EQ(hip().snapshot().freedWhileMapped, before + 1) << "freed while the peer maps it";
    EXPECT_EQ(peer.finish(), 0);  // exits with its mapping of peerExited open
  }
  peerExited.free();
  EXPECT_EQ(hip().snapshot().freedWhileMapped, before + 1) << "freed after the peer process exited";
}

TEST(FakeHipIpc, GetMemHandleNeedsTheBaseOfALiveBlock) {
  ExportedBlock block(3 * 4096, 0);
  hipIpcMemHandle_t h{};
  EXPECT_EQ(hip().hipIpcGetMemHandle(nullptr, block.p), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(hip().hipIpcGetMemHandle(&h, nullptr), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(hip().hipIpcGetMemHandle(&h, block.at(4096)), fakehip::hipErrorInvalidDevicePointer);
  int onStack = 0;
  EXPECT_EQ(hip().hipIpcGetMemHandle(&h, &onStack), fakehip::hipErrorInvalidDevicePointer);
  void* pinned = nullptr;
  ASSERT_EQ(hip().hipHostMalloc(&pinned, 4096, 0), fakehip::hipSuccess);
  EXPECT_EQ(hip().hipIpcGetMemHandle(&h, pinned), fakehip::hipErrorInvalidDevicePointer);
  EXPECT_EQ(hip().hipHostFree(pinned), fakehip::hipSuccess);
  void* freed = block.p;
  block.free();
  EXPECT_EQ(hip().hipIpcGetMemHandle(&h, freed), fakehip::hipErrorInvalidDevicePointer);
}

TEST(FakeHipIpc, CloseRefusesWhatWasNotOpened) {
  ExportedBlock block(4096, 0x66);
  int onStack = 0;
  EXPECT_EQ(hip().hipIpcCloseMemHandle(nullptr), fakehip::hipErrorInvalidValue);
  EXPECT_EQ(hip().hipIpcCloseMemHandle(block.p), fakehip::hipErrorInvalidHandle);
  EXPECT_EQ(hip().hipIpcCloseMemHandle(&onStack), fakehip::hipErrorInvalidHandle);
  EXPECT_TRUE(deviceHolds(block.p, 4096, 0x66)) << "a refused close touched the block";
}

TEST(FakeHipIpc, AddressRangeOfInteriorPointers) {
  ExportedBlock block(10000, 0);
  for (size_t offset : {0u, 1u, 4096u, 9999u}) {
    void* base = nullptr;
    size_t size = 0;
    EXPECT_EQ(hip().hipMemGetAddressRange(&base, &size, block.at(offset)), fakehip::hipSuccess) << offset;
    EXPECT_EQ(base, block.p) << offset;
    EXPECT_EQ(size, 10000u) << offset;
  }
  void* base = nullptr;
  size_t size = 0;
  EXPECT_EQ(hip().hipMemGetAddressRange(&base, nullptr, block.at(5)), fakehip::hipSuccess);
  EXPECT_EQ(base, block.p);
  EXPECT_EQ(hip().hipMemGetAddressRange(nullptr, &size, block.at(5)), fakehip::hipSuccess);
  EXPECT_EQ(size, 10000u);
  EXPECT_EQ(hip().hipMemGetAddressRange(&base, &size, block.at(10000)), fakehip::hipErrorNotFound);
  int onStack = 0;
  EXPECT_EQ(hip().hipMemGetAddressRange(&base, &size, &onStack), fakehip::hipErrorNotFound);
  EXPECT_EQ(hip().hipMemGetAddressRange(&base, &size, nullptr), fakehip::hipErrorNotFound);
  // Pinned host memory is a memory object too (ROCm finds every one).
  void* pinned = nullptr;
  ASSERT_EQ(hip().hipHostMalloc(&pinned, 3000, 0), fakehip::hipSuccess);
  EXPECT_EQ(hip().hipMemGetAddressRange(&base, &size, static_cast<char*>(pinned) + 2999), fakehip::hipSuccess);
  EXPECT_EQ(base, pinned);
  EXPECT_EQ(size, 3000u);
  EXPECT_EQ(hip().hipHostFree(pinned), fakehip::hipSuccess);
}

TEST(FakeHipIpc, InjectedOpenFailures) {
  ExportedBlock block(4096, 0x77);
  // In this process: the injection comes before the handle is looked at, and is not sticky.
  const uint64_t injected = hip().snapshot().injectedFailures;
  void* p = nullptr;
  hip().failCall("hipIpcOpenMemHandle", 1, fakehip::hipErrorOutOfMemory);
  EXPECT_EQ(hip().hipIpcOpenMemHandle(&p, block.handle, 1), fakehip::hipErrorOutOfMemory);
  EXPECT_EQ(hip().hipIpcOpenMemHandle(&p, block.handle, 1), fakehip::hipErrorInvalidContext);
  EXPECT_EQ(hip().snapshot().injectedFailures, injected + 1);

  // In a peer, on a handle that opens: the usual failure (a failed attach), then the N-th call with a code.
  Peer peer;
  EXPECT_EQ(peer.ask1("fail hipIpcOpenMemHandle 1 0"), 0);
  EXPECT_EQ(peer.ask(openCommand(block.handle), 2),
            (std::vector<long long>{fakehip::hipErrorInvalidDevicePointer, -1}));
  EXPECT_EQ(peer.ask("stats", 2), (std::vector<long long>{0, 1}));
  EXPECT_EQ(peer.ask1("fail hipIpcOpenMemHandle 2 999"), 0);
  EXPECT_EQ(peer.ask1(openCommand(block.handle)), fakehip::hipSuccess);
  EXPECT_EQ(peer.ask1(openCommand(block.handle)), 999);
  EXPECT_EQ(peer.ask(openCommand(block.handle), 2), (std::vector<long long>{0, 1}));
  EXPECT_EQ(peer.ask("stats", 2), (std::vector<long long>{2, 2}));
  EXPECT_EQ(peer.ask1("close 0 0"), fakehip::hipSuccess);
  EXPECT_EQ(peer.ask1("close 1 0"), fakehip::hipSuccess);
  EXPECT_EQ(peer.finish(), 0);
}

TEST(FakeHipIpc, OpenWithoutADeviceFails) {
  ExportedBlock block(4096, 0);
  Peer peer(Env{{"FAKEHIP_NO_DEVICE", "1"}});
  EXPECT_EQ(peer.ask(openCommand(block.handle), 3), (std::vector<long long>{fakehip::hipErrorNoDevice, -1, 1}));
  EXPECT_EQ(peer.finish(), 0);
}

}  // namespace

// The peer's side (`unit_hip_plugin --scenario fake_ipc_peer`): stdin and stdout are the socket.
int fakeIpcPeer() {
  const FakeHip& h = hip();
  std::vector<char*> maps;
  std::string buffer, line;
  auto mapping = [&](std::istringstream& in) -> char* {
    size_t index = 0, offset = 0;
    in >> index >> offset;
    return index < maps.size() ? maps[index] + offset : nullptr;
  };
  while (readLine(0, &buffer, &line, 60000)) {
    std::istringstream in(line);
    std::string command;
    in >> command;
    std::ostringstream out;
    if (command == "device") {
      int d = 0;
      in >> d;
      out << h.hipSetDevice(d);
    } else if (command == "open") {
      std::string handle;
      unsigned flags = 0;
      in >> handle >> flags;
      void* p = reinterpret_cast<void*>(1);
      const int rc = h.hipIpcOpenMemHandle(&p, unhex(handle), flags);
      if (rc == fakehip::hipSuccess) maps.push_back(static_cast<char*>(p));
      out << rc << ' ' << (rc == fakehip::hipSuccess ? static_cast<long>(maps.size()) - 1 : -1L) << ' '
          << (p == nullptr);
    } else if (command == "fill" || command == "check") {
      char* p = mapping(in);
      size_t bytes = 0;
      int value = 0;
      in >> bytes >> value;
      if (command == "fill") {
        out << fillDevice(p, bytes, static_cast<unsigned char>(value));
      } else {
        std::vector<unsigned char> host(bytes);
        const int rc = h.hipMemcpy(host.data(), p, bytes, fakehip::hipMemcpyDeviceToHost);
        bool all = true;
        for (unsigned char c : host) all = all && c == value;
        out << rc << ' ' << all;
      }
    } else if (command == "attr") {
      fakehip::hipPointerAttribute_t a{};
      const int rc = h.hipPointerGetAttributes(&a, mapping(in));
      out << rc << ' ' << a.type << ' ' << a.device;
    } else if (command == "range") {
      size_t index = 0, offset = 0;
      in >> index >> offset;
      char* mapped = index < maps.size() ? maps[index] : nullptr;
      void* base = nullptr;
      size_t size = 0;
      const int rc = h.hipMemGetAddressRange(&base, &size, mapped ? mapped + offset : nullptr);
      out << rc << ' ' << (rc == fakehip::hipSuccess ? static_cast<char*>(base) - mapped : -1) << ' ' << size;
    } else if (command == "close") {
      out << h.hipIpcCloseMemHandle(mapping(in));
    } else if (command == "free") {
      size_t index = 0;
      in >> index;
      out << h.hipFree(index < maps.size() ? maps[index] : nullptr);
    } else if (command == "stats") {
      const fakehipStats_t s = h.snapshot();
      out << s.liveIpcMappings << ' ' << s.injectedFailures << ' ' << s.liveDeviceAllocs;
    } else if (command == "fail") {
      std::string name;
      int nth = 1, code = 0;
      in >> name >> nth >> code;
      h.failCall(name.c_str(), nth, code);
      out << 0;
    } else if (command == "quit") {
      return 0;
    } else {
      writeLine(1, "unknown command " + command);
      return 2;
    }
    if (!writeLine(1, out.str())) return 3;
  }
  return 0;
}

}  // namespace hip_test
