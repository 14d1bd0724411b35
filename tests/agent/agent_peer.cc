// agent_peer: one agent of a scenario of the agent API (include/hetccl/hetccl_agent.h), one process per agent,
// started by run_agent_scenarios.py. Written against the public headers only (hetccl_agent.h, and hetccl.h for
// hetcclGetLastError), linked to the shared library.
//
//   agent_peer ROLE --scenario S --dir DIR --name NAME [--peer NAME] [--seed N] [--timeout S] [--deadline S] ...
//
// Agents publish DIR/<name>.meta (their region ids and sizes, then the metadata blob; written to FILE.tmp and
// renamed) and signal each other through small files in DIR; every wait polls with a deadline. Every verdict
// comes from data this program computes itself: the bytes a target must hold are pat(seed, offset) of a seed
// and an offset both sides derive from the scenario's plan, untouched bytes must keep the canary 0xC5, and
// notifications are compared byte for byte. A failure prints "<tag>: FAIL (step ...): what" and exits 1; a
// watchdog ends the process with exit status 3 when --deadline seconds pass, naming the step it was in.
// Success prints "<tag>: OK ..." and exits 0.
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the pattern helpers assume a little-endian host");

namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint8_t kCanary = 0xC5;
constexpr uint64_t kCanaryWord = 0xC5C5C5C5C5C5C5C5ull;
constexpr int kMemHost = 0;  // hetcclMemHost (hetccl_rma.h), the kind hetcclAgentMemQuery reports for host memory

// The deployment's secret of every test agent (32 bytes); run_agent_scenarios.py passes the same bytes,
// hex-encoded, as HETCCL_SECRET to the roles that read it from the environment (--secret env).
const std::string kSecret = "hetccl-agent-ci-secret-32-bytes!";
// Another deployment's secret (32 bytes): its blobs must be refused.
const std::string kOtherSecret = "another-deployment-secret-32b-!!";

// ------------------------------------------------------------------------------------------ reporting

std::string gTag = "agent_peer";
std::atomic<const char*> gStep{"start"};

void step(const char* s) { gStep.store(s); }

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

__attribute__((format(printf, 1, 2))) void note(const char* fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("%s: %s\n", gTag.c_str(), buf);
  std::fflush(stdout);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char* fmt, ...) {
  char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("%s: FAIL (step: %s): %s\n", gTag.c_str(), gStep.load(), buf);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(1);
}

int pass(const std::string& what) {
  std::printf("%s: OK %s\n", gTag.c_str(), what.c_str());
  std::fflush(stdout);
  return 0;
}

double mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wallClock() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void napMicros(int us) { usleep(static_cast<useconds_t>(us)); }

// Ends the process (exit status 3) when `seconds` pass, whatever it is blocked in.
void startWatchdog(double seconds) {
  std::thread([seconds] {
    const double end = mono() + seconds;
    while (mono() < end) napMicros(50000);
    std::printf("%s: FAIL (step: %s): the role's deadline of %.0f s passed (a call or a wait hung)\n", gTag.c_str(),
                gStep.load(), seconds);
    std::fflush(stdout);
    _exit(3);
  }).detach();
}

const char* codeName(hetcclResult_t r) {
  switch (r) {
    case hetcclSuccess: return "hetcclSuccess";
    case hetcclUnhandledCudaError: return "hetcclUnhandledCudaError";
    case hetcclSystemError: return "hetcclSystemError";
    case hetcclInternalError: return "hetcclInternalError";
    case hetcclInvalidArgument: return "hetcclInvalidArgument";
    case hetcclInvalidUsage: return "hetcclInvalidUsage";
    case hetcclRemoteError: return "hetcclRemoteError";
    case hetcclInProgress: return "hetcclInProgress";
    default: return "(unknown result code)";
  }
}

hetcclResult_t codeByName(const std::string& s) {
  for (int i = 0; i < hetcclNumResults; ++i)
    if (s == codeName(static_cast<hetcclResult_t>(i))) return static_cast<hetcclResult_t>(i);
  die("unknown result code name '%s'", s.c_str());
}

std::string lastError() {
  const char* m = hetcclGetLastError(nullptr);
  return m ? m : "";
}

void ok(hetcclResult_t r, const std::string& what) {
  if (r != hetcclSuccess) die("%s: %s (%d): %s", what.c_str(), codeName(r), static_cast<int>(r), lastError().c_str());
}

// A call that must be refused with `want` and a message; returns the message.
std::string refused(hetcclResult_t r, hetcclResult_t want, const std::string& what) {
  const std::string msg = lastError();
  if (r != want)
    die("%s: expected %s, got %s (%d); last error: %s", what.c_str(), codeName(want), codeName(r), static_cast<int>(r),
        msg.c_str());
  if (msg.empty()) die("%s: %s as expected, but hetcclGetLastError gives no message", what.c_str(), codeName(r));
  note("refused as expected: %s: %s: %s", what.c_str(), codeName(r), msg.c_str());
  return msg;
}

void mustName(const std::string& msg, const std::string& name, const std::string& what) {
  if (msg.find(name) == std::string::npos)
    die("%s: the message does not name agent '%s': %s", what.c_str(), name.c_str(), msg.c_str());
}

std::string hexPrefix(const std::string& s, size_t n = 24) {
  std::string out;
  char b[4];
  for (size_t i = 0; i < s.size() && i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(s[i]));
    out += b;
  }
  if (s.size() > n) out += "...";
  return out;
}

// ------------------------------------------------------------------------------------------ arguments

struct Args {
  std::string role;
  std::map<std::string, std::string> kv;

  bool has(const char* k) const { return kv.count(k) != 0; }
  std::string str(const char* k) const {
    auto it = kv.find(k);
    if (it == kv.end()) die("missing argument --%s", k);
    return it->second;
  }
  std::string str(const char* k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  double num(const char* k, double def) const { return has(k) ? std::strtod(str(k).c_str(), nullptr) : def; }
  long long integer(const char* k, long long def) const {
    return has(k) ? std::strtoll(str(k).c_str(), nullptr, 10) : def;
  }
};

struct Ctx {
  Args args;
  std::string scenario, name, dir;
  uint64_t seed = 1;
  double timeout = 20;  // options.timeoutSeconds of this agent
  double wait = 30;     // how long one wait for another process may last

  std::string path(const std::string& file) const { return dir + "/" + file; }
  std::string peer() const { return args.str("peer"); }
};

// The path the scenario runs on (--path, from the driver): window -- agents of one host map shared-memory
// windows (/dev/shm segments, seen in /proc/self/maps, the library's word not taken) -- or tcp
// (HETCCL_AGENT_WINDOW=off): none mapped. Called once the agent has a connection.
void checkDataPath(const Ctx& c, const char* when) {
  if (!c.args.has("path")) return;
  const std::string path = c.args.str("path");
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) die("cannot read /proc/self/maps");
  char line[4096];
  int shm = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strstr(line, "/dev/shm/")) ++shm;
  std::fclose(f);
  if (path == "window" && shm == 0)
    die("%s: no shared-memory segment is mapped: the data did not go through the window path", when);
  if (path == "tcp" && shm != 0)
    die("%s: %d shared-memory mappings with HETCCL_AGENT_WINDOW=off: the window path was used", when, shm);
  note("%s: %s path (%d shared-memory mappings)", when, path.c_str(), shm);
}

// ------------------------------------------------------------------------------------------ files

void writeFileAtomic(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) die("cannot create %s: %s", tmp.c_str(), std::strerror(errno));
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size()) die("cannot write %s", tmp.c_str());
  if (std::fclose(f) != 0) die("cannot write %s: %s", tmp.c_str(), std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) die("cannot rename %s: %s", tmp.c_str(), std::strerror(errno));
}

bool readFile(const std::string& path, std::string* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  out->clear();
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  std::fclose(f);
  return true;
}

std::string waitFile(const Ctx& c, const std::string& file, const char* what) {
  const double end = mono() + c.wait;
  std::string data;
  for (;;) {
    if (readFile(c.path(file), &data)) return data;
    if (mono() > end) die("waited %.0f s for %s (file %s): the other process never got there", c.wait, what, file.c_str());
    napMicros(2000);
  }
}

void signalFile(const Ctx& c, const std::string& file, const std::string& content = "1") {
  writeFileAtomic(c.path(file), content);
}

// ------------------------------------------------------------------------------------------ patterns

inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline uint64_t patWord(uint64_t seed, uint64_t word) { return mix64(mix64(seed) ^ word); }
inline uint8_t patByte(uint64_t seed, uint64_t off) {
  return static_cast<uint8_t>(patWord(seed, off >> 3) >> ((off & 7) * 8));
}

// p[j] = pat(seed, off + j) for j < n.
void fillPat(uint8_t* p, uint64_t seed, uint64_t off, uint64_t n) {
  uint64_t j = 0;
  for (; j < n && ((off + j) & 7) != 0; ++j) p[j] = patByte(seed, off + j);
  for (; j + 8 <= n; j += 8) {
    const uint64_t v = patWord(seed, (off + j) >> 3);
    std::memcpy(p + j, &v, 8);
  }
  for (; j < n; ++j) p[j] = patByte(seed, off + j);
}

std::string patString(uint64_t seed, size_t n) {
  std::string s(n, '\0');
  fillPat(reinterpret_cast<uint8_t*>(s.data()), seed, 0, n);
  return s;
}

std::string u64msg(char tag, uint64_t v) {
  std::string s(1, tag);
  s.append(reinterpret_cast<const char*>(&v), 8);
  return s;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// What a byte range must hold.
enum class Want { Pattern, Canary, CanaryOrPattern };

// Checks p[0..n) (region offsets regionOff..) against pat(seed, patOff + j) and/or the canary.
void checkBytes(const uint8_t* p, uint64_t n, Want want, uint64_t seed, uint64_t patOff, uint64_t regionOff,
                const std::string& what) {
  uint64_t bad = 0, first = 0;
  uint8_t got = 0, expect = 0;
  auto byteOk = [&](uint64_t j) {
    const uint8_t b = p[j];
    switch (want) {
      case Want::Canary: return b == kCanary;
      case Want::Pattern: return b == patByte(seed, patOff + j);
      default: return b == kCanary || b == patByte(seed, patOff + j);
    }
  };
  auto checkByte = [&](uint64_t j) {
    if (!byteOk(j)) {
      if (bad++ == 0) {
        first = j;
        got = p[j];
        expect = want == Want::Canary ? kCanary : patByte(seed, patOff + j);
      }
    }
  };
  uint64_t j = 0;
  if (want == Want::Canary) {
    for (; j < n && ((regionOff + j) & 7) != 0; ++j) checkByte(j);
    for (; j + 8 <= n; j += 8) {
      uint64_t v;
      std::memcpy(&v, p + j, 8);
      if (v != kCanaryWord)
        for (uint64_t k = j; k < j + 8; ++k) checkByte(k);
    }
  } else {
    for (; j < n && ((patOff + j) & 7) != 0; ++j) checkByte(j);
    for (; j + 8 <= n; j += 8) {
      uint64_t v;
      std::memcpy(&v, p + j, 8);
      if (v == patWord(seed, (patOff + j) >> 3)) continue;
      if (want == Want::CanaryOrPattern && v == kCanaryWord) continue;
      for (uint64_t k = j; k < j + 8; ++k) checkByte(k);
    }
  }
  for (; j < n; ++j) checkByte(j);
  if (bad != 0) {
    const char* wantName =
        want == Want::Canary ? "the canary 0xc5 (never written)"
                             : (want == Want::Pattern ? "the written pattern" : "the canary or the written pattern");
    die("%s: %llu of %llu bytes at region offsets [%llu, %llu) are not %s; first at region offset %llu: 0x%02x, "
        "expected 0x%02x",
        what.c_str(), ull(bad), ull(n), ull(regionOff), ull(regionOff + n), wantName, ull(regionOff + first), got,
        expect);
  }
}

// Bytes [off, off + n) of a region hold pat(seed, patOff + j) once phase `phase` is done.
struct Span {
  uint64_t off, n, seed, patOff;
  int phase;
};

// Every byte of the region: spans of phases <= done exact, spans of later phases the canary or their pattern
// (possibly in flight), everything else the canary.
void verifyRegion(const uint8_t* p, uint64_t size, std::vector<Span> spans, int done, const std::string& what) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.off < b.off; });
  uint64_t cur = 0;
  for (const Span& s : spans) {
    if (s.off < cur || s.off + s.n > size)
      die("%s: test plan error: span [%llu, +%llu) overlaps another or leaves the region", what.c_str(), ull(s.off),
          ull(s.n));
    checkBytes(p + cur, s.off - cur, Want::Canary, 0, 0, cur, what);
    checkBytes(p + s.off, s.n, s.phase <= done ? Want::Pattern : Want::CanaryOrPattern, s.seed, s.patOff, s.off, what);
    cur = s.off + s.n;
  }
  checkBytes(p + cur, size - cur, Want::Canary, 0, 0, cur, what);
}

// ------------------------------------------------------------------------------------------ agents, regions

