// hetccl-perf: nccl-tests-compatible bandwidth and correctness measurement, through the public C API.
// Exit status: 0 all results correct, 1 some element wrong, 2 usage or runtime error. Each rank's status
// comes from its own comparisons (the summed counts go through hetccl and only fill the table); the
// launcher (hetccl-run) fails when any rank does and names it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "collective.hpp"
#include "common/launch_env.hpp"
#include "data_pattern.hpp"
#include "gpu_runtime_api.hpp"
#include "perf_options.hpp"
#include "perf_runner.hpp"
#include "report.hpp"

namespace hetccl::perf {
namespace {

/// The domain this rank is in, as the library names it (src/bootstrap/detect_self.cc): HETCCL_DOMAIN, else
/// its device kind ("host" for a CPU rank; `gpuKind` for a GPU rank, "gpu" when the tool does not know it).
std::string domainOf(int device, const std::string& gpuKind) {
  const char* set = std::getenv("HETCCL_DOMAIN");
  if (set && *set) return set;
  return device < 0 ? "host" : gpuKind;
}

/// "#  Rank  0 Group  0 Pid  1234 on host device -1 [host] domain host" for every rank (nccl-tests' columns,
/// then the rank's domain), gathered through the library; also every rank's host and domain into `run`.
void gatherRanks(hetcclComm_t comm, int nranks, const std::string& gpuKind, PerfRun& run) {
  struct Record {
    char host[56];
    char domain[40];
    int32_t pid;
    int32_t device;
  } mine{};
  gethostname(mine.host, sizeof mine.host - 1);
  mine.pid = static_cast<int32_t>(getpid());
  int device = -1;
  checkResult(hetcclCommCuDevice(comm, &device), "hetcclCommCuDevice", comm);
  mine.device = device;
  std::snprintf(mine.domain, sizeof mine.domain, "%s", domainOf(device, gpuKind).c_str());
  std::vector<Record> all(static_cast<size_t>(nranks));
  checkResult(hetcclAllGather(&mine, all.data(), sizeof(Record), hetcclUint8, comm, nullptr),
              "all-gather of the rank descriptions", comm);
  for (int r = 0; r < nranks; ++r) {
    char line[200];
    all[r].host[sizeof all[r].host - 1] = '\0';
    all[r].domain[sizeof all[r].domain - 1] = '\0';
    std::snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] domain %s", r, all[r].pid,
                  all[r].host, all[r].device, all[r].device < 0 ? "host" : "gpu", all[r].domain);
    run.rankLines.emplace_back(line);
    run.rankHosts.emplace_back(all[r].host);
    run.rankDomains.emplace_back(all[r].domain);
  }
}

/// The reduction handle to pass; a PreMulSum op is created with this rank's factor.
hetcclRedOp_t makeRedOp(const PerfOptions& o, hetcclComm_t comm, int rank) {
  switch (o.op) {
    case OpKind::Sum: return hetcclSum;
    case OpKind::Prod: return hetcclProd;
    case OpKind::Max: return hetcclMax;
    case OpKind::Min: return hetcclMin;
    case OpKind::Avg: return hetcclAvg;
    case OpKind::PreMulSum: break;
  }
  uint64_t scalar = encodeElement(o.type.type, preMulScalar(rank));  // little-endian: low bytes first
  hetcclRedOp_t op{};
  checkResult(hetcclRedOpCreatePreMulSum(&op, &scalar, o.type.type, hetcclScalarHostImmediate, comm),
              "hetcclRedOpCreatePreMulSum", comm);
  return op;
}

/// The sizes of the sweep: from -b to -e, multiplying by -f or adding -i.
std::vector<size_t> sweepSizes(const PerfOptions& o) {
  std::vector<size_t> sizes;
  for (size_t size = o.minBytes; size <= o.maxBytes;) {
    sizes.push_back(size);
    const size_t next = o.stepFactor > 1 ? static_cast<size_t>(static_cast<double>(size) * o.stepFactor)
                                         : size + o.stepBytes;
    if (next <= size) break;  // a factor on 0 or 1 bytes: avoid looping forever
    size = next;
  }
  return sizes;
}

/// --device cuda|hip|gpu: the vendor's GPU runtime, with this process bound to device localRank % device
/// count (before the communicator is made: hetccl binds a GPU rank to the current device) and the stream
/// of every call. Empty (null runtime and stream) for host buffers.
class DeviceSetup {
 public:
  DeviceSetup(const PerfOptions& o, int localRank) {
    if (o.buffers == BufferPlace::Host) return;
    const char* env = std::getenv("HETCCL_DEVICE");
    const std::string hetcclDevice = env ? env : "";
    GpuVendor vendor = o.buffers == BufferPlace::Hip ? GpuVendor::Hip : GpuVendor::Cuda;
    if (o.buffers == BufferPlace::Gpu) {
      const GpuChoice choice = chooseGpuVendor(hetcclDevice, gpuRuntimeUnusableReason);
      vendor = choice.vendor;
      choice_ = "--device gpu: " + choice.reason;
    } else {
      const GpuRuntimeSpec& mine = gpuRuntimeSpec(vendor);
      const GpuRuntimeSpec& other = gpuRuntimeSpec(vendor == GpuVendor::Hip ? GpuVendor::Cuda : GpuVendor::Hip);
      if (hetcclDevice == other.device)  // hetccl would make ranks of the other vendor: they cannot read these buffers
        throw std::runtime_error("--device " + mine.device + ", but HETCCL_DEVICE=" + other.device + " makes " +
                                 other.displayName + " ranks: use --device " + other.device + " or -G");
    }
    try {
      gpu_ = &GpuRuntimeApi::instance(vendor);
      gpu_->setDevice(localRank % gpu_->deviceCount());
      stream_ = gpu_->createStream();
    } catch (const std::exception& e) {
      if (choice_.empty()) throw;
      throw std::runtime_error(choice_ + ": " + e.what());
    }
  }
  ~DeviceSetup() {
    if (gpu_) gpu_->destroyStream(stream_);
  }
  DeviceSetup(const DeviceSetup&) = delete;
  DeviceSetup& operator=(const DeviceSetup&) = delete;

