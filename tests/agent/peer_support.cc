// The shared helpers of agent_peer (peer_support.hpp says what each does).
#include "peer_support.hpp"

#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace hetccl::agent_peer {

// ------------------------------------------------------------------------------------------ reporting

std::string gTag = "agent_peer";
std::atomic<const char*> gStep{"start"};

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

std::string hexPrefix(const std::string& s, size_t n) {
  std::string out;
  char b[4];
  for (size_t i = 0; i < s.size() && i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(s[i]));
    out += b;
  }
  if (s.size() > n) out += "...";
  return out;
}

void checkDataPath(const Ctx& c, const char* when) {
  if (!c.args.has("path")) return;
  const std::string path = c.args.str("path");
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (!f) die("cannot read /proc/self/maps");
  char line[4096];
  int shm = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strstr(line, "/dev/shm/hetccl-")) ++shm;  // hetccl's segments, not UCX's own (UCX_TLS with shm)
  std::fclose(f);
  if (path == "window" && shm == 0)
    die("%s: no shared-memory segment is mapped: the data did not go through the window path", when);
  if (path != "window" && shm != 0)
    die("%s: %d shared-memory mappings on the %s path: the window path was used", when, shm, path.c_str());
  note("%s: %s path (%d shared-memory mappings)", when, path.c_str(), shm);
}

// ------------------------------------------------------------------------------------------ files

namespace {

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

}  // namespace

std::string waitFile(const Ctx& c, const std::string& file, const char* what) {
  const double end = mono() + c.wait;
  std::string data;
  for (;;) {
    if (readFile(c.path(file), &data)) return data;
    if (mono() > end) die("waited %.0f s for %s (file %s): the other process never got there", c.wait, what, file.c_str());
    napMicros(2000);
  }
}

void signalFile(const Ctx& c, const std::string& file, const std::string& content) {
  writeFileAtomic(c.path(file), content);
}

// ------------------------------------------------------------------------------------------ patterns

namespace {

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

}  // namespace

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

namespace {

// Buffers live until the process exits (an agent may touch registered memory until it is destroyed): they
// are kept in a list that stays reachable, so LeakSanitizer does not report them.
std::vector<void*>& buffers() {
  static auto* all = new std::vector<void*>;  // never destroyed: still reachable when LeakSanitizer looks
  return *all;
}

}  // namespace

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

Local makeLocal(hetcclAgent_t a, uint64_t bytes, const uint64_t* patternSeed) {
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

namespace {

void putU32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void putU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

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

namespace {

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


}  // namespace

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

void expectRemoteFailure(hetcclAgentXfer_t x, double seconds, const std::string& peer, const std::string& what) {
  std::string msg;
  const hetcclResult_t r = postToEnd(x, seconds, what, &msg);
  if (r != hetcclRemoteError)
    die("%s: expected hetcclRemoteError, got %s (%d): %s", what.c_str(), codeName(r), static_cast<int>(r), msg.c_str());
  mustName(msg, peer, what);
  note("failed as expected: %s: %s", what.c_str(), msg.c_str());
}

}  // namespace hetccl::agent_peer