hetcclAgent_t createAgent(const Ctx& c, const std::string& name, const std::string& secretChoice) {
  hetcclAgentOptions_t o;
  ok(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
  if (secretChoice == "test") {
    o.secret = kSecret.data();
    o.secretBytes = kSecret.size();
  } else if (secretChoice == "other") {
    o.secret = kOtherSecret.data();
    o.secretBytes = kOtherSecret.size();
  } else if (secretChoice == "env") {
    if (!std::getenv("HETCCL_SECRET")) die("--secret env but HETCCL_SECRET is not set");
    o.secret = nullptr;
    o.secretBytes = 0;
  } else {
    die("unknown --secret %s", secretChoice.c_str());
  }
  const std::string listen = c.args.str("listen", "127.0.0.1:0");
  o.listenAddress = listen.c_str();
  o.device = -1;
  o.timeoutSeconds = c.timeout;
  hetcclAgent_t a = nullptr;
  ok(hetcclAgentCreate(name.c_str(), &o, &a), "hetcclAgentCreate(" + name + ", " + listen + ")");
  if (!a) die("hetcclAgentCreate succeeded but gave a null agent");
  return a;
}

hetcclAgent_t createAgent(const Ctx& c) { return createAgent(c, c.name, c.args.str("secret", "test")); }

// A registered buffer of this process.
struct Local {
  uint8_t* p = nullptr;
  uint64_t bytes = 0;
  hetcclAgentMem_t mem = nullptr;
  uint32_t id = 0;
};

// Buffers live until the process exits (an agent may touch registered memory until it is destroyed): they
// are kept in a list that stays reachable, so LeakSanitizer does not report them.
std::vector<void*>& buffers() {
  static auto* all = new std::vector<void*>;  // never destroyed: still reachable when LeakSanitizer looks
  return *all;
}

uint8_t* allocBytes(uint64_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, (bytes + 4095) / 4096 * 4096) != 0) die("out of memory (%llu bytes)", ull(bytes));
  buffers().push_back(p);
  return static_cast<uint8_t*>(p);
}

void registerAt(hetcclAgent_t a, Local& l) {
  uint32_t id = 0xFFFFFFFFu;
  ok(hetcclAgentRegister(a, l.p, l.bytes, &l.mem, &id), "hetcclAgentRegister of " + std::to_string(l.bytes) + " bytes");
  uint32_t qid = 0;
  int kind = -1;
  size_t qbytes = 0;
  ok(hetcclAgentMemQuery(l.mem, &qid, &kind, &qbytes), "hetcclAgentMemQuery");
  if (qid != id || kind != kMemHost || qbytes != l.bytes)
    die("hetcclAgentMemQuery: id %u kind %d bytes %llu, expected id %u (from register), kind %d (host), bytes %llu", qid,
        kind, ull(qbytes), id, kMemHost, ull(l.bytes));
  l.id = id;
}

// Registers a new buffer of `bytes`: the canary, or pat(seed, offset) when patternSeed is given.
Local makeLocal(hetcclAgent_t a, uint64_t bytes, const uint64_t* patternSeed = nullptr) {
  Local l;
  l.bytes = bytes;
  l.p = allocBytes(bytes);
  if (patternSeed)
    fillPat(l.p, *patternSeed, 0, bytes);
  else
    std::memset(l.p, kCanary, bytes);
  registerAt(a, l);
  return l;
}

// ------------------------------------------------------------------------------------------ metadata files

struct RegionInfo {
  uint32_t id;
  uint64_t bytes;
};
struct Meta {
  std::vector<RegionInfo> regions;
  std::string blob;
};

std::string exportBlob(hetcclAgent_t a) {
  size_t n = 0;
  ok(hetcclAgentGetMetadata(a, nullptr, &n), "hetcclAgentGetMetadata (size)");
  if (n == 0) die("hetcclAgentGetMetadata: a blob of 0 bytes");
  std::string blob(n, '\0');
  size_t cap = n;
  ok(hetcclAgentGetMetadata(a, blob.data(), &cap), "hetcclAgentGetMetadata");
  if (cap != n) die("hetcclAgentGetMetadata: size %llu, then %llu", ull(n), ull(cap));
  return blob;
}

void putU32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void putU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

void publishMeta(const Ctx& c, const std::string& file, hetcclAgent_t a, const std::vector<const Local*>& regions) {
  std::string s = "HCAT";
  putU32(s, static_cast<uint32_t>(regions.size()));
  for (const Local* l : regions) {
    putU32(s, l->id);
    putU64(s, l->bytes);
  }
  const std::string blob = exportBlob(a);
  putU64(s, blob.size());
  s += blob;
  writeFileAtomic(c.path(file), s);
}

Meta waitMeta(const Ctx& c, const std::string& file) {
  const std::string s = waitFile(c, file, ("the metadata " + file).c_str());
  Meta m;
  size_t at = 4;
  auto take = [&](void* dst, size_t n) {
    if (at + n > s.size()) die("%s: malformed metadata file", file.c_str());
    std::memcpy(dst, s.data() + at, n);
    at += n;
  };
  if (s.compare(0, 4, "HCAT") != 0) die("%s: not a metadata file", file.c_str());
  uint32_t count = 0;
  take(&count, 4);
  for (uint32_t i = 0; i < count; ++i) {
    RegionInfo r{};
    take(&r.id, 4);
    take(&r.bytes, 8);
    m.regions.push_back(r);
  }
  uint64_t blobBytes = 0;
  take(&blobBytes, 8);
  if (at + blobBytes != s.size()) die("%s: malformed metadata file (blob size)", file.c_str());
  m.blob = s.substr(at);
  return m;
}

void loadPeer(hetcclAgent_t a, const std::string& blob, const std::string& expectName) {
  char name[HETCCL_AGENT_NAME_MAX + 1];
  std::memset(name, 'x', sizeof name);
  ok(hetcclAgentLoadRemote(a, blob.data(), blob.size(), name), "hetcclAgentLoadRemote of " + expectName + "'s blob");
  if (std::memchr(name, '\0', sizeof name) == nullptr) die("hetcclAgentLoadRemote: the name is not NUL-terminated");
  if (expectName != name) die("hetcclAgentLoadRemote: name '%s', expected '%s'", name, expectName.c_str());
}

// ------------------------------------------------------------------------------------------ notifications

struct Notif {
  std::string peer, msg;
};

bool tryNotif(hetcclAgent_t a, Notif* out) {
  char peer[HETCCL_AGENT_NAME_MAX + 1];
  std::string buf(HETCCL_AGENT_NOTIF_MAX, '\0');
  size_t bytes = 0;
  int got = -1;
  ok(hetcclAgentGetNotif(a, peer, buf.data(), buf.size(), &bytes, &got), "hetcclAgentGetNotif");
  if (got != 0 && got != 1) die("hetcclAgentGetNotif: *got = %d", got);
  if (!got) return false;
  if (bytes > buf.size()) die("hetcclAgentGetNotif: *bytes %llu beyond the capacity", ull(bytes));
  if (std::memchr(peer, '\0', sizeof peer) == nullptr) die("hetcclAgentGetNotif: the peer name is not NUL-terminated");
  out->peer = peer;
  out->msg.assign(buf.data(), bytes);
  return true;
}

Notif takeNotif(hetcclAgent_t a, double seconds, const std::string& what) {
  const double end = mono() + seconds;
  Notif n;
  for (;;) {
    if (tryNotif(a, &n)) return n;
    if (mono() > end) die("no notification within %.0f s: waiting for %s", seconds, what.c_str());
    napMicros(100);
  }
}

void expectNotif(hetcclAgent_t a, const Ctx& c, const std::string& from, const std::string& msg, const std::string& what) {
  const Notif n = takeNotif(a, c.wait, what);
  if (n.peer != from) die("%s: a notification from '%s', expected from '%s'", what.c_str(), n.peer.c_str(), from.c_str());
  if (n.msg != msg)
    die("%s: notification of %llu bytes (%s), expected %llu bytes (%s)", what.c_str(), ull(n.msg.size()),
        hexPrefix(n.msg).c_str(), ull(msg.size()), hexPrefix(msg).c_str());
}

// ------------------------------------------------------------------------------------------ transfers

hetcclAgentRange_t range(uint32_t localRegion, uint64_t localOffset, uint32_t remoteRegion, uint64_t remoteOffset,
                         uint64_t bytes) {
  hetcclAgentRange_t r;
  r.localRegion = localRegion;
  r.remoteRegion = remoteRegion;
  r.localOffset = localOffset;
  r.remoteOffset = remoteOffset;
  r.bytes = bytes;
  return r;
}

hetcclAgentXfer_t prep(hetcclAgent_t a, hetcclAgentOp_t op, const std::string& peer,
                       const std::vector<hetcclAgentRange_t>& ranges, const std::string& notif, const std::string& what) {
  hetcclAgentXfer_t x = nullptr;
  ok(hetcclAgentPrepXfer(a, op, peer.c_str(), ranges.data(), ranges.size(), notif.empty() ? nullptr : notif.data(),
                         notif.size(), &x),
     "hetcclAgentPrepXfer: " + what);
  if (!x) die("hetcclAgentPrepXfer: %s: success but a null transfer", what.c_str());
  return x;
}

void runXfer(hetcclAgentXfer_t x, const std::string& what) {
  ok(hetcclAgentPostXfer(x), "hetcclAgentPostXfer: " + what);
  ok(hetcclAgentWaitXfer(x), "hetcclAgentWaitXfer: " + what);
  ok(hetcclAgentCheckXfer(x), "hetcclAgentCheckXfer after the wait: " + what);
}

// Polls hetcclAgentCheckXfer until the post ended (our own deadline, not the library's); its result.
hetcclResult_t waitEnd(hetcclAgentXfer_t x, double seconds, const std::string& what) {
  const double end = mono() + seconds;
  for (;;) {
    const hetcclResult_t r = hetcclAgentCheckXfer(x);
    if (r != hetcclInProgress) return r;
    if (mono() > end) die("%s: still in progress after %.1f s", what.c_str(), seconds);
    napMicros(200);
  }
}

// Posts and waits for the end (our deadline); *msg = the message of a failure, whether the post or the
// transfer reported it.
hetcclResult_t postToEnd(hetcclAgentXfer_t x, double seconds, const std::string& what, std::string* msg) {
  hetcclResult_t r = hetcclAgentPostXfer(x);
  if (r != hetcclSuccess) {
    *msg = lastError();
    note("%s: the post itself returned %s", what.c_str(), codeName(r));
    return r;
  }
  r = waitEnd(x, seconds, what);
  *msg = r == hetcclSuccess ? "" : lastError();
  return r;
}

// A transfer to a gone peer: must end in hetcclRemoteError naming it.
void expectRemoteFailure(hetcclAgentXfer_t x, double seconds, const std::string& peer, const std::string& what) {
  std::string msg;
  const hetcclResult_t r = postToEnd(x, seconds, what, &msg);
  if (r != hetcclRemoteError)
    die("%s: expected hetcclRemoteError, got %s (%d): %s", what.c_str(), codeName(r), static_cast<int>(r), msg.c_str());
  mustName(msg, peer, what);
  note("failed as expected: %s: %s", what.c_str(), msg.c_str());
}

// ============================================================================== (a) write + notification
//
// Three writes posted back to back (the second and third queue behind the first), ranges over two
// registrations on each side: one of 20 MiB + 1 byte (more than the 16 MiB of the default window, unaligned),
// 350 ranges of two sizes, and the first and last bytes of the remote regions. Notifications: 4096 bytes (the
// most), two bytes, one NUL byte, then a GenNotif of 0 bytes. On each the target checks every byte of both
// regions: writes done exact, later ones canary or pattern, the rest canary.

struct PlanRange {
  int li;
  uint64_t lo;
  int ri;
  uint64_t ro, n;
};
struct Phase {
  std::vector<PlanRange> ranges;
  std::string notif;
};

const std::vector<uint64_t> kWriteRemote = {24 * kMiB + 4093, kMiB + 7};

uint64_t phaseSeed(uint64_t seed, int phase, int ri) {
  return seed * 1000003u + static_cast<uint64_t>(phase) * 7919u + static_cast<uint64_t>(ri);
}

std::vector<Phase> writePlan(uint64_t seed) {
  std::vector<Phase> ph(3);
  ph[0].ranges.push_back({0, 5, 0, 3, 20 * kMiB + 1});
  ph[0].notif = patString(seed + 17, HETCCL_AGENT_NOTIF_MAX);
  for (uint64_t i = 0; i < 300; ++i) ph[1].ranges.push_back({1, i * 1000, 1, 11 + i * 3001, 1000});
  for (uint64_t i = 0; i < 50; ++i) ph[1].ranges.push_back({0, 20 * kMiB + 64 + i * 4104, 0, 21 * kMiB + i * 8192, 4097});
  ph[1].notif = "a1";
  ph[2].ranges.push_back({1, 300064, 1, kWriteRemote[1] - 13, 13});
  ph[2].ranges.push_back({0, 20 * kMiB + 64 + 50 * 4104 + 64, 0, 0, 3});
  ph[2].notif = std::string(1, '\0');
  return ph;
}

std::vector<Span> remoteSpans(const std::vector<Phase>& plan, int ri, uint64_t seed) {
  std::vector<Span> s;
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges)
      if (r.ri == ri) s.push_back({r.ro, r.n, phaseSeed(seed, static_cast<int>(p), ri), r.ro, static_cast<int>(p)});
  return s;
}

