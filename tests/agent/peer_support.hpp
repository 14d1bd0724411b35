// The shared helpers of agent_peer (agent_peer.cc says what the program does): pass / fail reporting, clocks,
// the watchdog, the arguments, file signalling between the processes, the byte patterns and their checks,
// agents and registered buffers, the metadata files, notifications and transfers. Every failure ends the
// process through die().
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the pattern helpers assume a little-endian host");

namespace hetccl::agent_peer {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint8_t kCanary = 0xC5;
constexpr uint64_t kCanaryWord = 0xC5C5C5C5C5C5C5C5ull;
constexpr int kMemHost = 0;  // hetcclMemHost (hetccl_rma.h), the kind hetcclAgentMemQuery reports for host memory

// The deployment's secret of every test agent (32 bytes); run_agent_scenarios.py passes the same bytes,
// hex-encoded, as HETCCL_SECRET to the roles that read it from the environment (--secret env).
inline const std::string kSecret = "hetccl-agent-ci-secret-32-bytes!";
// Another deployment's secret (32 bytes): its blobs must be refused.
inline const std::string kOtherSecret = "another-deployment-secret-32b-!!";

// ------------------------------------------------------------------------------------------ reporting

extern std::string gTag;
extern std::atomic<const char*> gStep;

inline void step(const char* s) { gStep.store(s); }

inline unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

__attribute__((format(printf, 1, 2))) void note(const char* fmt, ...);
[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char* fmt, ...);

int pass(const std::string& what);
double mono();
double wallClock();

inline void napMicros(int us) { usleep(static_cast<useconds_t>(us)); }

// Ends the process (exit status 3) when `seconds` pass, whatever it is blocked in.
void startWatchdog(double seconds);

const char* codeName(hetcclResult_t r);
hetcclResult_t codeByName(const std::string& s);
std::string lastError();
void ok(hetcclResult_t r, const std::string& what);

// A call that must be refused with `want` and a message; returns the message.
std::string refused(hetcclResult_t r, hetcclResult_t want, const std::string& what);

void mustName(const std::string& msg, const std::string& name, const std::string& what);
std::string hexPrefix(const std::string& s, size_t n = 24);

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
// windows (/dev/shm/hetccl-* segments, seen in /proc/self/maps, the library's word not taken) -- or tcp
// (HETCCL_AGENT_WINDOW=off) or ucx (agents on different hosts): none mapped. Called once the agent has a connection.
void checkDataPath(const Ctx& c, const char* when);

// ------------------------------------------------------------------------------------------ files

std::string waitFile(const Ctx& c, const std::string& file, const char* what);
void signalFile(const Ctx& c, const std::string& file, const std::string& content = "1");

// ------------------------------------------------------------------------------------------ patterns

// p[j] = pat(seed, off + j) for j < n.
void fillPat(uint8_t* p, uint64_t seed, uint64_t off, uint64_t n);
std::string patString(uint64_t seed, size_t n);
std::string u64msg(char tag, uint64_t v);
uint64_t fnv1a(const std::string& s);

// What a byte range must hold.
enum class Want { Pattern, Canary, CanaryOrPattern };

// Checks p[0..n) (region offsets regionOff..) against pat(seed, patOff + j) and/or the canary.
void checkBytes(const uint8_t* p, uint64_t n, Want want, uint64_t seed, uint64_t patOff, uint64_t regionOff,
                const std::string& what);

// Bytes [off, off + n) of a region hold pat(seed, patOff + j) once phase `phase` is done.
struct Span {
  uint64_t off, n, seed, patOff;
  int phase;
};

// Every byte of the region: spans of phases <= done exact, spans of later phases the canary or their pattern
// (possibly in flight), everything else the canary.
void verifyRegion(const uint8_t* p, uint64_t size, std::vector<Span> spans, int done, const std::string& what);

// ------------------------------------------------------------------------------------------ agents, regions

hetcclAgent_t createAgent(const Ctx& c, const std::string& name, const std::string& secretChoice);
hetcclAgent_t createAgent(const Ctx& c);

// A registered buffer of this process.
struct Local {
  uint8_t* p = nullptr;
  uint64_t bytes = 0;
  hetcclAgentMem_t mem = nullptr;
  uint32_t id = 0;
};

uint8_t* allocBytes(uint64_t bytes);
void registerAt(hetcclAgent_t a, Local& l);

// Registers a new buffer of `bytes`: the canary, or pat(seed, offset) when patternSeed is given.
Local makeLocal(hetcclAgent_t a, uint64_t bytes, const uint64_t* patternSeed = nullptr);

// ------------------------------------------------------------------------------------------ metadata files

struct RegionInfo {
  uint32_t id;
  uint64_t bytes;
};
struct Meta {
  std::vector<RegionInfo> regions;
  std::string blob;
};

std::string exportBlob(hetcclAgent_t a);
void publishMeta(const Ctx& c, const std::string& file, hetcclAgent_t a, const std::vector<const Local*>& regions);
Meta waitMeta(const Ctx& c, const std::string& file);
void loadPeer(hetcclAgent_t a, const std::string& blob, const std::string& expectName);

// ------------------------------------------------------------------------------------------ notifications

struct Notif {
  std::string peer, msg;
};

bool tryNotif(hetcclAgent_t a, Notif* out);
Notif takeNotif(hetcclAgent_t a, double seconds, const std::string& what);
void expectNotif(hetcclAgent_t a, const Ctx& c, const std::string& from, const std::string& msg,
                 const std::string& what);

// ------------------------------------------------------------------------------------------ transfers

hetcclAgentRange_t range(uint32_t localRegion, uint64_t localOffset, uint32_t remoteRegion, uint64_t remoteOffset,
                         uint64_t bytes);
hetcclAgentXfer_t prep(hetcclAgent_t a, hetcclAgentOp_t op, const std::string& peer,
                       const std::vector<hetcclAgentRange_t>& ranges, const std::string& notif,
                       const std::string& what);
void runXfer(hetcclAgentXfer_t x, const std::string& what);

// Posts and waits for the end (our deadline); *msg = the message of a failure, whether the post or the
// transfer reported it.
hetcclResult_t postToEnd(hetcclAgentXfer_t x, double seconds, const std::string& what, std::string* msg);

// A transfer to a gone peer: must end in hetcclRemoteError naming it.
void expectRemoteFailure(hetcclAgentXfer_t x, double seconds, const std::string& peer, const std::string& what);

}  // namespace hetccl::agent_peer