  GpuRuntimeApi* gpu() const { return gpu_; }
  void* stream() const { return stream_; }
  /// For -G / --device gpu: "--device gpu: <why this vendor>"; else empty.
  const std::string& choice() const { return choice_; }

 private:
  GpuRuntimeApi* gpu_ = nullptr;
  void* stream_ = nullptr;
  std::string choice_;
};

/// Device buffers need a GPU communicator: a host one (HETCCL_DEVICE=host, or the vendor's plugin not
/// loaded) would read device pointers as host memory. Throws std::runtime_error saying so.
void requireGpuCommunicator(hetcclComm_t comm, int rank, const GpuRuntimeSpec& spec) {
  int bound = -1;
  checkResult(hetcclCommCuDevice(comm, &bound), "hetcclCommCuDevice", comm);
  if (bound < 0)
    throw std::runtime_error("rank " + std::to_string(rank) + ": --device " + spec.device +
                             ", but the communicator holds host ranks (HETCCL_DEVICE=host, or the " + spec.displayName +
                             " plugin " + spec.plugin + " did not load: see HETCCL_DEBUG=INFO)");
}

int runPerf(const PerfOptions& o) {
  const tools::LaunchEnv env = tools::readLaunchEnv();
  const auto collective = makeCollective(o.collective);
  if (collective->usesRoot() && o.root >= env.size)
    throw std::invalid_argument("-r " + std::to_string(o.root) + " is not a rank of " + std::to_string(env.size));

  const DeviceSetup device(o, env.localRank);
  hetcclComm_t comm = nullptr;
  checkResult(hetcclCommInitRank(&comm, env.size, env.id, env.rank), "hetcclCommInitRank", nullptr);
  try {
    RunContext ctx{comm, env.rank, env.size, o.root, o.type, o.op, hetcclSum, device.stream()};
    ctx.redOp = makeRedOp(o, comm, env.rank);
    if (device.gpu()) requireGpuCommunicator(comm, env.rank, device.gpu()->spec());
    PerfRun run;
    run.collective = o.collective;
    run.typeName = o.type.name;
    run.opName = collective->usesOp() ? opName(o.op) : "none";
    run.root = collective->usesRoot() ? o.root : -1;
    run.nranks = env.size;
    if (device.gpu()) {
      run.buffers = device.gpu()->spec().device;
      run.buffersName = device.gpu()->spec().displayName;
      run.buffersChoice = device.choice();
    }
    gatherRanks(comm, env.size, device.gpu() ? device.gpu()->spec().device : "gpu", run);
    const bool printing = env.rank == 0;
    if (printing) printHeader(stdout, o, run);

    PerfRunner runner(o, *collective, ctx, device.gpu());
    for (size_t bytes : sweepSizes(o)) {
      run.sizes.push_back(runner.measure(bytes));
      if (printing) printRow(stdout, run, run.sizes.back());
    }
    if (printing) {
      printFooter(stdout, run);
      if (!o.jsonPath.empty()) writeTextFile(o.jsonPath, toJson(o, run));
      if (!o.plotPath.empty()) writeTextFile(o.plotPath, toSvgPlot(run));
    }
    if (printing) printVerdict(stdout, o, run, onlineCores());
    if (o.op == OpKind::PreMulSum) checkResult(hetcclRedOpDestroy(ctx.redOp, comm), "hetcclRedOpDestroy", comm);
    hetcclComm_t done = comm;
    comm = nullptr;  // freed by destroy even when it reports an error: never abort it afterwards
    checkResult(hetcclCommDestroy(done), "hetcclCommDestroy", nullptr);
    const int64_t here = run.wrongHere();  // the verdict: never through hetccl
    if (here > 0)
      std::fprintf(stderr, "hetccl-perf: rank %d: FAILED: %lld wrong elements\n", env.rank, static_cast<long long>(here));
    return here > 0 || run.totalWrong() > 0 ? 1 : 0;
  } catch (...) {
    hetcclCommAbort(comm);  // leave promptly: peers see a closed connection and report this rank
    throw;
  }
}

}  // namespace
}  // namespace hetccl::perf

int main(int argc, char** argv) {
  using namespace hetccl::perf;
  PerfOptions options;
  try {
    options = parsePerfOptions(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-perf: %s\n%s", e.what(), perfUsage().c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(perfUsage().c_str(), stdout);
    return 0;
  }
  try {
    return runPerf(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-perf: %s\n", e.what());
    return 2;
  }
}