std::vector<Span> localSpans(const std::vector<Phase>& plan, int li, uint64_t seed) {
  std::vector<Span> s;
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges)
      if (r.li == li) s.push_back({r.lo, r.n, phaseSeed(seed, static_cast<int>(p), r.ri), r.ro, 0});
  return s;
}

uint64_t localSize(const std::vector<Phase>& plan, int li) {
  uint64_t end = 0;
  for (const Phase& p : plan)
    for (const PlanRange& r : p.ranges)
      if (r.li == li) end = std::max(end, r.lo + r.n);
  return end + 64;
}

std::vector<hetcclAgentRange_t> planRanges(const Phase& ph, const std::vector<Local>& L, const Meta& m) {
  std::vector<hetcclAgentRange_t> out;
  for (const PlanRange& r : ph.ranges) out.push_back(range(L[r.li].id, r.lo, m.regions[r.ri].id, r.ro, r.n));
  return out;
}

int writeTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  std::vector<Local> R = {makeLocal(a, kWriteRemote[0]), makeLocal(a, kWriteRemote[1])};
  publishMeta(c, c.name + ".meta", a, {&R[0], &R[1]});
  const auto plan = writePlan(c.seed);
  for (int p = 0; p < 3; ++p) {
    step("notification of a write");
    expectNotif(a, c, c.peer(), plan[p].notif, "the notification of write " + std::to_string(p));
    step("verify");
    for (int ri = 0; ri < 2; ++ri)
      verifyRegion(R[ri].p, R[ri].bytes, remoteSpans(plan, ri, c.seed), p,
                   "after the notification of write " + std::to_string(p) + ", region " + std::to_string(ri));
    if (p == 0) checkDataPath(c, "after the first write");
  }
  step("the GenNotif of 0 bytes");
  expectNotif(a, c, c.peer(), "", "the GenNotif of 0 bytes after the writes");
  for (int ri = 0; ri < 2; ++ri)
    verifyRegion(R[ri].p, R[ri].bytes, remoteSpans(plan, ri, c.seed), 2, "at the end, region " + std::to_string(ri));
  Notif extra;
  if (tryNotif(a, &extra)) die("an unexpected notification from %s (%s)", extra.peer.c_str(), hexPrefix(extra.msg).c_str());
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every byte of both regions right after each of 3 writes and the GenNotif");
}

int writeInitiator(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  const auto plan = writePlan(c.seed);
  std::vector<Local> L = {makeLocal(a, localSize(plan, 0)), makeLocal(a, localSize(plan, 1))};
  for (size_t p = 0; p < plan.size(); ++p)
    for (const PlanRange& r : plan[p].ranges) fillPat(L[r.li].p + r.lo, phaseSeed(c.seed, static_cast<int>(p), r.ri), r.ro, r.n);
  step("load the target");
  const Meta m = waitMeta(c, c.peer() + ".meta");
  if (m.regions.size() != 2) die("the target lists %zu regions, expected 2", m.regions.size());
  loadPeer(a, m.blob, c.peer());
  step("prepare");
  std::vector<hetcclAgentXfer_t> xs;
  for (size_t p = 0; p < plan.size(); ++p)
    xs.push_back(prep(a, hetcclAgentWrite, c.peer(), planRanges(plan[p], L, m), plan[p].notif, "write " + std::to_string(p)));
  step("post the writes back to back");
  for (size_t p = 0; p < xs.size(); ++p) ok(hetcclAgentPostXfer(xs[p]), "hetcclAgentPostXfer: write " + std::to_string(p));
  step("wait for the writes");
  for (size_t p = 0; p < xs.size(); ++p) {
    ok(hetcclAgentWaitXfer(xs[p]), "hetcclAgentWaitXfer: write " + std::to_string(p));
    ok(hetcclAgentCheckXfer(xs[p]), "hetcclAgentCheckXfer after the wait: write " + std::to_string(p));
  }
  checkDataPath(c, "after the writes");
  step("GenNotif of 0 bytes");
  const char empty[1] = {0};
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), empty, 0), "hetcclAgentGenNotif of 0 bytes");
  // The local sources were only read.
  for (int li = 0; li < 2; ++li) verifyRegion(L[li].p, L[li].bytes, localSpans(plan, li, c.seed), 0, "the local sources");
  step("release");
  for (auto x : xs) ok(hetcclAgentReleaseXfer(x), "hetcclAgentReleaseXfer");
  for (auto& l : L) ok(hetcclAgentDeregister(l.mem), "hetcclAgentDeregister");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("3 writes (20 MiB + 353 ranges) and 4 notifications");
}

// ============================================================================== (b) read of many ranges
//
// 22,557 ranges made by hetcclAgentStridedRanges (checked field by field), from both remote registrations into
// both local ones, sizes 8 B .. 9 MiB, with a notification to the target after the read. The reader checks
// every byte of its two regions (ranges: the target's pattern at the remote offset; elsewhere the canary),
// clears them and posts the same transfer again. The target checks its regions were not changed.

struct StridedRun {
  int li, ri;
  uint64_t lo, ls, ro, rs, n, count;
};
const std::vector<uint64_t> kReadRemote = {16 * kMiB + 5, 3 * kMiB + 1};
uint64_t readSeed(uint64_t seed, int ri) { return seed * 1000003u + 500u + static_cast<uint64_t>(ri); }

std::vector<StridedRun> readRuns() {
  return {
      {0, 0, 0, 512, 7, 1024, 512, 2000},
      {1, 1, 0, 65540, 0, 70001, 65539, 40},
      {0, 1, 1024064, 128, 5, 4099, 100, 500},
      {1, 0, 2621664, 300 * kKiB + 8, 8 * kMiB, 512 * kKiB, 300 * kKiB, 16},
      {1, 0, 7537056, 0, 16 * kMiB + 5 - 9 * kMiB, 0, 9 * kMiB, 1},
      {0, 0, 1088128, 8, 1, 37, 8, 20000},
  };
}

std::string readNotif(uint64_t seed) { return "b-read-" + patString(seed + 3, 100); }

int readTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s0 = readSeed(c.seed, 0), s1 = readSeed(c.seed, 1);
  std::vector<Local> R = {makeLocal(a, kReadRemote[0], &s0), makeLocal(a, kReadRemote[1], &s1)};
  publishMeta(c, c.name + ".meta", a, {&R[0], &R[1]});
  for (int iter = 0; iter < 2; ++iter) {
    step("the notification after a read");
    expectNotif(a, c, c.peer(), readNotif(c.seed), "the notification after read " + std::to_string(iter));
    for (int ri = 0; ri < 2; ++ri)
      verifyRegion(R[ri].p, R[ri].bytes, {{0, R[ri].bytes, readSeed(c.seed, ri), 0, 0}}, 0,
                   "region " + std::to_string(ri) + " (only read) after read " + std::to_string(iter));
  }
  step("end");
  expectNotif(a, c, c.peer(), "end", "the final GenNotif");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("both reads notified, the read regions unchanged");
}

int readInitiator(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  const auto runs = readRuns();
  uint64_t localEnd[2] = {0, 0};
  for (const auto& r : runs) localEnd[r.li] = std::max(localEnd[r.li], r.lo + (r.count - 1) * r.ls + r.n);
  std::vector<Local> L = {makeLocal(a, localEnd[0] + 64), makeLocal(a, localEnd[1] + 64)};
  step("load the target");
  const Meta m = waitMeta(c, c.peer() + ".meta");
  if (m.regions.size() != 2) die("the target lists %zu regions, expected 2", m.regions.size());
  for (int ri = 0; ri < 2; ++ri)
    if (m.regions[ri].bytes != kReadRemote[ri]) die("remote region %d: %llu bytes listed", ri, ull(m.regions[ri].bytes));
  loadPeer(a, m.blob, c.peer());
  step("strided ranges");
  std::vector<hetcclAgentRange_t> ranges;
  std::vector<Span> spans[2];
  for (const auto& r : runs) {
    std::vector<hetcclAgentRange_t> part(r.count);
    const uint32_t lid = L[r.li].id, rid = m.regions[r.ri].id;
    ok(hetcclAgentStridedRanges(part.data(), part.size(), lid, r.lo, r.ls, rid, r.ro, r.rs, r.n), "hetcclAgentStridedRanges");
    for (uint64_t i = 0; i < r.count; ++i) {
      const hetcclAgentRange_t& g = part[i];
      if (g.localRegion != lid || g.remoteRegion != rid || g.localOffset != r.lo + i * r.ls ||
          g.remoteOffset != r.ro + i * r.rs || g.bytes != r.n)
        die("hetcclAgentStridedRanges: range %llu is {%u, %u, %llu, %llu, %llu}, expected {%u, %u, %llu, %llu, %llu}",
            ull(i), g.localRegion, g.remoteRegion, ull(g.localOffset), ull(g.remoteOffset), ull(g.bytes), lid, rid,
            ull(r.lo + i * r.ls), ull(r.ro + i * r.rs), ull(r.n));
      spans[r.li].push_back({r.lo + i * r.ls, r.n, readSeed(c.seed, r.ri), r.ro + i * r.rs, 0});
    }
    ranges.insert(ranges.end(), part.begin(), part.end());
  }
  note("one read of %zu ranges", ranges.size());
  hetcclAgentXfer_t x = prep(a, hetcclAgentRead, c.peer(), ranges, readNotif(c.seed), "the read");
  for (int iter = 0; iter < 2; ++iter) {
    step("read");
    if (iter > 0)
      for (auto& l : L) std::memset(l.p, kCanary, l.bytes);
    runXfer(x, "read " + std::to_string(iter));
    if (iter == 0) checkDataPath(c, "after the first read");
    step("verify the read data");
    for (int li = 0; li < 2; ++li)
      verifyRegion(L[li].p, L[li].bytes, spans[li], 0, "local region " + std::to_string(li) + " after read " + std::to_string(iter));
  }
  step("end");
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), "end", 3), "hetcclAgentGenNotif");
  step("destroy (transfer and registrations not released first)");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("2 reads of " + std::to_string(ranges.size()) + " ranges, every byte right");
}

// ============================================================================== (c) notifications never before data
//
// --count (>= 10000) small writes, 64 in flight, each to its own 64-byte slot: 8 bytes of its sequence number,
// then pattern, 8..64 bytes in all; every 97th also carries a second range of 256 KiB to its own area of a
// second region (a longer copy, a wider window for a notification that overtakes its data). Every 500th write
// carries no notification and is followed by a GenNotif instead. On every notification the target checks
// that it is the next in sequence and that the data of that write (both ranges) is in place, byte for byte.

constexpr uint64_t kOrderSlot = 64;
constexpr uint64_t kOrderBig = 256 * kKiB;
uint64_t orderBytes(uint64_t i) { return 8 + (i * 7) % 57; }
bool orderHasBig(uint64_t i) { return i % 97 == 13; }
uint64_t orderBigOffset(uint64_t i) { return (i / 97) * kOrderBig; }
uint64_t orderBigRegion(uint64_t count) { return (count / 97 + 1) * kOrderBig; }

void fillOrderSlot(uint8_t* slot, uint64_t i, uint64_t seed) {
  std::memcpy(slot, &i, 8);
  fillPat(slot + 8, seed, i * kOrderSlot + 8, orderBytes(i) - 8);
}

void checkOrderSlot(const uint8_t* slot, uint64_t i, uint64_t seed, const std::string& what) {
  uint64_t got;
  std::memcpy(&got, slot, 8);
  if (got != i) {
    uint64_t canary = kCanaryWord;
    die("%s: slot %llu holds sequence number %llu (%s), not %llu: the data of the write was not in place", what.c_str(),
        ull(i), ull(got), got == canary ? "never written" : "garbage", ull(i));
  }
  checkBytes(slot + 8, orderBytes(i) - 8, Want::Pattern, seed, i * kOrderSlot + 8, i * kOrderSlot + 8, what);
  checkBytes(slot + orderBytes(i), kOrderSlot - orderBytes(i), Want::Canary, 0, 0, i * kOrderSlot + orderBytes(i), what);
}

int orderTarget(Ctx& c) {
  const uint64_t count = static_cast<uint64_t>(c.args.integer("count", 10000));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, count * kOrderSlot + 4096), RB = makeLocal(a, orderBigRegion(count));
  publishMeta(c, c.name + ".meta", a, {&R, &RB});
  uint64_t gens = 0;
  for (uint64_t k = 0; k < count; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "notification " + std::to_string(k));
    if (n.peer != c.peer()) die("notification %llu from '%s'", ull(k), n.peer.c_str());
    if (n.msg.size() != 9 || (n.msg[0] != 'c' && n.msg[0] != 'g'))
      die("notification %llu: unexpected message %s", ull(k), hexPrefix(n.msg).c_str());
    uint64_t seq;
    std::memcpy(&seq, n.msg.data() + 1, 8);
    if (seq != k)
      die("notification %llu names write %llu: notifications out of order (or one lost)", ull(k), ull(seq));
    const bool gen = n.msg[0] == 'g';
    if (gen != (k % 500 == 499)) die("notification %llu: %s, expected the other kind", ull(k), gen ? "a GenNotif" : "attached");
    gens += gen;
    const std::string what = std::string(gen ? "GenNotif" : "notification") + " of write " + std::to_string(seq);
    checkOrderSlot(R.p + seq * kOrderSlot, seq, c.seed, what);
    if (orderHasBig(seq))
      checkBytes(RB.p + orderBigOffset(seq), kOrderBig, Want::Pattern, c.seed + 1, orderBigOffset(seq), orderBigOffset(seq),
                 what + " (its 256 KiB range)");
  }
  step("verify everything");
  for (uint64_t i = 0; i < count; ++i) checkOrderSlot(R.p + i * kOrderSlot, i, c.seed, "at the end");
  checkBytes(R.p + count * kOrderSlot, 4096, Want::Canary, 0, 0, count * kOrderSlot, "the tail after the last slot");
  std::vector<Span> big;
  for (uint64_t i = 0; i < count; ++i)
    if (orderHasBig(i)) big.push_back({orderBigOffset(i), kOrderBig, c.seed + 1, orderBigOffset(i), 0});
  verifyRegion(RB.p, RB.bytes, big, 0, "the second region at the end");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(count) + " notifications (" + std::to_string(gens) +
              " GenNotif) each found its write's data in place, in order");
}

