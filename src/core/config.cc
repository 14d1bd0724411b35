#include "core/config.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include <strings.h>

#include "core/error.hpp"
#include "core/log.hpp"

extern char** environ;

namespace hetccl {
namespace {

// Keep sorted by subsystem; hetccl-info prints them in this order.
constexpr std::array kVariables{
    ConfigVar{"HETCCL_DEBUG", "NCCL_DEBUG", "WARN", "log level: NONE, VERSION, WARN, INFO, TRACE"},
    ConfigVar{"HETCCL_DEBUG_SUBSYS", "NCCL_DEBUG_SUBSYS", "ALL",
              "comma list of subsystems to log: INIT, BOOTSTRAP, NET, SHM, COLL, ENGINE, ALL; ^X excludes X"},
    ConfigVar{"HETCCL_TIMEOUT", "", "300",
              "seconds any blocking wait may last before the waiting rank reports the silent peer (fractions allowed)"},
    ConfigVar{"HETCCL_HOST_ID", "", "", "overrides the detected host identity (tests: put ranks of one machine on 'different hosts')"},
    ConfigVar{"HETCCL_DOMAIN", "", "", "overrides the rank's domain name (default: its device runtime, e.g. 'host')"},
    ConfigVar{"HETCCL_DEVICE", "", "auto",
              "device of this rank: auto (cuda when the CUDA plugin loads and sees a GPU, else hip when the HIP plugin does; the drop-in librccl.so tries hip first), host, cuda, hip"},
    ConfigVar{"HETCCL_VENDOR_CCL", "", "auto",
              "auto: the domain's vendor library (NCCL for cuda ranks, RCCL for hip ranks) serves GPU domains when it loads on every rank (a single domain: every device call delegated; several domains of one host: the phases inside each domain), off: never, nccl / rccl: that flavour whatever the device (testing the RCCL adaptor against NCCL under another name)"},
    ConfigVar{"HETCCL_CHECK_CALLS", "", "0",
              "1: ranks compare every group's collectives (type, count, op, root) first and fail clearly on a mismatch (debugging; one extra round trip per call)"},
    ConfigVar{"HETCCL_COMM_ID", "NCCL_COMM_ID", "", "ip:port the root binds for hetcclGetUniqueId (default: an ephemeral port)"},
    ConfigVar{"HETCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "", "network interface(s) for bootstrap, tcp and ucx (UCX_NET_DEVICES derived from it), e.g. eth0 or ^docker"},
    ConfigVar{"HETCCL_UNIQUE_ID", "", "", "hex unique id handed to ranks by hetccl-run (tools read it; the library does not)"},
    ConfigVar{"HETCCL_SECRET", "", "", "job secret (hex, >= 32 digits) for launchers that cannot pass a unique id (torchrun, mpirun, srun)"},
    ConfigVar{"HETCCL_AUTH_FAILURE_GRACE", "", "5",
              "seconds the rendezvous root still waits for a rank after a client claiming that rank failed authentication (a rank started with another HETCCL_SECRET or unique id), then fails init on every rank naming it; 0: wait until HETCCL_TIMEOUT (no unauthenticated client can then shorten init; docs/SECURITY.md)"},
    ConfigVar{"HETCCL_RANK", "", "", "this process's rank, set by hetccl-run (tools read it; the library does not)"},
    ConfigVar{"HETCCL_NRANKS", "", "", "number of ranks of the job, set by hetccl-run (tools read it)"},
    ConfigVar{"HETCCL_LOCAL_RANK", "", "", "rank among the processes of this host, set by hetccl-run (tools read it)"},
    ConfigVar{"HETCCL_LOCAL_SIZE", "", "", "processes on this host, set by hetccl-run (tools read it)"},
    ConfigVar{"HETCCL_TRANSPORT", "", "auto",
              "transport between ranks: auto (shm on one host; between hosts ucx where HETCCL_UCX allows it, else tcp), shm, tcp, ucx (every pair, one host included)"},
    ConfigVar{"HETCCL_UCX", "", "auto",
              "ucx transport under HETCCL_TRANSPORT=auto: auto (between two hosts that both have an RDMA device and load libucp; without RDMA, UCX would run over tcp, slower than hetccl's tcp), on (between hosts whenever libucp loads, RDMA or not; a rank without a usable UCX fails init), off (tcp between hosts). Agents (hetccl_agent.h) follow it for their payload to agents of other hosts; one whose peer does not allow it uses tcp"},
    ConfigVar{"HETCCL_RDMA_SYSFS", "", "/sys/class/infiniband",
              "directory listing the host's RDMA devices (InfiniBand, RoCE, iWARP); HETCCL_UCX=auto uses ucx between two hosts only when it lists a device on both"},
    ConfigVar{"HETCCL_UCX_LIB", "", "", "path of the libucp the ucx transport opens (default: libucp.so.0 from the dynamic loader's search path)"},
    ConfigVar{"HETCCL_NET_DEVICES", "", "",
              "ucx transport: network devices UCX may use (UCX_NET_DEVICES syntax, e.g. mlx5_0:1,eth0); ignored when UCX_NET_DEVICES is set; default: the interfaces HETCCL_SOCKET_IFNAME allows and their RDMA ports where it is set, else UCX's own choice. UCX_TLS, UCX_NET_DEVICES and every other UCX_* variable reach UCX unchanged"},
    ConfigVar{"HETCCL_RMA_PIECE_BYTES", "", "1M",
              "RMA (hetccl_rma.h): largest transport message of a put/get, 4K..64M; larger ranges are cut"},
    ConfigVar{"HETCCL_RMA_PACK_BYTES", "", "64K",
              "RMA: ranges of a batch up to this size are packed into shared messages (0: never), up to 64M"},
    ConfigVar{"HETCCL_RMA_WINDOW", "", "auto",
              "RMA between ranks of one host: auto (through a pinned shared-memory window, copy engines on both sides, when either rank has a GPU), on (for every pair of one host), off (the transport, device memory staged)"},
    ConfigVar{"HETCCL_RMA_IPC", "", "auto",
              "RMA between GPU ranks of one vendor on one host: auto (the target maps the initiator's device allocation with the vendor's IPC handles and copies device to device, where the runtime allows it), off (window or transport)"},
    ConfigVar{"HETCCL_RMA_NOTIFY_QUEUE", "", "1M",
              "RMA: notifications received and not yet taken (hetcclNotifyPoll/Wait), at most, 1K..16M (~100 bytes each); beyond it a sender's later messages wait until some are taken"},
    ConfigVar{"HETCCL_RMA_WINDOW_SLOTS", "", "4", "RMA window: slots per pair of ranks of one host and direction, 2..64"},
    ConfigVar{"HETCCL_RMA_WINDOW_BYTES", "", "4M", "RMA window: bytes per slot, 64K..1G (a multiple of 64)"},
    ConfigVar{"HETCCL_AGENT_WINDOW", "", "auto",
              "agents (hetccl_agent.h) of one host: auto (their data crosses a pair of shared-memory windows per connection, HETCCL_RMA_WINDOW_SLOTS x HETCCL_RMA_WINDOW_BYTES each), off (over the connection's tcp socket)"},
    ConfigVar{"HETCCL_AGENT_IPC", "", "auto",
              "agents (hetccl_agent.h) of one host and GPU vendor: auto (device memory is copied device to device: the target maps the initiator's allocation with the vendor's IPC handle, where the runtime allows it), off (the window or the socket, as HETCCL_AGENT_WINDOW says)"},
    ConfigVar{"HETCCL_TCP_SOCKETS", "NCCL_NSOCKS_PERTHREAD", "4", "tcp sockets (and threads) per peer and direction, 1..16"},
    ConfigVar{"HETCCL_SHM_SLOT_BYTES", "", "512K", "bytes per shared-memory ring slot"},
    ConfigVar{"HETCCL_SHM_SLOTS", "", "8", "slots per shared-memory ring (one ring per peer and direction)"},
    ConfigVar{"HETCCL_CHUNK_BYTES", "", "512K", "pipeline chunk of the engine (bytes)"},
    ConfigVar{"HETCCL_ALGO", "NCCL_ALGO", "auto", "force an algorithm: auto, ring, tree, rd (recursive doubling), hier"},
    ConfigVar{"HETCCL_TUNING_FILE", "", "",
              "per-machine tuning table for host all-reduces under HETCCL_ALGO=auto (rows: all_reduce RANKS DOMAINS HOSTS TRANSPORT UP_TO_BYTES ALGORITHM; bench/run_algo_sweep.py --write-tuning writes it); its rows for a communicator's layout must be the same on every rank"},
    ConfigVar{"HETCCL_IDLE_SPIN", "", "auto",
              "host engine: how long a rank waiting for a peer polls before it sleeps in short steps: auto (long where the host's ranks do not outnumber its cores and every peer is reached through shared memory, else short), short (200 us), long (2 ms)"},
    ConfigVar{"HETCCL_SMALL_BYTES", "", "64K", "messages up to this size use latency-bound algorithms (tree / recursive doubling)"},
    ConfigVar{"HETCCL_GPU_EXEC", "", "auto",
              "device calls not delegated whole to the vendor CCL: auto (several domains with the vendor CCL loading on every rank: stream pipeline with the vendor CCL inside each domain, on one host or several; else GPU ranks of one host: stream pipeline; else host staging), pipeline (stream pipeline, no vendor CCL inside domains; between hosts too, its rings mirrored over tcp/ucx by a ring proxy), staged (through host memory, host engine)"},
    ConfigVar{"HETCCL_GPU_CHUNK_BYTES", "", "4M", "pipeline chunk of the stream pipeline between GPU ranks (bytes)"},
    ConfigVar{"HETCCL_GPU_MIN_CHUNK_BYTES", "", "1M",
              "stream pipeline: smallest chunk mid-size operations are split into (every chunk costs a few stream operations)"},
    ConfigVar{"HETCCL_GPU_LL_BYTES", "", "64K",
              "latency path, GPU ranks of one host (2..16): an all-reduce up to this size runs as one kernel per rank through pinned host memory instead of the stream pipeline; 0: off (off too while HETCCL_ALGO forces an algorithm)"},
    ConfigVar{"HETCCL_GPU_PAIR_EXCHANGE_BYTES", "", "64M",
              "stream pipeline, two ranks: all-reduce up to this size as one exchange + local reduce (fewer hops)"},
    ConfigVar{"HETCCL_HIER_CHUNK_BYTES", "", "64M",
              "hierarchical collectives with the vendor library inside domains: pipeline chunk (a vendor call per phase and chunk)"},
    ConfigVar{"HETCCL_HIER_NET_MIN_CHUNK_BYTES", "", "64M",
              "hierarchical collectives with the vendor library inside domains, ranks on several hosts: smallest pipeline chunk (each chunk's cross-domain exchange pays network round trips)"},
    ConfigVar{"HETCCL_STAGED_PIECE_BYTES", "", "16M",
              "host staging of device buffers (several hosts, GPU and CPU ranks mixed, HETCCL_GPU_EXEC=staged): a large all-reduce/broadcast/reduce is cut into pieces of this size whose device copies overlap the network exchange (0: every call staged whole, unpipelined)"},
    ConfigVar{"HETCCL_STAGED_SLOTS", "", "4", "host staging: pieces staged at once (pinned slots), 2..64"},
    ConfigVar{"HETCCL_GPU_SLOTS", "", "8", "slots per pinned shared-memory ring of the stream pipeline (one ring per peer and direction)"},
    ConfigVar{"HETCCL_CUDA_PLUGIN", "", "",
              "path of libhetccl-cuda.so (default: next to libhetccl.so, then the dynamic loader's search path)"},
    ConfigVar{"HETCCL_HIP_PLUGIN", "", "",
              "path of libhetccl-hip.so (default: next to libhetccl.so, then the dynamic loader's search path)"},
    ConfigVar{"HETCCL_HIP_RUNTIME_LIB", "", "",
              "path of the HIP runtime the HIP plugin opens (default: libamdhip64.so.7, .so.6, .so.5, libamdhip64.so)"},
    ConfigVar{"HETCCL_HIP_KERNEL_CACHE", "", "",
              "folder of the HIP plugin's run-time compiled kernels for GPUs without a built-in code object (default: $XDG_CACHE_HOME/hetccl or ~/.cache/hetccl; 'off': compile every time)"},
    ConfigVar{"HETCCL_HIPRTC_LIB", "", "",
              "path of the hiprtc library the HIP plugin compiles kernels with (default: libhiprtc.so.<runtime major>, the runtime's own hiprtc symbols, libhiprtc.so.7, .so.6)"},
    ConfigVar{"HETCCL_HIP_ARCH", "", "",
              "GPU architecture the HIP plugin loads kernels for, e.g. gfx90a (default: read from the device)"},
    ConfigVar{"HETCCL_RCCL_LIB", "", "",
              "path of the real RCCL library for collectives inside a hip domain (default: search librccl.so.1, librccl.so; ROCm: /opt/rocm/lib)"},
    ConfigVar{"HETCCL_NCCL_LIB", "", "",
              "path of the real NCCL library for collectives inside a domain (default: search; pip wheels: .../nvidia/nccl/lib/libnccl.so.2)"},
    ConfigVar{"HETCCL_NCCL_VERSION", "", "2.28.9",
              "version the drop-in libnccl.so.2 / librccl.so reports (ncclGetVersion): X.Y.Z or a code like 22809; at least the NCCL the application was built against"},
    ConfigVar{"HETCCL_CHECKSUM", "", "0",
              "1: CRC32C of every piece the shm, tcp and ucx transports move between ranks; a mismatch fails the call naming the link (every rank should agree)"},
};
static_assert(kVariables.size() <= 64, "grow Config::entries_");

/// Sane ranges of the size variables, enforced by Config::integer on top of the caller's own range (a
/// value that is valid but absurd, e.g. HETCCL_CHUNK_BYTES=1, turned a 4 MiB call into 32 s and 575 MB).
struct SizeBound {
  std::string_view name;
  int64_t lo;
  int64_t hi;
  std::string_view why;
};
constexpr int64_t kKiB = 1 << 10, kMiB = 1 << 20, kGiB = 1 << 30;
constexpr std::array kSizeBounds{
    SizeBound{"HETCCL_CHUNK_BYTES", 4 * kKiB, kGiB, "smaller chunks cost a round trip each; larger ones gain nothing"},
    SizeBound{"HETCCL_SMALL_BYTES", 0, kGiB, "the latency-bound algorithms are for small messages"},
    SizeBound{"HETCCL_SHM_SLOT_BYTES", 4 * kKiB, 256 * kMiB,
              "every peer and direction gets HETCCL_SHM_SLOTS such slots of /dev/shm"},
    SizeBound{"HETCCL_SHM_SLOTS", 2, 1024, "every peer and direction gets a ring of this many slots in /dev/shm"},
    SizeBound{"HETCCL_GPU_CHUNK_BYTES", 64 * kKiB, kGiB, "every chunk costs a few stream operations"},
    SizeBound{"HETCCL_HIER_CHUNK_BYTES", 64 * kKiB, 16 * kGiB, "every chunk costs a vendor call per phase"},
    SizeBound{"HETCCL_HIER_NET_MIN_CHUNK_BYTES", 64 * kKiB, 16 * kGiB, "every chunk costs a vendor call per phase"},
    SizeBound{"HETCCL_GPU_MIN_CHUNK_BYTES", 4 * kKiB, kGiB, "every chunk costs a few stream operations"},
    SizeBound{"HETCCL_STAGED_PIECE_BYTES", 0, kGiB, "every piece costs a host-engine collective and a few stream operations"},
    SizeBound{"HETCCL_STAGED_SLOTS", 2, 64, "every slot is a piece's pinned staging"},
    SizeBound{"HETCCL_GPU_SLOTS", 2, 1024, "every peer and direction gets a pinned ring of this many slots"},
    SizeBound{"HETCCL_GPU_PAIR_EXCHANGE_BYTES", 0, 64 * kGiB, "a threshold on message size"},
    SizeBound{"HETCCL_GPU_LL_BYTES", 0, kMiB, "every rank's board holds two sets of twice this many bytes, read by every peer"},
    SizeBound{"HETCCL_RMA_PIECE_BYTES", 4 * kKiB, 64 * kMiB, "every RMA piece costs a message; each holds a staging buffer"},
    SizeBound{"HETCCL_RMA_PACK_BYTES", 0, 64 * kMiB, "a threshold on range size"},
    SizeBound{"HETCCL_RMA_WINDOW_SLOTS", 2, 64, "every pair of ranks of one host gets this many slots of /dev/shm each way"},
    SizeBound{"HETCCL_RMA_WINDOW_BYTES", 64 * kKiB, kGiB, "every pair of ranks of one host gets HETCCL_RMA_WINDOW_SLOTS such slots each way"},
    // 16 = tcp::kMaxSockets (tcp_hello.hpp): checked at init even when no pair of ranks uses tcp.
    SizeBound{"HETCCL_TCP_SOCKETS", 1, 16, "the tcp hello carries at most 16 sockets per peer and direction"},
    SizeBound{"HETCCL_AUTH_FAILURE_GRACE", 0, 86400, "seconds (0: wait until HETCCL_TIMEOUT)"},
};

/// Variables with a fixed set of values, checked at init whether or not this communicator's path reads
/// them (HETCCL_GPU_EXEC=fast on a CPU rank was accepted without a word). Log levels are
/// case-insensitive, as NCCL's (NCCL_DEBUG=info is what NCCL users type); the others are lower case.
struct Choice {
  std::string_view name;
  std::string_view values;  // ", "-separated
  bool anyCase;
};
constexpr std::array kChoices{
    Choice{"HETCCL_DEBUG", "NONE, VERSION, WARN, INFO, TRACE", true},
    Choice{"HETCCL_DEVICE", "auto, host, cuda, hip", false},
    Choice{"HETCCL_VENDOR_CCL", "auto, off, nccl, rccl", false},
    Choice{"HETCCL_TRANSPORT", "auto, shm, tcp, ucx", false},
    Choice{"HETCCL_UCX", "auto, on, off", false},
    Choice{"HETCCL_RMA_WINDOW", "auto, on, off", false},
    Choice{"HETCCL_RMA_IPC", "auto, off", false},
    Choice{"HETCCL_AGENT_WINDOW", "auto, off", false},
    Choice{"HETCCL_AGENT_IPC", "auto, off", false},
    Choice{"HETCCL_ALGO", "auto, ring, tree, rd, hier", false},
    Choice{"HETCCL_IDLE_SPIN", "auto, short, long", false},
    Choice{"HETCCL_GPU_EXEC", "auto, pipeline, staged", false},
};
constexpr std::array kBooleans{std::string_view{"HETCCL_CHECK_CALLS"}, std::string_view{"HETCCL_CHECKSUM"}};

bool oneOf(const Choice& c, const std::string& v) {
  std::string_view rest = c.values;
  while (!rest.empty()) {
    size_t comma = rest.find(", ");
    std::string_view item = rest.substr(0, comma);
    if (item.size() == v.size() &&
        (c.anyCase ? strncasecmp(item.data(), v.data(), v.size()) == 0 : item == v))
      return true;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
  }
  return false;
}

/// HETCCL_* names read outside the library (the Python package, the tools' build, the test scripts): not
/// misspellings. Names starting with HETCCL_TEST_ or HETCCL_NETNS_ are the tests' too.
constexpr std::array<std::string_view, 14> kReadElsewhere{
    "HETCCL_LIBRARY", "HETCCL_BUNDLE_LIBRARY", "HETCCL_SOURCE_ROOT", "HETCCL_PYTEST_SUMMARY_DIR", "HETCCL_SIM_SEED",
    "HETCCL_WIRE_VECTORS_DIR", "HETCCL_WRITE_WIRE_VECTORS", "HETCCL_BENCH_DEPS", "HETCCL_CTEST_ARGS",
    "HETCCL_IN_PRIVATE_SHM", "HETCCL_PREBUILT", "HETCCL_FUZZ_SECONDS", "HETCCL_SOAK_SECONDS",
    "HETCCL_WRITE_DOCS"};

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

const SizeBound* sizeBound(std::string_view name) {
  for (const SizeBound& b : kSizeBounds)
    if (b.name == name) return &b;
  return nullptr;
}

std::unique_ptr<Config>& current() {
  static std::unique_ptr<Config> c;
  return c;
}

const char* lookup(std::string_view name) {
  if (name.empty()) return nullptr;
  return std::getenv(std::string(name).c_str());
}

int64_t parseInteger(std::string_view var, const std::string& text) {
  if (text.empty()) throw InvalidArgument(concat(var, " is empty; expected an integer"));
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str()) throw InvalidArgument(concat(var, "='", text, "' is not an integer"));
  int64_t mult = 1;
  std::string_view rest(end);
  if (rest == "K" || rest == "k") mult = 1LL << 10;
  else if (rest == "M" || rest == "m") mult = 1LL << 20;
  else if (rest == "G" || rest == "g") mult = 1LL << 30;
  else if (!rest.empty()) throw InvalidArgument(concat(var, "='", text, "' has trailing characters"));
  if (v > INT64_MAX / mult || v < INT64_MIN / mult) throw InvalidArgument(concat(var, "='", text, "' overflows"));
  return v * mult;
}

}  // namespace

std::span<const ConfigVar> Config::variables() { return kVariables; }

Config Config::fromEnvironment() {
  Config c;
  c.count_ = kVariables.size();
  for (size_t i = 0; i < kVariables.size(); ++i) {
    const char* v = lookup(kVariables[i].name);
    if (!v) v = lookup(kVariables[i].ncclAlias);
    c.entries_[i].set = v != nullptr;
    c.entries_[i].value = v ? v : std::string(kVariables[i].defaultValue);
  }
  return c;
}

const Config::Entry& Config::entry(std::string_view name) const {
  for (size_t i = 0; i < count_; ++i)
    if (kVariables[i].name == name) return entries_[i];
  throw InternalError(concat("undeclared configuration variable ", name));
}

std::string Config::str(std::string_view name) const { return entry(name).value; }
bool Config::isSet(std::string_view name) const { return entry(name).set; }

int64_t Config::integer(std::string_view name, int64_t lo, int64_t hi) const {
  int64_t v = parseInteger(name, entry(name).value);
  std::string_view why;
  if (const SizeBound* b = sizeBound(name)) {
    lo = std::max(lo, b->lo);
    hi = std::min(hi, b->hi);
    why = b->why;
  }
  if (v < lo || v > hi)
    throw InvalidArgument(concat(name, "=", v, " is outside [", lo, ", ", hi, "]", why.empty() ? "" : " (", why,
                                 why.empty() ? "" : ")"));
  return v;
}

void Config::checkSizes() const {
  for (const SizeBound& b : kSizeBounds)
    if (isSet(b.name)) (void)integer(b.name);
}

void Config::checkValues() const {
  checkSizes();
  for (const Choice& c : kChoices) {
    if (!isSet(c.name)) continue;
    const std::string& v = entry(c.name).value;
    if (!(oneOf(c, v) || (v.empty() && c.name == "HETCCL_DEBUG")))
      throw InvalidArgument(concat(c.name, "='", v, "' is not one of ", c.values,
                                   c.anyCase ? " (any case)" : ""));
  }
  for (std::string_view b : kBooleans)
    if (isSet(b)) (void)boolean(b);
  if (isSet("HETCCL_TIMEOUT")) (void)timeoutMs();
}

std::vector<std::string> Config::unknownVariables() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    if (!name.starts_with("HETCCL_") || name.starts_with("HETCCL_TEST_") || name.starts_with("HETCCL_NETNS_"))
      continue;
    auto declared = [&](const ConfigVar& v) { return v.name == name; };
    if (std::any_of(kVariables.begin(), kVariables.end(), declared) ||
        std::find(kReadElsewhere.begin(), kReadElsewhere.end(), name) != kReadElsewhere.end())
      continue;
    std::string_view best;
    size_t bestDistance = 4;  // suggest only a near name
    for (const ConfigVar& v : kVariables) {
      size_t d = editDistance(name, v.name);
      if (d < bestDistance) bestDistance = d, best = v.name;
    }
    out.push_back(best.empty() ? std::string(name) : concat(name, " (did you mean ", best, "?)"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Config::warnUnknownVariablesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& u : unknownVariables())
      HETCCL_WARN(log::kInit, "unknown configuration variable ", u, " is ignored (hetccl-info lists them all)");
  });
}

bool Config::boolean(std::string_view name) const {
  const std::string& v = entry(name).value;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) return false;
  throw InvalidArgument(concat(name, "='", v, "' is not a boolean (1/0, true/false, yes/no, on/off)"));
}

int64_t Config::timeoutMs() const {
  const std::string& v = entry("HETCCL_TIMEOUT").value;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 1e7)
    throw InvalidArgument(concat("HETCCL_TIMEOUT='", v, "' is not a positive number of seconds"));
  return static_cast<int64_t>(s * 1000.0);
}

const Config& config() {
  auto& c = current();
  static const bool once = [&] {
    if (!c) c = std::make_unique<Config>(Config::fromEnvironment());
    return true;
  }();
  (void)once;
  return *c;
}

void reloadConfig() { current() = std::make_unique<Config>(Config::fromEnvironment()); }

}  // namespace hetccl