int orderInitiator(Ctx& c) {
  const uint64_t count = static_cast<uint64_t>(c.args.integer("count", 10000));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local L = makeLocal(a, count * kOrderSlot + 4096);
  for (uint64_t i = 0; i < count; ++i) fillOrderSlot(L.p + i * kOrderSlot, i, c.seed);
  const uint64_t bigSeed = c.seed + 1;
  Local LB = makeLocal(a, orderBigRegion(count), &bigSeed);
  const Meta m = waitMeta(c, c.peer() + ".meta");
  loadPeer(a, m.blob, c.peer());
  const uint32_t rid = m.regions.at(0).id, ridBig = m.regions.at(1).id;
  constexpr size_t kDepth = 64;
  std::vector<hetcclAgentXfer_t> ring(kDepth, nullptr);
  const double t0 = mono();
  for (uint64_t i = 0; i < count; ++i) {
    hetcclAgentXfer_t& slot = ring[i % kDepth];
    if (slot) {
      step("wait for a write");
      ok(hetcclAgentWaitXfer(slot), "hetcclAgentWaitXfer");
      ok(hetcclAgentReleaseXfer(slot), "hetcclAgentReleaseXfer");
    }
    const bool gen = i % 500 == 499;
    step("post a write");
    std::vector<hetcclAgentRange_t> rr = {range(L.id, i * kOrderSlot, rid, i * kOrderSlot, orderBytes(i))};
    if (orderHasBig(i)) rr.push_back(range(LB.id, orderBigOffset(i), ridBig, orderBigOffset(i), kOrderBig));
    slot = prep(a, hetcclAgentWrite, c.peer(), rr, gen ? "" : u64msg('c', i), "write " + std::to_string(i));
    ok(hetcclAgentPostXfer(slot), "hetcclAgentPostXfer of write " + std::to_string(i));
    if (gen) {
      step("GenNotif");
      const std::string msg = u64msg('g', i);
      ok(hetcclAgentGenNotif(a, c.peer().c_str(), msg.data(), msg.size()), "hetcclAgentGenNotif after write " + std::to_string(i));
    }
  }
  step("drain");
  for (auto& x : ring)
    if (x) {
      ok(hetcclAgentWaitXfer(x), "hetcclAgentWaitXfer");
      ok(hetcclAgentReleaseXfer(x), "hetcclAgentReleaseXfer");
    }
  const double secs = mono() - t0;
  checkDataPath(c, "after the writes");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  char buf[128];
  std::snprintf(buf, sizeof buf, "%llu writes in %.2f s", ull(count), secs);
  return pass(buf);
}

// ============================================================================== (d) join / leave
//
// init-A writes rounds (a 64 KiB slot each, notification "r<round>") to stay-B and leave-C; leave-C destroys
// its agent after 5 rounds and keeps its memory; join-D starts only then. In rounds 5..9 init-A writes to all
// three at once: stay-B's and join-D's succeed, leave-C's fail with hetcclRemoteError naming it, and leave-C's
// memory holds rounds 0..4 only.

constexpr uint64_t kRoundSlot = 64 * kKiB;
constexpr int kMaxRounds = 64;
uint64_t roundBytes(int r) { return kRoundSlot - static_cast<uint64_t>(r % 7) * 3; }
uint64_t roundSeed(uint64_t seed, const std::string& target) { return seed * 31u + fnv1a(target); }
std::string roundMsg(int r) { return "r" + std::to_string(r); }

std::vector<Span> roundSpans(int rounds, uint64_t seed, const std::string& target) {
  std::vector<Span> s;
  for (int r = 0; r < rounds; ++r) s.push_back({r * kRoundSlot, roundBytes(r), roundSeed(seed, target), r * kRoundSlot, r});
  return s;
}

int roundsTarget(Ctx& c) {
  const int rounds = static_cast<int>(c.args.integer("rounds", 10));
  const int leaveAfter = static_cast<int>(c.args.integer("leave-after", -1));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kMaxRounds * kRoundSlot + 4096);
  publishMeta(c, c.name + ".meta", a, {&R});
  for (int k = 0;; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "round " + std::to_string(k));
    if (n.peer != c.peer()) die("a notification from '%s'", n.peer.c_str());
    if (n.msg == "end") {
      if (k != rounds) die("'end' after %d rounds, expected %d", k, rounds);
      verifyRegion(R.p, R.bytes, roundSpans(rounds, c.seed, c.name), rounds, "at the end");
      break;
    }
    if (n.msg != roundMsg(k)) die("notification '%s', expected '%s'", hexPrefix(n.msg).c_str(), roundMsg(k).c_str());
    verifyRegion(R.p, R.bytes, roundSpans(kMaxRounds, c.seed, c.name), k, "after round " + std::to_string(k));
    if (k + 1 == leaveAfter) {
      step("leave");
      ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
      note("left after round %d (agent destroyed, memory kept)", k);
      signalFile(c, c.name + ".left");
      step("wait for the initiator to finish");
      waitFile(c, c.peer() + ".done", "the initiator's end");
      verifyRegion(R.p, R.bytes, roundSpans(leaveAfter, c.seed, c.name), leaveAfter,
                   "after leaving: only the rounds before");
      return pass("left after " + std::to_string(leaveAfter) + " rounds; nothing written after");
    }
  }
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(rounds) + " rounds, each verified");
}

struct RoundPeer {
  std::string name;
  Local src;
  Meta meta;
};

RoundPeer roundPeer(Ctx& c, hetcclAgent_t a, const std::string& name) {
  RoundPeer p;
  p.name = name;
  const uint64_t s = roundSeed(c.seed, name);
  p.src.bytes = kMaxRounds * kRoundSlot;
  p.src.p = allocBytes(p.src.bytes);
  fillPat(p.src.p, s, 0, p.src.bytes);
  registerAt(a, p.src);
  p.meta = waitMeta(c, name + ".meta");
  loadPeer(a, p.meta.blob, name);
  return p;
}

hetcclAgentXfer_t roundXfer(hetcclAgent_t a, const RoundPeer& p, int r) {
  return prep(a, hetcclAgentWrite, p.name, {range(p.src.id, r * kRoundSlot, p.meta.regions.at(0).id, r * kRoundSlot, roundBytes(r))},
              roundMsg(r), "round " + std::to_string(r) + " to " + p.name);
}

int joinInitiator(Ctx& c) {
  const std::string stay = c.args.str("stay"), leave = c.args.str("leave"), join = c.args.str("join");
  step("create");
  hetcclAgent_t a = createAgent(c);
  RoundPeer B = roundPeer(c, a, stay), C = roundPeer(c, a, leave);
  for (int r = 0; r < 5; ++r) {
    step("rounds before the leave");
    hetcclAgentXfer_t xb = roundXfer(a, B, r), xc = roundXfer(a, C, r);
    ok(hetcclAgentPostXfer(xb), "post to " + stay);
    ok(hetcclAgentPostXfer(xc), "post to " + leave);
    ok(hetcclAgentWaitXfer(xb), "round to " + stay);
    ok(hetcclAgentWaitXfer(xc), "round to " + leave);
    ok(hetcclAgentReleaseXfer(xb), "release");
    ok(hetcclAgentReleaseXfer(xc), "release");
  }
  checkDataPath(c, "after the first rounds");
  signalFile(c, c.name + ".phase1");
  step("load the joiner");
  RoundPeer D = roundPeer(c, a, join);
  step("wait for the leaver");
  waitFile(c, leave + ".left", "the leaver's destroy");
  for (int r = 5; r < 10; ++r) {
    step("rounds after the leave");
    hetcclAgentXfer_t xb = roundXfer(a, B, r), xc = roundXfer(a, C, r), xd = roundXfer(a, D, r - 5);
    ok(hetcclAgentPostXfer(xb), "post to " + stay);
    ok(hetcclAgentPostXfer(xd), "post to " + join);
    expectRemoteFailure(xc, c.timeout + 5, leave, "round " + std::to_string(r) + " to the agent that left");
    ok(hetcclAgentWaitXfer(xb), "round " + std::to_string(r) + " to " + stay);
    ok(hetcclAgentWaitXfer(xd), "round " + std::to_string(r - 5) + " to " + join);
    for (auto x : {xb, xc, xd}) ok(hetcclAgentReleaseXfer(x), "release");
  }
  step("GenNotif to the agent that left");
  {
    const hetcclResult_t r = hetcclAgentGenNotif(a, leave.c_str(), "x", 1);
    const std::string msg = lastError();
    if (r != hetcclRemoteError) die("GenNotif to the agent that left: %s, expected hetcclRemoteError: %s", codeName(r), msg.c_str());
    mustName(msg, leave, "GenNotif to the agent that left");
  }
  step("forget");
  ok(hetcclAgentForgetRemote(a, leave.c_str()), "hetcclAgentForgetRemote of the agent that left");
  refused(hetcclAgentForgetRemote(a, leave.c_str()), hetcclInvalidArgument, "forgetting it twice");
  {
    const auto rr = std::vector<hetcclAgentRange_t>{range(C.src.id, 0, C.meta.regions[0].id, 0, 8)};
    hetcclAgentXfer_t x = nullptr;
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, leave.c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the forgotten agent");
  }
  step("end");
  ok(hetcclAgentGenNotif(a, stay.c_str(), "end", 3), "GenNotif end to " + stay);
  ok(hetcclAgentGenNotif(a, join.c_str(), "end", 3), "GenNotif end to " + join);
  signalFile(c, c.name + ".done");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("10 rounds to the stayer, 5 to the joiner, the leaver's 5 later ones failed naming it");
}

// ============================================================================== (e) forged blobs
//
// auth-B publishes a blob, registers a second region and publishes a newer one; other-X has another secret.
// init-A (the same secret as auth-B) must refuse with
// hetcclInvalidArgument and a message: auth-B's blob with any one of ~20 bytes flipped, truncated, garbage, empty,
// other-X's blob, its own blob -- before and after loading the genuine one --, and the older blob of auth-B
// after the newer. Nothing changes: auth-B is unknown until the genuine load, and writes to both of auth-B's
// regions (the second only in the newer blob) then arrive.

int forgedTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta", a, {&R0});
  Local R1 = makeLocal(a, 256 * kKiB);
  publishMeta(c, c.name + ".meta2", a, {&R0, &R1});
  step("first write");
  expectNotif(a, c, c.peer(), "e1", "the write to the first region");
  verifyRegion(R0.p, R0.bytes, {{0, 4096, c.seed + 1, 0, 0}}, 0, "region 0 after e1");
  verifyRegion(R1.p, R1.bytes, {{100, 4096, c.seed + 2, 100, 1}}, 0, "region 1 after e1 (e2 may be on its way)");
  step("second write");
  expectNotif(a, c, c.peer(), "e2", "the write to the second region");
  verifyRegion(R0.p, R0.bytes, {{0, 4096, c.seed + 1, 0, 0}}, 0, "region 0 after e2");
  verifyRegion(R1.p, R1.bytes, {{100, 4096, c.seed + 2, 100, 0}}, 0, "region 1 after e2");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("only the writes through the genuine blobs arrived");
}

int publisherRole(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, 64 * kKiB);
  publishMeta(c, c.name + ".meta", a, {&R0});
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("published");
}

void expectRefusedLoad(hetcclAgent_t a, const std::string& blob, const std::string& what) {
  char name[HETCCL_AGENT_NAME_MAX + 1] = {0};
  refused(hetcclAgentLoadRemote(a, blob.data(), blob.size(), name), hetcclInvalidArgument, what);
}

int forgedInitiator(Ctx& c) {
  const std::string other = c.args.str("other");
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2;
  Local L1 = makeLocal(a, 4096, &s1);
  Local L2 = makeLocal(a, 4096 + 100, &s2);
  const Meta m1 = waitMeta(c, c.peer() + ".meta");
  const Meta m2 = waitMeta(c, c.peer() + ".meta2");
  const Meta mx = waitMeta(c, other + ".meta");
  const std::string& blob = m1.blob;
  const size_t n = blob.size();
  note("blob of %zu bytes", n);
  std::set<size_t> positions = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4,
                                n - 64, n - 33, n - 32, n - 17, n - 16, n - 2, n - 1};
  auto forgeries = [&](const char* when) {
    for (size_t pos : positions) {
      if (pos >= n) continue;
      std::string f = blob;
      f[pos] = static_cast<char>(f[pos] ^ 0xFF);
      expectRefusedLoad(a, f, std::string(when) + ": byte " + std::to_string(pos) + " of " + std::to_string(n) + " flipped");
    }
  };
  step("forged blobs");
  forgeries("before the genuine load");
  step("other secret");
  expectRefusedLoad(a, mx.blob, "a blob made with another secret");
  step("truncated");
  for (size_t len : {n - 1, n - 16, n - 32, n / 2, size_t{16}, size_t{1}})
    if (len < n) expectRefusedLoad(a, blob.substr(0, len), "the blob truncated to " + std::to_string(len) + " bytes");
  {
    char name[HETCCL_AGENT_NAME_MAX + 1] = {0};
    refused(hetcclAgentLoadRemote(a, blob.data(), 0, name), hetcclInvalidArgument, "a blob of 0 bytes");
  }
  step("garbage");
  expectRefusedLoad(a, patString(c.seed + 99, n), "random bytes of a blob's size");
  step("own blob");
  expectRefusedLoad(a, exportBlob(a), "this agent's own blob");
  step("nothing changed");
  {
    const auto rr = std::vector<hetcclAgentRange_t>{range(L1.id, 0, m1.regions[0].id, 0, 4096)};
    hetcclAgentXfer_t x = nullptr;
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, c.peer().c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the peer whose blobs were all refused");
    refused(hetcclAgentForgetRemote(a, c.peer().c_str()), hetcclInvalidArgument, "forgetting the peer never loaded");
  }
  step("genuine load");
  loadPeer(a, m1.blob, c.peer());
  step("forged blobs after the load");
  forgeries("after the genuine load");
  expectRefusedLoad(a, mx.blob, "after the genuine load: a blob made with another secret");
  step("newer blob, then the older");
  loadPeer(a, m2.blob, c.peer());
  expectRefusedLoad(a, m1.blob, "the older blob of the same incarnation after the newer");
  step("writes");
  if (m2.regions.size() != 2) die("the newer blob's file lists %zu regions", m2.regions.size());
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, c.peer(), {range(L1.id, 0, m2.regions[0].id, 0, 4096)}, "e1", "e1");
  runXfer(x1, "the write to the first region");
  checkDataPath(c, "after the first write");
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, c.peer(), {range(L2.id, 100, m2.regions[1].id, 100, 4096)}, "e2", "e2");
  runXfer(x2, "the write to the region only the newer blob lists");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every forged, foreign, truncated, own and older blob refused; the genuine ones work");
}

// ============================================================================== (f) stale: the target restarts
//
// restart-B (incarnation 1) takes a write, then destroys its agent and exits; the driver starts incarnation 2
// under the same name on the same address. init-A, still holding the first blob: a new transfer, a second post
// of it and a GenNotif must fail naming restart-B, and incarnation 2 checks its region is untouched; after
// loading the new blob a write arrives. Incarnation 2 then stops too and incarnation 3 comes up: init-A loads
// its blob at once (the connection to incarnation 2 is dead by then) and its first write must arrive.

int staleThird(Ctx& c, hetcclAgent_t a, Local& R);

int staleTarget(Ctx& c) {
  const int incarnation = static_cast<int>(c.args.integer("incarnation", 1));
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta." + std::to_string(incarnation), a, {&R});
  if (incarnation == 1) {
    step("first write");
    expectNotif(a, c, c.peer(), "f1", "the write to incarnation 1");
    verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 1, 0, 0}}, 0, "incarnation 1 after its write");
    step("destroy");
    ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
    return pass("incarnation 1 got its write and stopped");
  }
  if (incarnation == 3) return staleThird(c, a, R);
  step("wait for the stale attempts");
  waitFile(c, c.peer() + ".stale_tried", "the initiator's attempts with the old blob");
  verifyRegion(R.p, R.bytes, {}, 0, "incarnation 2 after the attempts through the stale blob (nothing written)");
  Notif n;
  if (tryNotif(a, &n)) die("incarnation 2 got a notification through the stale blob: %s", hexPrefix(n.msg).c_str());
  signalFile(c, c.name + ".clean");
  step("write through the new blob");
  expectNotif(a, c, c.peer(), "f2", "the write to incarnation 2");
  verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 2, 0, 0}}, 0, "incarnation 2 after its write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("nothing arrived through the stale blob; the write through the new one did");
}

// Incarnation 3: the initiator loads its blob as soon as it appears, with no failed transfer in between.
int staleThird(Ctx& c, hetcclAgent_t a, Local& R) {
  step("write through the newest blob");
  expectNotif(a, c, c.peer(), "f3", "the write to incarnation 3");
  verifyRegion(R.p, R.bytes, {{0, 64 * kKiB, c.seed + 4, 0, 0}}, 0, "incarnation 3 after its write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("the write through the blob loaded right after the restart arrived");
}

int staleInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2, sStale = c.seed + 3;
  Local L1 = makeLocal(a, 64 * kKiB, &s1), L2 = makeLocal(a, 64 * kKiB, &s2), LS = makeLocal(a, 64 * kKiB, &sStale);
  step("incarnation 1");
  const Meta m1 = waitMeta(c, peer + ".meta.1");
  loadPeer(a, m1.blob, peer);
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, m1.regions[0].id, 0, 64 * kKiB)}, "f1", "f1");
  runXfer(x1, "the write to incarnation 1");
  checkDataPath(c, "after the write to incarnation 1");
  step("wait for incarnation 2");
  const Meta m2 = waitMeta(c, peer + ".meta.2");
  step("transfers through the stale blob");
  hetcclAgentXfer_t xs =
      prep(a, hetcclAgentWrite, peer, {range(LS.id, 0, m1.regions[0].id, 0, 64 * kKiB)}, "stale", "a write through the old blob");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    std::string msg;
    const std::string what = "post " + std::to_string(attempt) + " of a write through the old blob";
    const hetcclResult_t r = postToEnd(xs, c.timeout + 5, what, &msg);
    if (r == hetcclSuccess) die("%s succeeded: the restarted agent accepted a transfer meant for its old incarnation", what.c_str());
    mustName(msg, peer, what);
    // The second post connects afresh (the first may meet the dead connection to incarnation 1): the agent
    // answering there is incarnation 2, which the blob does not describe -- "stale" (the header's word).
    if (attempt == 2 && msg.find("stale") == std::string::npos)
      die("%s: %s, but the message does not say 'stale': %s", what.c_str(), codeName(r), msg.c_str());
    note("failed as expected: %s: %s: %s", what.c_str(), codeName(r), msg.c_str());
  }
  {
    const hetcclResult_t r = hetcclAgentGenNotif(a, peer.c_str(), "stale-notif", 11);
    const std::string msg = lastError();
    if (r == hetcclSuccess) die("GenNotif through the old blob succeeded");
    mustName(msg, peer, "GenNotif through the old blob");
    note("failed as expected: GenNotif through the old blob: %s: %s", codeName(r), msg.c_str());
  }
  signalFile(c, c.name + ".stale_tried");
  waitFile(c, peer + ".clean", "incarnation 2's check");
  step("the new blob");
  loadPeer(a, m2.blob, peer);
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, peer, {range(L2.id, 0, m2.regions[0].id, 0, 64 * kKiB)}, "f2", "f2");
  runXfer(x2, "the write to incarnation 2");
  step("incarnation 3, loaded as soon as it is up");
  uint64_t s3 = c.seed + 4;
  Local L3 = makeLocal(a, 64 * kKiB, &s3);
  const Meta m3 = waitMeta(c, peer + ".meta.3");
  loadPeer(a, m3.blob, peer);
  hetcclAgentXfer_t x3 = prep(a, hetcclAgentWrite, peer, {range(L3.id, 0, m3.regions[0].id, 0, 64 * kKiB)}, "f3", "f3");
  runXfer(x3, "the first write to incarnation 3, right after loading its blob");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("the stale blob failed naming the peer; the new one works");
}

// ============================================================================== (g) killed or silent peer
//
// init-A streams 1 MiB writes to victim-B and 4 KiB writes to live-C (each with a notification). After 10
// writes to victim-B it signals; the driver SIGKILLs (--mode kill) or SIGSTOPs (--mode stop) victim-B. The
// write to it then in flight, and the next posts, must fail with hetcclRemoteError naming victim-B: after a
// kill within the timeout of the kill, after a stop within the timeout of the post (+3 s of slack); meanwhile
// writes to live-C go on (up to 20 while victim-B's is pending, 10 more after its failure) and live-C checks
// each slot and, at the end, all.

constexpr uint64_t kStreamSlot = 4 * kKiB;
constexpr int kStreamSlots = 4096;
std::string streamMsg(uint32_t r) {
  std::string s = "s";
  s.append(reinterpret_cast<const char*>(&r), 4);
  return s;
}

int sinkTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, 4 * kMiB);
  publishMeta(c, c.name + ".meta", a, {&R});
  step("take notifications until killed");
  const double end = mono() + c.wait;
  Notif n;
  while (mono() < end) {
    if (!tryNotif(a, &n)) napMicros(200);
  }
  die("still alive after %.0f s: the driver should have killed this process", c.wait);
}

int streamTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R = makeLocal(a, kStreamSlots * kStreamSlot + 4096);
  publishMeta(c, c.name + ".meta", a, {&R});
  const uint64_t s = c.seed + 7;
  for (uint32_t k = 0;; ++k) {
    step("take a notification");
    const Notif n = takeNotif(a, c.wait, "write " + std::to_string(k));
    if (n.peer != c.peer()) die("a notification from '%s'", n.peer.c_str());
    if (n.msg.size() == 7 && n.msg.compare(0, 3, "end") == 0) {
      uint32_t total;
      std::memcpy(&total, n.msg.data() + 3, 4);
      if (total != k) die("'end' says %u writes, %u arrived", total, k);
      std::vector<Span> spans;
      for (uint32_t r = 0; r < total; ++r) spans.push_back({r * kStreamSlot, kStreamSlot, s, r * kStreamSlot, 0});
      verifyRegion(R.p, R.bytes, spans, 0, "at the end");
      break;
    }
    if (n.msg != streamMsg(k)) die("notification %s, expected write %u", hexPrefix(n.msg).c_str(), k);
    checkBytes(R.p + k * kStreamSlot, kStreamSlot, Want::Pattern, s, k * kStreamSlot, k * kStreamSlot,
               "write " + std::to_string(k));
  }
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every write arrived while the other target died");
}

int streamInitiator(Ctx& c) {
  const std::string victim = c.args.str("victim"), live = c.args.str("live"), mode = c.args.str("mode");
  if (mode != "kill" && mode != "stop") die("--mode kill|stop");
  step("create");
  hetcclAgent_t a = createAgent(c);
  uint64_t sv = c.seed + 5, sl = c.seed + 7;
  Local LV = makeLocal(a, 4 * kMiB, &sv);
  Local LL = makeLocal(a, kStreamSlots * kStreamSlot, &sl);
  const Meta mv = waitMeta(c, victim + ".meta"), ml = waitMeta(c, live + ".meta");
  loadPeer(a, mv.blob, victim);
  loadPeer(a, ml.blob, live);
  auto victimXfer = [&](int r) {
    return prep(a, hetcclAgentWrite, victim, {range(LV.id, (r % 4) * kMiB, mv.regions[0].id, (r % 4) * kMiB, kMiB)},
                u64msg('v', static_cast<uint64_t>(r)), "write to " + victim);
  };
  hetcclAgentXfer_t xv = nullptr;
  bool vActive = false, vFailed = false, signalled = false;
  double vPost = 0, vFailWall = 0, vFailAfterPost = 0;
  int vDone = 0, whilePending = 0, maxWhilePending = 0;
  uint32_t liveRounds = 0, liveAtFailure = 0;
  std::string vMsg;
  step("stream");
  for (;;) {
    if (!vFailed && !vActive) {
      if (xv) ok(hetcclAgentReleaseXfer(xv), "release");
      xv = victimXfer(vDone);
      ok(hetcclAgentPostXfer(xv), "post to " + victim);
      vActive = true;
      vPost = mono();
      whilePending = 0;
    }
    if (!vActive || whilePending < 20) {
      if (liveRounds >= kStreamSlots) die("%s's failure not seen after %d writes to %s", victim.c_str(), kStreamSlots, live.c_str());
      hetcclAgentXfer_t xl = prep(a, hetcclAgentWrite, live,
                                  {range(LL.id, liveRounds * kStreamSlot, ml.regions[0].id, liveRounds * kStreamSlot, kStreamSlot)},
                                  streamMsg(liveRounds), "write to " + live);
      runXfer(xl, "write " + std::to_string(liveRounds) + " to " + live);
      ok(hetcclAgentReleaseXfer(xl), "release");
      ++liveRounds;
      if (vActive) maxWhilePending = std::max(maxWhilePending, ++whilePending);
    } else {
      napMicros(1000);  // polling the victim's write
    }
    if (vActive) {
      const hetcclResult_t r = hetcclAgentCheckXfer(xv);
      if (r == hetcclSuccess) {
        vActive = false;
        ++vDone;
      } else if (r != hetcclInProgress) {
        vMsg = lastError();
        vFailWall = wallClock();
        vFailAfterPost = mono() - vPost;
        if (r != hetcclRemoteError) die("the write to %s ended with %s, expected hetcclRemoteError: %s", victim.c_str(), codeName(r), vMsg.c_str());
        if (!signalled) die("the write to %s failed before it was killed or stopped: %s", victim.c_str(), vMsg.c_str());
        mustName(vMsg, victim, "the failed write to " + victim);
        vActive = false;
        vFailed = true;
        liveAtFailure = liveRounds;
        note("the write to %s in flight failed: %s", victim.c_str(), vMsg.c_str());
      } else if (mono() - vPost > c.timeout + 3) {
        die("the write to %s still in progress %.1f s after its post (timeout %.1f s)", victim.c_str(), mono() - vPost, c.timeout);
      }
    }
    if (!signalled && vDone >= 10) {
      signalFile(c, c.name + ".streaming");
      signalled = true;
    }
    if (vFailed && liveRounds >= liveAtFailure + 10) break;
  }
  step("timing");
  if (mode == "kill") {
    const std::string killed = waitFile(c, victim + ".killed", "the driver's kill time");
    const double delay = vFailWall - std::strtod(killed.c_str(), nullptr);
    note("the failure was seen %.3f s after the kill (%.1f s after that write's post)", delay, vFailAfterPost);
    if (delay > c.timeout + 2) die("the failure was seen %.1f s after the kill, beyond the timeout of %.1f s", delay, c.timeout);
  } else {
    note("the failure was seen %.2f s after that write's post (timeout %.1f s); %d writes to %s completed while it was pending",
         vFailAfterPost, c.timeout, maxWhilePending, live.c_str());
    if (vFailAfterPost > c.timeout + 3) die("the failure came %.1f s after the post, timeout %.1f s", vFailAfterPost, c.timeout);
    if (maxWhilePending < 5) die("only %d writes to %s completed while the write to the silent peer was pending", maxWhilePending, live.c_str());
  }
  checkDataPath(c, "with a connection to the live target");
  step("later posts to the victim");
  const int later = mode == "kill" ? 3 : 1;
  for (int i = 0; i < later; ++i) {
    const double t = mono();
    hetcclAgentXfer_t x = victimXfer(i);
    expectRemoteFailure(x, c.timeout + 5, victim, "a later post to " + victim);
    note("  (after %.2f s)", mono() - t);
    ok(hetcclAgentReleaseXfer(x), "release");
  }
  step("end");
  std::string end = "end";
  end.append(reinterpret_cast<const char*>(&liveRounds), 4);
  ok(hetcclAgentGenNotif(a, live.c_str(), end.data(), end.size()), "GenNotif end to " + live);
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass(std::to_string(vDone) + " writes to the victim, then failures naming it; " + std::to_string(liveRounds) +
              " writes to the live target");
}

// ============================================================================== (h) bad arguments
//
// Every documented refusal, each checked for its code and a message: creation, metadata, load, forget,
// registration, strided ranges, prepare (unknown peer / region, ranges out of bounds locally and remotely,
// overflowing offsets, 0 bytes, no ranges, more than 4M ranges, a notification of 4097 bytes), post while a post
// runs, post after the local region was deregistered, released handles, GenNotif, GetNotif (a message larger
// than the capacity stays queued). The refused transfers' sources hold a poison pattern aimed at bad-B's
// regions: bad-B checks at the end that only the two good writes arrived.

int badTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB), R1 = makeLocal(a, 64 * kMiB);
  publishMeta(c, c.name + ".meta", a, {&R0, &R1});
  step("load the initiator and notify it");
  const Meta ma = waitMeta(c, c.peer() + ".meta");
  loadPeer(a, ma.blob, c.peer());
  const std::string hello = patString(c.seed + 50, 100);
  ok(hetcclAgentGenNotif(a, c.peer().c_str(), hello.data(), hello.size()), "GenNotif to the initiator");
  step("the good writes");
  expectNotif(a, c, c.peer(), patString(c.seed + 51, HETCCL_AGENT_NOTIF_MAX), "the 4096-byte notification of the first write");
  expectNotif(a, c, c.peer(), "big", "the big write");
  expectNotif(a, c, c.peer(), "end", "the end");
  verifyRegion(R0.p, R0.bytes, {{0, 1000, c.seed + 1, 0, 0}}, 0, "region 0: only the good write");
  verifyRegion(R1.p, R1.bytes, {{0, R1.bytes, c.seed + 2, 0, 0}}, 0, "region 1: the big write");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("only the two good writes arrived");
}

int badInitiator(Ctx& c) {
  const std::string peer = c.peer();
  const hetcclResult_t IA = hetcclInvalidArgument;
  step("options and create");
  refused(hetcclAgentOptionsInit(nullptr), IA, "hetcclAgentOptionsInit(NULL)");
  hetcclAgentOptions_t o;
  ok(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
  if (o.device != -1) die("hetcclAgentOptionsInit: device %d, expected -1 (host memory only)", o.device);
  o.secret = kSecret.data();
  o.secretBytes = kSecret.size();
  o.listenAddress = "127.0.0.1:0";
  o.timeoutSeconds = c.timeout;
  hetcclAgent_t tmp = nullptr;
  refused(hetcclAgentCreate(nullptr, &o, &tmp), IA, "create: NULL name");
  refused(hetcclAgentCreate("", &o, &tmp), IA, "create: empty name");
  refused(hetcclAgentCreate(std::string(HETCCL_AGENT_NAME_MAX + 1, 'a').c_str(), &o, &tmp), IA, "create: a name of 64 characters");
  refused(hetcclAgentCreate("bad name", &o, &tmp), IA, "create: a name with a space");
  refused(hetcclAgentCreate("bad/name", &o, &tmp), IA, "create: a name with a slash");
  refused(hetcclAgentCreate("bad\xc3\xa9", &o, &tmp), IA, "create: a name with a non-ASCII character");
  refused(hetcclAgentCreate("ok-name", &o, nullptr), IA, "create: NULL agent pointer");
  {
    hetcclAgentOptions_t s = o;
    s.secretBytes = 15;
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: a secret of 15 bytes");
    s.secret = nullptr;
    s.secretBytes = 0;
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: no secret (HETCCL_SECRET unset)");
    refused(hetcclAgentCreate("ok-name", nullptr, &tmp), IA, "create: NULL options and HETCCL_SECRET unset");
    s = o;
    s.listenAddress = "not-an-address";
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: listen address 'not-an-address'");
    s.listenAddress = "127.0.0.1:70000";
    refused(hetcclAgentCreate("ok-name", &s, &tmp), IA, "create: port 70000");
    const std::string busy = "127.0.0.1:" + c.args.str("busy-port");
    s.listenAddress = busy.c_str();
    refused(hetcclAgentCreate("ok-name", &s, &tmp), hetcclSystemError, "create: " + busy + " (held by another socket)");
  }
  {
    const std::string longest = std::string("Az09._:-") + std::string(HETCCL_AGENT_NAME_MAX - 8, 'n');
    ok(hetcclAgentCreate(longest.c_str(), &o, &tmp), "create: a name of 63 characters of every allowed kind");
    ok(hetcclAgentDestroy(tmp), "destroy it");
  }
  refused(hetcclAgentDestroy(nullptr), IA, "hetcclAgentDestroy(NULL)");
  hetcclAgent_t a = nullptr;
  ok(hetcclAgentCreate(c.name.c_str(), &o, &a), "create " + c.name);

  step("register");
  std::vector<uint8_t> scratch(64);
  hetcclAgentMem_t mtmp = nullptr;
  uint32_t idtmp = 0;
  refused(hetcclAgentRegister(nullptr, scratch.data(), 64, &mtmp, &idtmp), IA, "register: NULL agent");
  refused(hetcclAgentRegister(a, nullptr, 64, &mtmp, &idtmp), IA, "register: NULL buffer");
  refused(hetcclAgentRegister(a, scratch.data(), 0, &mtmp, &idtmp), IA, "register: 0 bytes");
  refused(hetcclAgentRegister(a, scratch.data(), 64, nullptr, &idtmp), IA, "register: NULL handle pointer");
  uint64_t s1 = c.seed + 1, s2 = c.seed + 2, sBad = c.seed + 666;
  Local L1 = makeLocal(a, 4096, &s1);       // the good small write
  Local LB = makeLocal(a, 64 * kMiB, &s2);  // the big write
  Local LP = makeLocal(a, kMiB, &sBad);     // poison: the refused transfers' source
  {
    hetcclAgentMem_t nullMem = nullptr;
    ok(hetcclAgentRegister(a, scratch.data(), 64, &nullMem, nullptr), "register: id pointer NULL (allowed)");
    ok(hetcclAgentDeregister(nullMem), "deregister it");
  }
  refused(hetcclAgentMemQuery(nullptr, &idtmp, nullptr, nullptr), IA, "hetcclAgentMemQuery(NULL)");
  refused(hetcclAgentMemQuery(L1.mem, nullptr, nullptr, nullptr), IA, "hetcclAgentMemQuery: NULL id pointer");
  ok(hetcclAgentMemQuery(L1.mem, &idtmp, nullptr, nullptr), "hetcclAgentMemQuery with kind and bytes NULL");
  refused(hetcclAgentDeregister(nullptr), IA, "hetcclAgentDeregister(NULL)");

  step("metadata");
  size_t need = 0;
  ok(hetcclAgentGetMetadata(a, nullptr, &need), "metadata size");
  {
    std::string small(need - 1, '\0');
    size_t cap = need - 1;
    refused(hetcclAgentGetMetadata(a, small.data(), &cap), IA, "metadata: capacity one byte short");
    if (cap != need) die("metadata: capacity too small: *bytes %llu, expected the size needed %llu", ull(cap), ull(need));
    refused(hetcclAgentGetMetadata(nullptr, nullptr, &cap), IA, "metadata: NULL agent");
    refused(hetcclAgentGetMetadata(a, small.data(), nullptr), IA, "metadata: NULL size pointer");
  }
  publishMeta(c, c.name + ".meta", a, {&L1});

  step("load");
  const Meta m = waitMeta(c, peer + ".meta");
  char nm[HETCCL_AGENT_NAME_MAX + 1];
  refused(hetcclAgentLoadRemote(nullptr, m.blob.data(), m.blob.size(), nm), IA, "load: NULL agent");
  refused(hetcclAgentLoadRemote(a, nullptr, m.blob.size(), nm), IA, "load: NULL blob");
  refused(hetcclAgentLoadRemote(a, m.blob.data(), m.blob.size(), nullptr), IA, "load: NULL name buffer");
  loadPeer(a, m.blob, peer);
  refused(hetcclAgentForgetRemote(nullptr, peer.c_str()), IA, "forget: NULL agent");
  refused(hetcclAgentForgetRemote(a, nullptr), IA, "forget: NULL name");
  refused(hetcclAgentForgetRemote(a, "nobody"), IA, "forget: an unknown peer");
  const uint32_t r0 = m.regions.at(0).id, r1 = m.regions.at(1).id;
  const uint64_t r0bytes = m.regions[0].bytes;

  step("strided ranges");
  refused(hetcclAgentStridedRanges(nullptr, 3, LP.id, 0, 8, r0, 0, 8, 8), IA, "strided ranges: NULL array");

  step("prepare");
  hetcclAgentXfer_t x = nullptr;
  auto badPrep = [&](hetcclAgent_t ag, int op, const char* pr, const std::vector<hetcclAgentRange_t>& rr,
                     const void* notif, size_t nb, hetcclAgentXfer_t* out, const std::string& what) {
    refused(hetcclAgentPrepXfer(ag, static_cast<hetcclAgentOp_t>(op), pr, rr.empty() ? nullptr : rr.data(), rr.size(), notif,
                                nb, out),
            IA, "prepare: " + what);
  };
  const std::vector<hetcclAgentRange_t> poison = {range(LP.id, 0, r0, 1000, 4096)};
  const std::string n4097(HETCCL_AGENT_NOTIF_MAX + 1, 'n');
  badPrep(nullptr, hetcclAgentWrite, peer.c_str(), poison, nullptr, 0, &x, "NULL agent");
  badPrep(a, 2, peer.c_str(), poison, nullptr, 0, &x, "op 2");
  badPrep(a, -1, peer.c_str(), poison, nullptr, 0, &x, "op -1");
  badPrep(a, hetcclAgentWrite, nullptr, poison, nullptr, 0, &x, "NULL peer");
  badPrep(a, hetcclAgentWrite, "nobody", poison, nullptr, 0, &x, "unknown peer");
  refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), nullptr, 1, nullptr, 0, &x), IA, "prepare: NULL ranges");
  refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), poison.data(), 0, nullptr, 0, &x), IA, "prepare: 0 ranges");
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, nullptr, 0, nullptr, "NULL transfer pointer");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(LP.id, 0, r0, 1000, 0)}, nullptr, 0, &x, "a range of 0 bytes");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {poison[0], range(LP.id, 8192, r0, 9000, 0)}, nullptr, 0, &x,
          "a second range of 0 bytes");
  const uint32_t unknownLocal = std::max({L1.id, LB.id, LP.id}) + 1000;
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(unknownLocal, 0, r0, 1000, 8)}, nullptr, 0, &x, "unknown local region id");
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(0xFFFFFFFFu, 0, r0, 1000, 8)}, nullptr, 0, &x, "local region id 0xffffffff");
  const uint32_t unknownRemote = std::max(r0, r1) + 1000;
  badPrep(a, hetcclAgentWrite, peer.c_str(), {range(LP.id, 0, unknownRemote, 0, 8)}, nullptr, 0, &x, "unknown remote region id");
  badPrep(a, hetcclAgentRead, peer.c_str(), {range(LP.id, 0, 0xFFFFFFFFu, 0, 8)}, nullptr, 0, &x, "read: remote region id 0xffffffff");
  for (int op : {hetcclAgentWrite, hetcclAgentRead}) {
    const std::string o2 = op == hetcclAgentWrite ? "write: " : "read: ";
    badPrep(a, op, peer.c_str(), {range(LP.id, LP.bytes - 10, r0, 1000, 11)}, nullptr, 0, &x, o2 + "local range one byte past the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, LP.bytes, r0, 1000, 1)}, nullptr, 0, &x, o2 + "local range starting at the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, UINT64_MAX - 5, r0, 1000, 10)}, nullptr, 0, &x, o2 + "local offset + bytes overflowing");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, 1000, UINT64_MAX)}, nullptr, 0, &x, o2 + "bytes UINT64_MAX");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, r0bytes - 10, 11)}, nullptr, 0, &x, o2 + "remote range one byte past the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, r0bytes, 1)}, nullptr, 0, &x, o2 + "remote range starting at the end");
    badPrep(a, op, peer.c_str(), {range(LP.id, 0, r0, UINT64_MAX - 5, 10)}, nullptr, 0, &x, o2 + "remote offset + bytes overflowing");
    badPrep(a, op, peer.c_str(), {poison[0], range(LP.id, 8192, r0, r0bytes - 100, 101)}, nullptr, 0, &x,
            o2 + "the second of two ranges remotely out of bounds");
  }
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, n4097.data(), n4097.size(), &x, "a notification of 4097 bytes");
  badPrep(a, hetcclAgentWrite, peer.c_str(), poison, nullptr, 5, &x, "a NULL notification of 5 bytes");
  {
    std::vector<hetcclAgentRange_t> many(4 * 1024 * 1024 + 1, range(LP.id, 0, r0, 1000, 1));
    badPrep(a, hetcclAgentWrite, peer.c_str(), many, nullptr, 0, &x, "4M + 1 ranges");
  }

  step("null transfer handles");
  refused(hetcclAgentPostXfer(nullptr), IA, "hetcclAgentPostXfer(NULL)");
  refused(hetcclAgentCheckXfer(nullptr), IA, "hetcclAgentCheckXfer(NULL)");
  refused(hetcclAgentWaitXfer(nullptr), IA, "hetcclAgentWaitXfer(NULL)");
  refused(hetcclAgentCancelXfer(nullptr), IA, "hetcclAgentCancelXfer(NULL)");
  refused(hetcclAgentReleaseXfer(nullptr), IA, "hetcclAgentReleaseXfer(NULL)");

  step("never posted");
  const std::string n4096 = patString(c.seed + 51, HETCCL_AGENT_NOTIF_MAX);
  hetcclAgentXfer_t g1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, r0, 0, 1000)}, n4096, "the good write (4096-byte notification)");
  refused(hetcclAgentCheckXfer(g1), hetcclInvalidUsage, "check of a transfer never posted");
  refused(hetcclAgentWaitXfer(g1), hetcclInvalidUsage, "wait of a transfer never posted");
  ok(hetcclAgentCancelXfer(g1), "cancel of a transfer never posted (no effect)");
  refused(hetcclAgentCheckXfer(g1), hetcclInvalidUsage, "check after that cancel");
  runXfer(g1, "the good write");
  checkDataPath(c, "after the good write");
  ok(hetcclAgentCancelXfer(g1), "cancel of a completed transfer (no effect)");
  ok(hetcclAgentCheckXfer(g1), "check after cancelling a completed transfer");

  step("post while in progress");
  hetcclAgentXfer_t big = prep(a, hetcclAgentWrite, peer, {range(LB.id, 0, r1, 0, LB.bytes)}, "big", "the big write");
  ok(hetcclAgentPostXfer(big), "post of the big write");
  refused(hetcclAgentPostXfer(big), hetcclInvalidUsage, "a second post while the big write runs");
  refused(hetcclAgentReleaseXfer(big), hetcclInvalidUsage, "release while the big write runs");
  ok(hetcclAgentWaitXfer(big), "wait for the big write");
  ok(hetcclAgentCheckXfer(big), "check after the wait");
  ok(hetcclAgentReleaseXfer(big), "release the big write");

  step("deregistered local region");
  {
    uint8_t* tp = allocBytes(4096);
    fillPat(tp, sBad, 0, 4096);
    Local LT;
    LT.p = tp;
    LT.bytes = 4096;
    registerAt(a, LT);
    hetcclAgentXfer_t xt = prep(a, hetcclAgentWrite, peer, {range(LT.id, 0, r0, 2000, 100)}, "", "a write from a region deregistered next");
    ok(hetcclAgentDeregister(LT.mem), "deregister the local region");
    refused(hetcclAgentPostXfer(xt), IA, "post after its local region was deregistered");
    refused(hetcclAgentMemQuery(LT.mem, &idtmp, nullptr, nullptr), IA, "query of a deregistered region (released handle)");
    refused(hetcclAgentDeregister(LT.mem), IA, "deregister twice (released handle)");
    ok(hetcclAgentReleaseXfer(xt), "release the transfer");
    refused(hetcclAgentCheckXfer(xt), IA, "check of a released transfer");
    refused(hetcclAgentPostXfer(xt), IA, "post of a released transfer");
    refused(hetcclAgentReleaseXfer(xt), IA, "release twice");
  }

  step("GenNotif");
  refused(hetcclAgentGenNotif(nullptr, peer.c_str(), "x", 1), IA, "GenNotif: NULL agent");
  refused(hetcclAgentGenNotif(a, nullptr, "x", 1), IA, "GenNotif: NULL peer");
  refused(hetcclAgentGenNotif(a, "nobody", "x", 1), IA, "GenNotif: unknown peer");
  refused(hetcclAgentGenNotif(a, peer.c_str(), nullptr, 5), IA, "GenNotif: NULL message of 5 bytes");
  refused(hetcclAgentGenNotif(a, peer.c_str(), n4097.data(), n4097.size()), IA, "GenNotif: 4097 bytes");

  step("GetNotif");
  {
    char pn[HETCCL_AGENT_NAME_MAX + 1];
    char small[10];
    size_t bytes = 0;
    int got = 0;
    refused(hetcclAgentGetNotif(nullptr, pn, small, sizeof small, &bytes, &got), IA, "GetNotif: NULL agent");
    refused(hetcclAgentGetNotif(a, pn, small, sizeof small, &bytes, nullptr), IA, "GetNotif: NULL got pointer");
    refused(hetcclAgentGetNotif(a, pn, small, sizeof small, nullptr, &got), IA, "GetNotif: NULL bytes pointer");
    refused(hetcclAgentGetNotif(a, nullptr, small, sizeof small, &bytes, &got), IA, "GetNotif: NULL peer buffer");
    // bad-B sent 100 bytes: a capacity of 10 refuses it (reporting its size) and keeps it queued.
    const std::string hello = patString(c.seed + 50, 100);
    const double end = mono() + c.wait;
    for (;;) {
      bytes = 0;
      got = 7;
      const hetcclResult_t r = hetcclAgentGetNotif(a, pn, small, sizeof small, &bytes, &got);
      if (r == hetcclSuccess) {
        if (got != 0) die("GetNotif with 10 bytes of capacity took a message of %llu bytes", ull(bytes));
        if (mono() > end) die("no notification from %s within %.0f s", peer.c_str(), c.wait);
        napMicros(200);
        continue;
      }
      refused(r, IA, "GetNotif: a message of 100 bytes, capacity 10");
      if (bytes != hello.size()) die("GetNotif: capacity too small: *bytes %llu, expected the message's size 100", ull(bytes));
      break;
    }
    std::string buf(HETCCL_AGENT_NOTIF_MAX, '\0');
    ok(hetcclAgentGetNotif(a, pn, buf.data(), buf.size(), &bytes, &got), "GetNotif with room");
    if (got != 1 || std::string(pn) != peer || std::string(buf.data(), bytes) != hello)
      die("GetNotif: the message refused before is not the one taken next (got %d, from '%s', %llu bytes)", got, pn, ull(bytes));
    ok(hetcclAgentGetNotif(a, pn, buf.data(), buf.size(), &bytes, &got), "GetNotif on an empty queue");
    if (got != 0) die("GetNotif: a second notification that nobody sent");
  }

  step("end");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "end", 3), "GenNotif end");
  ok(hetcclAgentReleaseXfer(g1), "release");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("every bad argument refused with its documented code and a message");
}

// Creates an agent with options NULL or from hetcclAgentOptionsInit (secret from HETCCL_SECRET), expecting --expect.
int createRole(Ctx& c) {
  const hetcclResult_t want = codeByName(c.args.str("expect"));
  for (int withOptions = 0; withOptions < 2; ++withOptions) {
    hetcclAgentOptions_t o;
    ok(hetcclAgentOptionsInit(&o), "hetcclAgentOptionsInit");
    o.listenAddress = "127.0.0.1:0";
    hetcclAgent_t a = nullptr;
    const char* how = withOptions ? "options from hetcclAgentOptionsInit" : "options NULL";
    const hetcclResult_t r = hetcclAgentCreate(c.name.c_str(), withOptions ? &o : nullptr, &a);
    if (want == hetcclSuccess) {
      ok(r, std::string("create with ") + how);
      ok(hetcclAgentDestroy(a), "destroy");
    } else {
      refused(r, want, std::string("create with ") + how);
    }
  }
  return pass(std::string("create with HETCCL_SECRET=") + (std::getenv("HETCCL_SECRET") ? "<set>" : "<unset>") + ": " +
              codeName(want));
}

// ============================================================================== (i) cancel
//
// cancel-B takes a first write, then stops itself (SIGSTOP; the driver checks it is stopped and says so). With
// the target stopped, init-A posts a 64 MiB write (it stays on the wire) and a small one queued behind it, and
// cancels both: each check then reports hetcclInProgress or hetcclInvalidUsage, ending in hetcclInvalidUsage
// (never success), each cancel returns at once. init-A then poisons both sources (a transfer still reading them
// would carry the poison) and the driver continues the target. The next write works, then (once cancel-B has
// checked its memory) both cancelled transfers are posted again. cancel-B's notifications: x0, x5, x4, x2, end -- never the cancelled ones -- and
// after x5 the big write's area holds only canary or pattern bytes (part of it may have arrived), the queued
// one's area only the canary.

const uint64_t kX0 = 0, kX2 = 2 * kMiB, kX5 = 4 * kMiB;
const uint64_t kX2Bytes = 256 * kKiB, kBig = 64 * kMiB;

int cancelTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, 8 * kMiB), R1 = makeLocal(a, kBig);
  publishMeta(c, c.name + ".meta", a, {&R0, &R1});
  const uint64_t s0 = c.seed + 10, s2 = c.seed + 12, s4 = c.seed + 14, s5 = c.seed + 15;
  auto r0spans = [&](bool x2done, bool x5done) {
    std::vector<Span> s = {{kX0, kMiB, s0, kX0, 0}};
    if (x2done) s.push_back({kX2, kX2Bytes, s2, kX2, 0});
    if (x5done) s.push_back({kX5, kMiB, s5, kX5, 0});
    return s;
  };
  step("x0");
  expectNotif(a, c, c.peer(), "x0", "the first write");
  verifyRegion(R0.p, R0.bytes, r0spans(false, false), 0, "after x0");
  verifyRegion(R1.p, R1.bytes, {}, 0, "after x0, the big region");
  step("stop");
  signalFile(c, c.name + ".stopping");
  raise(SIGSTOP);
  note("continued");
  step("x5");
  expectNotif(a, c, c.peer(), "x5", "the write after the cancels (no notification of a cancelled transfer before it)");
  verifyRegion(R0.p, R0.bytes, r0spans(false, true), 0, "after x5 (the queued and cancelled x2 never written)");
  verifyRegion(R1.p, R1.bytes, {{0, kBig, s4, 0, 1}}, 0, "after x5, the area of the cancelled big write (only canary or pattern)");
  signalFile(c, c.name + ".checked");  // the initiator posts the cancelled transfers again only now
  step("x4 again");
  expectNotif(a, c, c.peer(), "x4", "the big write posted again");
  verifyRegion(R1.p, R1.bytes, {{0, kBig, s4, 0, 0}}, 0, "after the big write posted again");
  step("x2 again");
  expectNotif(a, c, c.peer(), "x2", "the small write posted again");
  verifyRegion(R0.p, R0.bytes, r0spans(true, true), 0, "after x2 posted again");
  expectNotif(a, c, c.peer(), "end", "the end");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("no notification nor byte of the queued cancelled write, no poison, the reposts arrived");
}

// Polls Check after a cancel: only InProgress then InvalidUsage; returns how many InProgress were seen.
int cancelledCheck(hetcclAgentXfer_t x, double seconds, const std::string& what) {
  const double end = mono() + seconds;
  int inProgress = 0;
  for (;;) {
    const hetcclResult_t r = hetcclAgentCheckXfer(x);
    if (r == hetcclInvalidUsage) break;
    if (r != hetcclInProgress)
      die("%s: check after the cancel reported %s (expected hetcclInProgress, then hetcclInvalidUsage): %s", what.c_str(),
          codeName(r), lastError().c_str());
    ++inProgress;
    if (mono() > end) die("%s: still hetcclInProgress %.0f s after the cancel", what.c_str(), seconds);
    napMicros(100);
  }
  const std::string msg = lastError();
  note("%s: cancelled (hetcclInProgress %d times, then hetcclInvalidUsage: %s)", what.c_str(), inProgress, msg.c_str());
  refused(hetcclAgentWaitXfer(x), hetcclInvalidUsage, what + ": wait after the cancel");
  return inProgress;
}

int cancelInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  const uint64_t s0 = c.seed + 10, s2 = c.seed + 12, s4 = c.seed + 14, s5 = c.seed + 15;
  Local L0 = makeLocal(a, 8 * kMiB), L1 = makeLocal(a, kBig, &s4);
  fillPat(L0.p + kX0, s0, kX0, kMiB);
  fillPat(L0.p + kX2, s2, kX2, kX2Bytes);
  fillPat(L0.p + kX5, s5, kX5, kMiB);
  const Meta m = waitMeta(c, peer + ".meta");
  loadPeer(a, m.blob, peer);
  const uint32_t r0 = m.regions.at(0).id, r1 = m.regions.at(1).id;
  step("x0");
  hetcclAgentXfer_t x0 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX0, r0, kX0, kMiB)}, "x0", "x0");
  runXfer(x0, "the first write");
  checkDataPath(c, "after the first write");
  ok(hetcclAgentCancelXfer(x0), "cancel of a completed transfer (no effect)");
  ok(hetcclAgentCheckXfer(x0), "check after cancelling a completed transfer");
  step("wait until the target is stopped");
  waitFile(c, peer + ".stopped", "the driver's word that the target is stopped");
  step("post the big write and a queued one");
  hetcclAgentXfer_t x4 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 0, r1, 0, kBig)}, "x4", "x4");
  hetcclAgentXfer_t x2 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX2, r0, kX2, kX2Bytes)}, "x2", "x2");
  ok(hetcclAgentPostXfer(x4), "post of the big write");
  refused(hetcclAgentReleaseXfer(x4), hetcclInvalidUsage, "release of the big write while it runs");
  ok(hetcclAgentPostXfer(x2), "post of the queued write");
  {
    const hetcclResult_t r = hetcclAgentCheckXfer(x2);
    if (r != hetcclInProgress) die("the queued write reports %s before any cancel (its target is stopped): %s", codeName(r), lastError().c_str());
  }
  step("cancel the queued write");
  double t = mono();
  ok(hetcclAgentCancelXfer(x2), "cancel of the queued write");
  double took = mono() - t;
  if (took > 2) die("cancel of the queued write blocked %.1f s", took);
  cancelledCheck(x2, 10, "the queued write");
  {
    const hetcclResult_t r = hetcclAgentCheckXfer(x4);
    if (r != hetcclInProgress) die("the big write reports %s while its target is stopped: %s", codeName(r), lastError().c_str());
  }
  step("cancel the big write on the wire");
  t = mono();
  ok(hetcclAgentCancelXfer(x4), "cancel of the big write");
  took = mono() - t;
  if (took > 2) die("cancel of the big write blocked %.1f s", took);
  cancelledCheck(x4, c.timeout + 5, "the big write");
  step("poison the sources and continue the target");
  std::memset(L1.p, 0x00, kBig);
  std::memset(L0.p + kX2, 0x00, kX2Bytes);
  signalFile(c, c.name + ".cancelled");
  step("the next post");
  hetcclAgentXfer_t x5 = prep(a, hetcclAgentWrite, peer, {range(L0.id, kX5, r0, kX5, kMiB)}, "x5", "x5");
  runXfer(x5, "the write after the cancels");
  waitFile(c, peer + ".checked", "the target's check after x5");
  step("post the cancelled ones again");
  fillPat(L1.p, s4, 0, kBig);
  runXfer(x4, "the big write posted again");
  fillPat(L0.p + kX2, s2, kX2, kX2Bytes);
  runXfer(x2, "the queued write posted again");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "end", 3), "GenNotif end");
  for (auto x : {x0, x2, x4, x5}) ok(hetcclAgentReleaseXfer(x), "release");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("queued and on-the-wire transfers cancelled; the next post and the reposts worked");
}

// ============================================================================== (j) deregistered region
//
// dereg-B takes a write to both regions, deregisters the second and registers the same memory again (a new
// registration at the same address), publishing a new blob. init-A, through the old blob: a write to the old
// region prepared before, one prepared after, a write over the written part, a read -- all fail, and the read's
// local buffer keeps its canary; dereg-B checks its memory holds the first write only. After loading the new
// blob, the transfer prepared against the old registration must still fail (never aliased), and a write to the
// new registration arrives.

int deregTarget(Ctx& c) {
  step("create");
  hetcclAgent_t a = createAgent(c);
  Local R0 = makeLocal(a, kMiB), R1 = makeLocal(a, kMiB);
  publishMeta(c, c.name + ".meta.1", a, {&R0, &R1});
  const uint64_t s0 = c.seed + 20, s1 = c.seed + 21;
  step("j0");
  expectNotif(a, c, c.peer(), "j0", "the first write");
  verifyRegion(R0.p, R0.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 0 after j0");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 1 after j0");
  step("deregister");
  expectNotif(a, c, c.peer(), "dereg", "the request to deregister");
  const uint32_t oldId = R1.id;
  ok(hetcclAgentDeregister(R1.mem), "hetcclAgentDeregister");
  registerAt(a, R1);  // the same memory, registered again
  note("region 1: id %u, registered again at the same address: id %u", oldId, R1.id);
  publishMeta(c, c.name + ".meta.2", a, {&R0, &R1});
  step("wait for the stale attempts");
  waitFile(c, c.peer() + ".stale_done", "the initiator's attempts on the deregistered region");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "the deregistered region's memory after the stale attempts");
  verifyRegion(R0.p, R0.bytes, {{0, 64 * kKiB, s0, 0, 0}}, 0, "region 0 after the stale attempts");
  Notif n;
  if (tryNotif(a, &n)) die("a notification of a failed transfer arrived: %s", hexPrefix(n.msg).c_str());
  signalFile(c, c.name + ".clean");
  step("j1");
  expectNotif(a, c, c.peer(), "j1", "the write to the new registration");
  verifyRegion(R1.p, R1.bytes, {{0, 64 * kKiB, s0, 0, 0}, {128 * kKiB, 64 * kKiB, s1, 128 * kKiB, 0}}, 0,
               "the memory registered again after j1 (and the old transfer posted again never written)");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("nothing reached the deregistered region; the new registration works");
}

int deregInitiator(Ctx& c) {
  const std::string peer = c.peer();
  step("create");
  hetcclAgent_t a = createAgent(c);
  const uint64_t s0 = c.seed + 20, s1 = c.seed + 21, sStale = c.seed + 22;
  Local L0 = makeLocal(a, 64 * kKiB, &s0), LS = makeLocal(a, 128 * kKiB, &sStale), L1 = makeLocal(a, 192 * kKiB, &s1);
  Local LR = makeLocal(a, 64 * kKiB);  // read destination: keeps the canary
  const Meta m1 = waitMeta(c, peer + ".meta.1");
  loadPeer(a, m1.blob, peer);
  const uint32_t r0 = m1.regions.at(0).id, r1 = m1.regions.at(1).id;
  step("j0");
  hetcclAgentXfer_t x0 = prep(a, hetcclAgentWrite, peer, {range(L0.id, 0, r0, 0, 64 * kKiB), range(L0.id, 0, r1, 0, 64 * kKiB)},
                              "j0", "j0");
  runXfer(x0, "the first write");
  checkDataPath(c, "after the first write");
  step("prepare on the region about to go");
  hetcclAgentXfer_t xw = prep(a, hetcclAgentWrite, peer, {range(LS.id, 64 * kKiB, r1, 64 * kKiB, 64 * kKiB)}, "stale-w",
                              "a write to region 1 prepared before its deregistration");
  hetcclAgentXfer_t xr = prep(a, hetcclAgentRead, peer, {range(LR.id, 0, r1, 0, 64 * kKiB)}, "stale-r", "a read of region 1");
  ok(hetcclAgentGenNotif(a, peer.c_str(), "dereg", 5), "GenNotif dereg");
  const Meta m2 = waitMeta(c, peer + ".meta.2");
  step("transfers to the deregistered region");
  auto mustFail = [&](hetcclAgentXfer_t x, const std::string& what) {
    std::string msg;
    const hetcclResult_t r = postToEnd(x, c.timeout + 5, what, &msg);
    if (r == hetcclSuccess) die("%s succeeded: the deregistered region was reached", what.c_str());
    mustName(msg, peer, what);
    if (msg.find("stale") == std::string::npos) die("%s: %s, but the message does not say 'stale': %s", what.c_str(), codeName(r), msg.c_str());
    note("failed as expected: %s: %s: %s", what.c_str(), codeName(r), msg.c_str());
  };
  mustFail(xw, "a write prepared before the deregistration");
  hetcclAgentXfer_t xw2 = prep(a, hetcclAgentWrite, peer, {range(LS.id, 0, r1, 0, 64 * kKiB)}, "stale-w2",
                               "a write over the written part, prepared after");
  mustFail(xw2, "a write over the written part, prepared after the deregistration");
  mustFail(xr, "a read of the deregistered region");
  verifyRegion(LR.p, LR.bytes, {}, 0, "the failed read's destination");
  signalFile(c, c.name + ".stale_done");
  waitFile(c, peer + ".clean", "the target's check");
  step("the new blob");
  loadPeer(a, m2.blob, peer);
  const uint32_t r1new = m2.regions.at(1).id;
  note("region 1: id %u before, %u after registering again", r1, r1new);
  if (r1new != r1) {
    hetcclAgentXfer_t x = nullptr;
    const auto rr = std::vector<hetcclAgentRange_t>{range(LS.id, 0, r1, 0, 8)};
    refused(hetcclAgentPrepXfer(a, hetcclAgentWrite, peer.c_str(), rr.data(), 1, nullptr, 0, &x), hetcclInvalidArgument,
            "a transfer to the old region id after loading the blob without it");
  }
  mustFail(xw, "the write prepared against the old registration, posted again after loading the new blob");
  step("j1");
  hetcclAgentXfer_t x1 = prep(a, hetcclAgentWrite, peer, {range(L1.id, 128 * kKiB, r1new, 128 * kKiB, 64 * kKiB)}, "j1", "j1");
  runXfer(x1, "the write to the new registration");
  step("destroy");
  ok(hetcclAgentDestroy(a), "hetcclAgentDestroy");
  return pass("transfers to the deregistered region failed; the new registration works");
}

// ------------------------------------------------------------------------------------------ dispatch

using RoleFn = int (*)(Ctx&);

const std::map<std::string, RoleFn>& roles() {
  static const std::map<std::string, RoleFn> table = {
      {"write/target", writeTarget},       {"write/initiator", writeInitiator},
      {"read/target", readTarget},         {"read/initiator", readInitiator},
      {"order/target", orderTarget},       {"order/initiator", orderInitiator},
      {"joinleave/target", roundsTarget},  {"joinleave/initiator", joinInitiator},
      {"forged/target", forgedTarget},     {"forged/publisher", publisherRole},
      {"forged/initiator", forgedInitiator}, {"stale/target", staleTarget},
      {"stale/initiator", staleInitiator}, {"kill/sink", sinkTarget},
      {"kill/target", streamTarget},       {"kill/initiator", streamInitiator},
      {"badargs/target", badTarget},       {"badargs/initiator", badInitiator},
      {"badargs/create", createRole},      {"cancel/target", cancelTarget},
      {"cancel/initiator", cancelInitiator}, {"dereg/target", deregTarget},
      {"dereg/initiator", deregInitiator},
  };
  return table;
}

int usage() {
  std::fprintf(stderr, "usage: agent_peer ROLE --scenario S --dir DIR --name NAME [--peer NAME] [--seed N] [--timeout S] "
                       "[--wait S] [--deadline S] [scenario options]\nroles:");
  for (const auto& [k, v] : roles()) std::fprintf(stderr, " %s", k.c_str());
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  Ctx c;
  c.args.role = argv[1];
  for (int i = 2; i < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) return usage();
    c.args.kv[argv[i] + 2] = argv[i + 1];
  }
  if (!c.args.has("scenario") || !c.args.has("dir") || !c.args.has("name")) return usage();
  c.scenario = c.args.str("scenario");
  c.name = c.args.str("name");
  c.dir = c.args.str("dir");
  c.seed = static_cast<uint64_t>(c.args.integer("seed", 1));
  c.timeout = c.args.num("timeout", 20);
  c.wait = c.args.num("wait", 30);
  gTag = "agent_peer " + c.scenario + "/" + c.args.role + " " + c.name;
  const auto it = roles().find(c.scenario + "/" + c.args.role);
  if (it == roles().end()) return usage();
  startWatchdog(c.args.num("deadline", 60));
  return it->second(c);
}
